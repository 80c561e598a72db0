"""The legacy memory stores (seed 003; docs/legacy-stores.md) as a `MemoryBackend`.

A target is one configured store (LEGACY_STORES_AGENTS) for the subject's scope (from the
scope template); its items are the files in that scope. Nothing here is audited: the
operations layer that calls it (`legacy_ops`) audits every change with its source.

What the source can do is `CAPABILITIES`; what the portal may do in one store is its
privileges there (`writable`: WRITE MEMORY STORE), read from Unity Catalog's effective
permissions and kept for `PRIVILEGES_TTL_SECONDS`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping

from memory_ui.sources.legacy import LegacyForbidden, LegacyNotFound, LegacyStoreError, scope_for
from memory_ui.sources.legacy.client import LegacyStoresClient
from memory_ui.sources.legacy.types import MemoryEntry
from memory_ui.sources.protocol import (
    Capability,
    Erasure,
    Item,
    ItemsPage,
    Outcome,
    Preview,
    SourceTarget,
    Subject,
    Unsupported,
)

logger = logging.getLogger("memory_ui.memory.legacy")

SOURCE = "legacy"
SEARCH_TOP_K = 50  # the most one search call returns (seed 003)
CAPABILITIES = (
    Capability.LIST
    | Capability.SEARCH
    | Capability.APPEND
    | Capability.EDIT_ITEM
    | Capability.DELETE_ITEM
    | Capability.RESTORE_ITEM
    | Capability.CLEAR_TARGET
    | Capability.ERASE_SUBJECT
    | Capability.EXPORT
)
MISSING = {
    Capability.IMPORT: "The legacy memory stores cannot import a markdown document.",
    Capability.CONDITIONAL_WRITE: (
        "The legacy memory stores have no version check of their own: just before saving "
        "an edit, the portal reads the file again and saves only if it is still as you "
        "opened it. A change landing in the moment between that check and the save is "
        "overwritten by a whole-file edit."
    ),
}
WRITE_PRIVILEGE = "WRITE MEMORY STORE"
PRIVILEGES_TTL_SECONDS = 60.0  # a grant an operator changes shows within a minute
READ_ONLY_REASON = (
    "The portal may only read this store (it lacks WRITE MEMORY STORE): its files can be "
    "read, downloaded and moved into your current memory, not changed here."
)
FORBIDDEN_REASON = "The portal may not change this store (it lacks WRITE MEMORY STORE)."
NO_ACCESS_REASON = "The portal has no access"  # the store refuses it even a read
GONE_REASON = "The store no longer exists."
CHANGED_REASON = "Changed since the export; kept."
CONVERSATIONS_REASON = "The legacy stores cannot list conversations by scope."
CONVERSATIONS = Outcome(None, "conversations", "not possible", CONVERSATIONS_REASON)
APPEND_PATH = "/memories/notes.md"  # where an append goes when the target has no item named


# Whether a file may be erased: it is still what the export handed over.
type Unchanged = Callable[[SourceTarget, Item], bool]


def _item(entry: MemoryEntry) -> Item:
    return Item(
        key=entry.path,
        description=entry.description,
        updated=entry.update_time,
        text=entry.contents,
        has_text=entry.has_contents,
    )


class LegacyBackend:
    source = SOURCE
    capabilities = CAPABILITIES

    def __init__(
        self,
        client: LegacyStoresClient,
        stores: Mapping[str, str],
        scope_template: str,
        owners: Mapping[str, str] | None = None,
    ) -> None:
        """`stores`: agent name -> store full name (settings.LEGACY_STORES_AGENTS);
        `owners`: every store the portal knows of -> whom to ask (LEGACY_STORES_KNOWN)."""
        self._client = client
        self._stores = dict(stores)
        self._owners = dict(owners or {})
        self._scope_template = scope_template
        self._writable: dict[str, tuple[float, bool]] = {}  # store -> (expires, writable)
        self._writable_lock = threading.Lock()

    def missing_reason(self, capability: Capability) -> str:
        return MISSING.get(capability, "The legacy memory stores do not allow this.")

    def _scope(self, subject: Subject) -> str:
        return scope_for(self._scope_template, upn=subject.upn, oid=subject.oid)

    def _target(self, agent: str, full_name: str, description: str = "") -> SourceTarget:
        return SourceTarget(SOURCE, full_name, full_name, description, agent)

    def configured_targets(self) -> list[SourceTarget]:
        """The configured stores, without asking them anything (no description)."""
        return [self._target(agent, full_name) for agent, full_name in self._stores.items()]

    def unreachable_targets(self) -> list[SourceTarget]:
        """The stores the portal knows of (LEGACY_STORES_KNOWN) but is not configured to
        reach: an erasure names them, with whom to ask, without calling them."""
        configured = set(self._stores.values())
        return [self._target("", key) for key in self._owners if key not in configured]

    def owner(self, target: SourceTarget) -> str:
        """Whom to ask about the store ("" when nobody said)."""
        return self._owners.get(target.key, "")

    # --- required ---------------------------------------------------------------------------

    def list_targets(self, subject: Subject) -> list[SourceTarget]:
        """The configured stores the portal may read, each once (one call per store, which
        the configuration bounds; `describe` lets a caller make them concurrently)."""
        described = (self.describe(target) for target in self.configured_targets())
        return [target for target in described if target is not None]

    def describe(self, target: SourceTarget) -> SourceTarget | None:
        """The configured store with its description, or None when the portal may not read
        it: left out and logged, since an operator has to grant it, not the user."""
        try:
            store = self._client.get_store(target.key)
        except (LegacyForbidden, LegacyNotFound) as exc:
            logger.warning("Legacy store %s not readable: %s", target.key, exc.error_code)
            return None
        return self._target(target.agent or "", target.key, store.description)

    def writable(self, target: SourceTarget) -> bool:
        """Whether the portal holds WRITE MEMORY STORE on the store (cached a minute, so a
        store page costs no extra call). Unknown (the permissions call failed) counts as
        writable: the store itself then refuses a write with a 403, which pages answer."""
        now = time.monotonic()
        with self._writable_lock:
            cached = self._writable.get(target.key)
        if cached and cached[0] > now:
            return cached[1]
        try:
            writable = WRITE_PRIVILEGE in self._client.store_privileges(target.key)
        except LegacyStoreError as exc:
            logger.warning("Legacy store %s privileges unknown: %s", target.key, exc.error_code)
            return True
        with self._writable_lock:
            self._writable[target.key] = (now + PRIVILEGES_TTL_SECONDS, writable)
        return writable

    def refused_write(self, target: SourceTarget) -> None:
        """A write the store refused (403): read-only from now on, until the cache expires."""
        with self._writable_lock:
            self._writable[target.key] = (time.monotonic() + PRIVILEGES_TTL_SECONDS, False)

    def read_page(
        self, subject: Subject, target: SourceTarget, cursor: str | None = None
    ) -> ItemsPage:
        """One page of the target's files, metadata only (no contents: `read_item`)."""
        page = self._client.list_entries(target.key, self._scope(subject), page_token=cursor)
        return ItemsPage(target, tuple(_item(e) for e in page.items), page.next_page_token)

    def read_item(self, subject: Subject, target: SourceTarget, key: str) -> Item:
        return _item(self._client.get_entry(target.key, self._scope(subject), key))

    # --- capabilities -----------------------------------------------------------------------

    def search(self, subject: Subject, query: str) -> list[tuple[SourceTarget, Item]]:
        scope = self._scope(subject)
        found = []
        for target in self.configured_targets():
            try:
                entries = self._client.search(target.key, scope, query, top_k=SEARCH_TOP_K)
            except (LegacyForbidden, LegacyNotFound) as exc:
                # As in list_targets: a store the portal may not read is left out.
                logger.warning("Legacy store %s not searchable: %s", target.key, exc.error_code)
                continue
            found += [(target, _item(entry)) for entry in entries]
        return found

    def append(self, subject: Subject, target: SourceTarget, text: str, reason: str) -> Item:
        """Appends to the target's notes file, creating it on first use. `reason` is not
        stored by the source; the caller audits it."""
        scope = self._scope(subject)
        try:
            return _item(self._client.insert(target.key, scope, APPEND_PATH, text))
        except LegacyNotFound:
            return _item(self._client.create_entry(target.key, scope, APPEND_PATH, text))

    def edit_item(
        self, subject: Subject, target: SourceTarget, key: str, old: str, new: str
    ) -> Item:
        entry = self._client.str_replace(target.key, self._scope(subject), key, old, new)
        return _item(entry)

    def replace_item(self, subject: Subject, target: SourceTarget, key: str, text: str) -> Item:
        return _item(self._client.replace_all(target.key, self._scope(subject), key, text))

    def delete_item(self, subject: Subject, target: SourceTarget, key: str) -> Item:
        """Deletes the file and returns it as it was, which is what `restore_item` needs."""
        scope = self._scope(subject)
        before = _item(self._client.get_entry(target.key, scope, key))
        self._client.delete_entry(target.key, scope, key)
        return before

    def restore_item(self, subject: Subject, target: SourceTarget, item: Item) -> Item:
        """Undo of a delete: the same path re-created with the old contents and description
        (LegacyConflict when something was written there meanwhile: nothing overwritten)."""
        created = self._client.create_entry(
            target.key, self._scope(subject), item.key, item.text or "", item.description
        )
        return _item(created)

    def clear_target(
        self, subject: Subject, target: SourceTarget, unchanged: Unchanged | None = None
    ) -> list[Outcome]:
        """Deletes every file of the subject in the target; one outcome per file. With
        `unchanged`, each file is read first and deleted only if `unchanged(target, item)`
        (else "changed", kept): the stores have no precondition on a delete."""
        scope = self._scope(subject)
        return [self._delete(target, scope, key, unchanged) for key in self._keys(target, scope)]

    def _keys(self, target: SourceTarget, scope: str) -> list[str]:
        keys: list[str] = []
        cursor: str | None = None
        while True:
            page = self._client.list_entries(target.key, scope, page_token=cursor)
            keys += [entry.path for entry in page.items]
            cursor = page.next_page_token
            if cursor is None:
                return keys

    def _delete(
        self, target: SourceTarget, scope: str, key: str, unchanged: Unchanged | None
    ) -> Outcome:
        try:
            if unchanged is not None:
                item = _item(self._client.get_entry(target.key, scope, key))
                if not unchanged(target, item):
                    return Outcome(target, key, "changed", CHANGED_REASON)
            self._client.delete_entry(target.key, scope, key)
        except LegacyNotFound:
            return Outcome(target, key, "erased", "already gone")
        except LegacyForbidden:
            self.refused_write(target)
            return Outcome(target, key, "not possible", FORBIDDEN_REASON)
        except LegacyStoreError as exc:
            return Outcome(target, key, "failed", exc.message)
        return Outcome(target, key, "erased")

    def plan_erasure(self, subject: Subject) -> Erasure:
        """What `erase_subject` would cover, changing nothing: a row per store the portal
        knows of with the subject's files counted ("to erase", or "not possible" and why),
        then conversations."""
        scope = self._scope(subject)
        rows = []
        for target in self.configured_targets():
            try:
                keys = self._keys(target, scope)
            except LegacyStoreError as exc:
                rows.append(self._unlisted(target, exc))
                continue
            if self.writable(target):
                rows.append(Outcome(target, target.key, "to erase", "", total=len(keys)))
            else:
                reason = f"{FORBIDDEN_REASON.removesuffix('.')}; {self._ask(target)}."
                rows.append(Outcome(target, target.key, "not possible", reason, total=len(keys)))
        return Erasure((*rows, *self._unreachable(), CONVERSATIONS))

    def erase_subject(self, subject: Subject, unchanged: Unchanged | None = None) -> Erasure:
        """Every file of the subject in every configured store (with `unchanged`: only the
        files it accepts, as `clear_target`): a row per store, saying how many were erased
        and what was left and why; a read-only store is not asked to delete. Then a row for
        each store known but not reachable, with whom to ask, and one for conversations."""
        scope = self._scope(subject)
        outcomes: list[Outcome] = []
        for target in self.configured_targets():
            try:
                if self.writable(target):
                    rows = self.clear_target(subject, target, unchanged)
                else:
                    rows = [
                        Outcome(target, key, "not possible", FORBIDDEN_REASON)
                        for key in self._keys(target, scope)
                    ]
            except LegacyStoreError as exc:
                outcomes.append(self._unlisted(target, exc))
                continue
            outcomes.append(_store_outcome(target, rows, self._ask(target)))
        return Erasure((*outcomes, *self._unreachable(), CONVERSATIONS))

    def _ask(self, target: SourceTarget) -> str:
        owner = self.owner(target)
        return f"ask {owner}" if owner else "ask the store's owner"

    def _no_access(self, target: SourceTarget) -> Outcome:
        reason = f"{NO_ACCESS_REASON}; {self._ask(target)}."
        return Outcome(target, target.key, "not possible", reason)

    def _unlisted(self, target: SourceTarget, error: LegacyStoreError) -> Outcome:
        """A store's row when its files could not even be listed."""
        if isinstance(error, LegacyForbidden):  # no READ MEMORY STORE
            return self._no_access(target)
        if isinstance(error, LegacyNotFound):
            return Outcome(target, target.key, "not possible", GONE_REASON)
        return Outcome(target, target.key, "failed", error.message)

    def _unreachable(self) -> list[Outcome]:
        return [self._no_access(target) for target in self.unreachable_targets()]

    def export_items(self, subject: Subject, target: SourceTarget) -> list[Item]:
        """Every file of the subject in one store, with contents (one read per file)."""
        scope = self._scope(subject)
        return [
            _item(self._client.get_entry(target.key, scope, key))
            for key in self._keys(target, scope)
        ]

    def export(self, subject: Subject, target: SourceTarget) -> str:
        """The subject's files of one store as one markdown document, file by file."""
        return export_markdown(target, self.export_items(subject, target))

    def preview(self, subject: Subject, target: SourceTarget, question: str, limit: int) -> Preview:
        raise Unsupported(self.missing_reason(Capability.PREVIEW))

    def report(
        self, subject: Subject, target: SourceTarget, reference: str, key: str, correction: str
    ) -> str:
        raise Unsupported(self.missing_reason(Capability.PREVIEW))


def export_markdown(target: SourceTarget, items: list[Item]) -> str:
    """A store's files as one markdown document: a heading per path, then its text."""
    parts = [f"# {target.title}\n"]
    for item in items:
        described = f"\n_{item.description}_\n" if item.description else ""
        parts.append(f"\n## {item.key}\n{described}\n{item.text or ''}\n")
    return "".join(parts)


def _store_outcome(target: SourceTarget, rows: list[Outcome], ask: str) -> Outcome:
    """One store's row of an erasure, from its files' rows: "erased" only when nothing is
    left; "partly" when some were, saying what was left and why; when none could be, "not
    possible" (the portal may not change the store), "changed" (all changed since the
    export) or "failed", saying why. `ask`: whom to ask about the store."""
    total = len(rows)
    erased = sum(row.result == "erased" for row in rows)
    if erased == total:
        reason = f"{_files(total)} erased." if total else "No files about this person."
        return Outcome(target, target.key, "erased", reason, erased, total)
    left = "; ".join(f"{count} left: {why}" for why, count in _left(rows, ask).items())
    if erased:
        reason = f"{erased} of {_files(total)} erased; {left}."
        return Outcome(target, target.key, "partly", reason, erased, total)
    kinds = {row.result for row in rows}
    result = kinds.pop() if len(kinds) == 1 and kinds <= {"changed", "not possible"} else "failed"
    return Outcome(target, target.key, result, f"None of {_files(total)} erased; {left}.", 0, total)


def _left(rows: list[Outcome], ask: str) -> dict[str, int]:
    """Why files were left in a store, each cause with how many it kept."""
    causes: dict[str, int] = {}
    for row in rows:
        if row.result == "erased":
            continue
        if row.result == "changed":
            why = "changed since the export, kept: export again, then erase"
        else:  # not possible (the store refused the portal) or failed: the store's reason
            reason = (row.reason or row.result).rstrip(".")
            why = reason[:1].lower() + reason[1:]
            why += f", {ask}" if row.result == "not possible" else ""
        causes[why] = causes.get(why, 0) + 1
    return causes


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"
