"""DRAFT: the legacy memory stores (seed 003; docs/legacy-stores.md) as a `MemoryBackend`.

A target is one configured store (LEGACY_STORES_AGENTS) for the subject's scope (from the
scope template); its items are the files in that scope. Not wired into views yet, and not
audited yet: the operations layer that calls it must audit every change with its source.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from memory_ui.legacy import LegacyForbidden, LegacyNotFound, LegacyStoreError, scope_for
from memory_ui.legacy.client import LegacyStoresClient
from memory_ui.legacy.types import MemoryEntry
from memory_ui.memory.backends import (
    Capability,
    Erasure,
    Item,
    Outcome,
    Page,
    Subject,
    Target,
)

logger = logging.getLogger("memory_ui.memory.legacy")

SOURCE = "legacy"
SEARCH_TOP_K = 50  # the most one search call returns (seed 003)
CAPABILITIES = (
    Capability.SEARCH
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
        "The legacy memory stores have no version check: a change made elsewhere meanwhile "
        "is overwritten by a whole-file edit."
    ),
}
FORBIDDEN_REASON = "The portal may not change this store (it lacks WRITE MEMORY STORE)."
GONE_REASON = "The store no longer exists."
CONVERSATIONS_REASON = "The legacy stores cannot list conversations by scope."
APPEND_PATH = "/memories/notes.md"  # where an append goes when the target has no item named


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
        self, client: LegacyStoresClient, stores: Mapping[str, str], scope_template: str
    ) -> None:
        """`stores`: agent name -> store full name (settings.LEGACY_STORES_AGENTS)."""
        self._client = client
        self._stores = dict(stores)
        self._scope_template = scope_template

    def missing_reason(self, capability: Capability) -> str:
        return MISSING.get(capability, "The legacy memory stores do not allow this.")

    def _scope(self, subject: Subject) -> str:
        return scope_for(self._scope_template, upn=subject.upn, oid=subject.oid)

    def _target(self, agent: str, full_name: str, description: str = "") -> Target:
        return Target(SOURCE, full_name, full_name, description, agent)

    def configured_targets(self) -> list[Target]:
        """The configured stores, without asking them anything (no description)."""
        return [self._target(agent, full_name) for agent, full_name in self._stores.items()]

    # --- required ---------------------------------------------------------------------------

    def list_targets(self, subject: Subject) -> list[Target]:
        """The configured stores the portal may read, each once (one call per store, which
        the configuration bounds). A store the portal may not read is left out and logged:
        an operator has to grant it, the user can do nothing about it."""
        targets = []
        for agent, full_name in self._stores.items():
            try:
                store = self._client.get_store(full_name)
            except (LegacyForbidden, LegacyNotFound) as exc:
                logger.warning("Legacy store %s not readable: %s", full_name, exc.error_code)
                continue
            targets.append(self._target(agent, full_name, store.description))
        return targets

    def read_page(self, subject: Subject, target: Target, cursor: str | None = None) -> Page:
        """One page of the target's files, metadata only (no contents: `read_item`)."""
        page = self._client.list_entries(target.key, self._scope(subject), page_token=cursor)
        return Page(target, tuple(_item(e) for e in page.items), page.next_page_token)

    def read_item(self, subject: Subject, target: Target, key: str) -> Item:
        return _item(self._client.get_entry(target.key, self._scope(subject), key))

    # --- capabilities -----------------------------------------------------------------------

    def search(self, subject: Subject, query: str) -> list[tuple[Target, Item]]:
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

    def append(self, subject: Subject, target: Target, text: str, reason: str) -> Item:
        """Appends to the target's notes file, creating it on first use. `reason` is not
        stored by the source; the caller audits it."""
        scope = self._scope(subject)
        try:
            return _item(self._client.insert(target.key, scope, APPEND_PATH, text))
        except LegacyNotFound:
            return _item(self._client.create_entry(target.key, scope, APPEND_PATH, text))

    def edit_item(self, subject: Subject, target: Target, key: str, old: str, new: str) -> Item:
        entry = self._client.str_replace(target.key, self._scope(subject), key, old, new)
        return _item(entry)

    def replace_item(self, subject: Subject, target: Target, key: str, text: str) -> Item:
        return _item(self._client.replace_all(target.key, self._scope(subject), key, text))

    def delete_item(self, subject: Subject, target: Target, key: str) -> Item:
        """Deletes the file and returns it as it was, which is what `restore_item` needs."""
        scope = self._scope(subject)
        before = _item(self._client.get_entry(target.key, scope, key))
        self._client.delete_entry(target.key, scope, key)
        return before

    def restore_item(self, subject: Subject, target: Target, item: Item) -> Item:
        """Undo of a delete: the same path re-created with the old contents and description
        (LegacyConflict when something was written there meanwhile: nothing overwritten)."""
        created = self._client.create_entry(
            target.key, self._scope(subject), item.key, item.text or "", item.description
        )
        return _item(created)

    def clear_target(self, subject: Subject, target: Target) -> list[Outcome]:
        """Deletes every file of the subject in the target; one outcome per file."""
        scope = self._scope(subject)
        keys: list[str] = []
        cursor: str | None = None
        while True:
            page = self._client.list_entries(target.key, scope, page_token=cursor)
            keys += [entry.path for entry in page.items]
            cursor = page.next_page_token
            if cursor is None:
                break
        outcomes = []
        for key in keys:
            try:
                self._client.delete_entry(target.key, scope, key)
            except LegacyNotFound:
                outcomes.append(Outcome(target, key, "erased", "already gone"))
            except LegacyStoreError as exc:
                outcomes.append(Outcome(target, key, "failed", exc.message))
            else:
                outcomes.append(Outcome(target, key, "erased"))
        return outcomes

    def erase_subject(self, subject: Subject) -> Erasure:
        """Every file of the subject in every configured store, then one row saying the
        conversations could not be erased."""
        outcomes: list[Outcome] = []
        for target in self.configured_targets():
            try:
                rows = self.clear_target(subject, target)
            except LegacyForbidden:
                outcomes.append(Outcome(target, target.key, "not possible", FORBIDDEN_REASON))
                continue
            except LegacyNotFound:
                outcomes.append(Outcome(target, target.key, "not possible", GONE_REASON))
                continue
            except LegacyStoreError as exc:
                outcomes.append(Outcome(target, target.key, "failed", exc.message))
                continue
            failed = [row for row in rows if row.result == "failed"]
            result = "partly" if failed else "erased"
            outcomes.append(Outcome(target, target.key, result, f"{len(rows)} files"))
        outcomes.append(Outcome(None, "conversations", "not possible", CONVERSATIONS_REASON))
        return Erasure(tuple(outcomes))

    def export(self, subject: Subject, target: Target) -> str:
        """The subject's files of one store as one markdown document, file by file."""
        scope = self._scope(subject)
        parts = [f"# {target.title}\n"]
        cursor: str | None = None
        while True:
            page = self._client.list_entries(target.key, scope, page_token=cursor)
            for entry in page.items:
                full = self._client.get_entry(target.key, scope, entry.path)
                described = f"\n_{full.description}_\n" if full.description else ""
                parts.append(f"\n## {full.path}\n{described}\n{full.contents or ''}\n")
            cursor = page.next_page_token
            if cursor is None:
                return "".join(parts)
