"""Business steps on a user's files in the legacy memory stores (seed 003;
docs/legacy-stores.md): the one place the web layer calls for them, so that no change
reaches a store unaudited.

Over 400 lines: every legacy store call and its audit event in one place, for that reason.

Which stores a user has is configuration (LEGACY_STORES_AGENTS: agent -> store), and the
`scope` inside each comes from LEGACY_STORES_SCOPE_TEMPLATE over the verified identity, never
from the browser: a store key a view receives is only ever looked up among the configured
ones (`legacy_store`). Every change, and every read support staff make for someone, is
audited with source "legacy" (agent_name: the store's agent, agent_object_id: the store's
full name; never a path or content). Failures are `LegacyStoreError`s, which carry a
user-safe `message` and a `portal_status` like CoreAPI's errors.

Over 400 lines: it is the one door to the stores, so that every step through it is seen
to be audited; it is to be split when the source becomes its own package (issue 27).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from django.conf import settings

from memory_ui import auth, budget
from memory_ui.audit import Action
from memory_ui.budget import fan_out
from memory_ui.documents.versions import Version
from memory_ui.identity import Actor
from memory_ui.resurfacing import deletions_forget, deletions_record
from memory_ui.sources import generic
from memory_ui.sources.legacy import (
    LegacyBadRequest,
    LegacyForbidden,
    LegacyNotFound,
    LegacyStoreError,
    LegacyUnauthorized,
    LegacyUnavailable,
    parse_store_agents,
    parse_store_owners,
)
from memory_ui.sources.legacy.adapter import (
    READ_ONLY_REASON,
    SOURCE,
    WRITES,
    LegacyBackend,
    export_markdown,
)
from memory_ui.sources.legacy.client import LegacyStoresClient, client_from_settings
from memory_ui.sources.legacy.values import (
    CHANGED_MESSAGE,
    NO_TOKEN,
    NOT_EXPORTED,
    OID_UNKNOWN,
    ExportFile,
    FileChanged,
    Hit,
    NotMatchedOnce,
    file_version,
)
from memory_ui.sources.protocol import (
    Capability,
    Erasure,
    Item,
    ItemsPage,
    Outcome,
    SourceTarget,
    Subject,
)

logger = logging.getLogger("memory_ui.memory.legacy")

# Actions whose 403 means the store refuses the portal writes (not reads).
WRITE_ACTIONS = {Action.APPEND, Action.EDIT, Action.DELETE_ENTRY, Action.UNDO, Action.CLEAR}

# Said beside "being turned down", which the pages show once, in their own words.
SYSTEM_NOTICE = "Move what you want to keep into your current memory."


@dataclass(frozen=True)
class Store:
    """One configured legacy store as the actor may see it, with what it allows."""

    target: SourceTarget
    capabilities: Capability
    writable: bool = True  # the portal holds WRITE MEMORY STORE on it
    # The agent's display name, where the web layer knows the person can read that agent.
    agent_title: str = ""

    @property
    def key(self) -> str:
        """The store's full name: what URLs and forms carry (looked up, never trusted)."""
        return self.target.key

    @property
    def agent(self) -> str | None:
        return self.target.agent

    @property
    def title(self) -> str:
        """The store's name for people: its agent's ("Travel Planner"), the display name
        where known, else the agent's name made readable ("travel-planner": "Travel
        Planner"); the full name only for a store without an agent. The full name is a
        technical detail the pages show behind "Details"."""
        if self.agent_title:
            return self.agent_title
        words = (self.agent or "").replace("-", " ").replace("_", " ").split()
        return " ".join(word[:1].upper() + word[1:] for word in words) or self.key

    def allows(self, capability: Capability) -> bool:
        return capability in self.capabilities and not self.refuses(capability)

    def refuses(self, capability: Capability) -> bool:
        """The source can, but this store does not let the portal (no write privilege)."""
        return capability in self.capabilities and capability in WRITES and not self.writable

    def missing(self, capability: Capability) -> str:
        """The one sentence the UI shows where the action is missing."""
        if self.refuses(capability):
            return READ_ONLY_REASON
        return _backend().missing_reason(capability)


# --- configuration -------------------------------------------------------------------------


def legacy_enabled() -> bool:
    return bool(settings.LEGACY_STORES_BASE_URL)


def _token() -> str:
    """The portal's own token for the stores. Not getting one is the portal's failure, not
    the user's sign-in: it is reported like credentials the stores refused."""
    try:
        return auth.legacy_app_token()
    except auth.SignInFailed as exc:
        # The sign-in service did not answer (requests' errors are OSErrors): try again.
        if isinstance(exc.__cause__, OSError):
            raise LegacyUnavailable() from exc
        logger.error("No token for the legacy stores: %s", type(exc).__name__)
        raise LegacyUnauthorized(NO_TOKEN) from exc


@functools.cache
def _client() -> LegacyStoresClient | None:
    """The process-wide client (one pooled session); calls fit the request's deadline."""
    return client_from_settings(settings, _token, budget.remaining)


@functools.cache
def _backend() -> LegacyBackend:
    client = _client()
    if client is None:
        raise LegacyStoreError("The legacy memory stores are not configured.")
    stores = parse_store_agents(settings.LEGACY_STORES_AGENTS)
    owners = parse_store_owners(settings.LEGACY_STORES_KNOWN)
    return LegacyBackend(client, stores, settings.LEGACY_STORES_SCOPE_TEMPLATE, owners)


def reset_caches() -> None:
    """For tests that change LEGACY_STORES_* settings."""
    _backend.cache_clear()
    _client.cache_clear()


def subject_of(actor: Actor) -> Subject:
    """Whose files: the signed-in user, or the user support staff act for. The portal does
    not know that user's oid, so a scope template using {oid} cannot serve support."""
    subject = generic.subject_of(actor)
    if not subject.oid and "{oid}" in settings.LEGACY_STORES_SCOPE_TEMPLATE:
        raise LegacyStoreError(OID_UNKNOWN)
    return subject


def _audit(
    actor: Actor,
    action: str,
    store: Store | None,
    *,
    before: str | None = None,
    after: str | None = None,
    error: LegacyStoreError | None = None,
    count: int | None = None,
) -> None:
    target = store.target if store else None
    generic.audit(
        actor, SOURCE, action, target, before=before, after=after, error=error, count=count
    )


def _audited[T](actor: Actor, action: str, store: Store, step: Callable[[], T]) -> T:
    """Runs a step whose failure is audited as `action`'s (success is audited by the caller,
    which knows the before and after)."""
    try:
        return step()
    except LegacyStoreError as exc:
        if isinstance(exc, LegacyForbidden) and action in WRITE_ACTIONS:
            _backend().refused_write(store.target)  # offered no more until the grant changes
        _audit(actor, action, store, error=exc)
        raise


def _store(target: SourceTarget) -> Store:
    backend = _backend()
    return Store(target, backend.capabilities, backend.writable(target))


# --- reading -------------------------------------------------------------------------------


def legacy_stores(actor: Actor) -> list[Store]:
    """The configured stores the portal may read, with their capabilities and whether the
    portal may write there (two store calls each, a few stores at a time: `fan_out`).
    Empty when the source is off."""
    if not legacy_enabled():
        return []
    subject_of(actor)  # refuses a subject whose scope the portal cannot make
    backend = _backend()

    def readable(target: SourceTarget) -> Store | None:
        described = backend.describe(target)
        return None if described is None else _store(described)

    return [store for store in fan_out(readable, backend.configured_targets()) if store]


def legacy_store(actor: Actor, key: str) -> Store | None:
    """The configured store named `key` (from a URL or form), or None: no store call but
    its privileges (`LegacyBackend.writable`, kept a minute)."""
    if not legacy_enabled():
        return None
    return next((_store(t) for t in _backend().configured_targets() if t.key == key), None)


def legacy_store_keys() -> frozenset[str]:
    """The configured stores' full names (their keys), asking them nothing (Activity's links
    to them); none while the setting is unreadable: the legacy pages say so, Activity not."""
    try:
        stores = parse_store_agents(settings.LEGACY_STORES_AGENTS) if legacy_enabled() else {}
    except ValueError:
        return frozenset()
    return frozenset(stores.values())


def legacy_files(actor: Actor, store: Store, page_token: str | None = None) -> ItemsPage:
    """One page of the actor's files in `store` (path, description, updated, has_text;
    no contents), in ONE entries-list call."""
    return _backend().read_page(subject_of(actor), store.target, page_token)


def legacy_file_read(actor: Actor, store: Store, path: str) -> Item:
    """One file with its contents and `version` (`file_version(...).token()`). Audited as a
    reveal when support staff read it for someone."""
    acting_for = bool(actor.subject_upn and actor.subject_upn != actor.who.upn)
    read = functools.partial(_backend().read_item, subject_of(actor), store.target, path)
    item = _audited(actor, Action.REVEAL, store, read) if acting_for else read()
    if acting_for:
        _audit(actor, Action.REVEAL, store, before=item.text)
    return replace(item, version=file_version(item).token())


def legacy_search(actor: Actor, query: str) -> list[Hit]:
    """entries:search in every store the portal may read (top_k 50 each), the store's
    order (best first) kept within a store."""
    if not legacy_enabled():
        return []
    found = _backend().search(subject_of(actor), query)
    return [Hit(_store(target), item) for target, item in found]


# --- writing -------------------------------------------------------------------------------


def _current(actor: Actor, action: str, store: Store, path: str) -> Item:
    """The file just before a write; a failure is audited as the write's."""
    read = functools.partial(_backend().read_item, subject_of(actor), store.target, path)
    return _audited(actor, action, store, read)


def _check_version(actor: Actor, store: Store, path: str, current: Item, started: Version) -> None:
    if file_version(current) != started:
        _audit(actor, Action.EDIT, store, error=LegacyStoreError(CHANGED_MESSAGE, status=409))
        raise FileChanged(current)


def legacy_file_replace(
    actor: Actor, store: Store, path: str, text: str, started_from: Version
) -> Item:
    """replace_all of the whole file, after reading it again and comparing update_time and
    hash with `started_from` (FileChanged on a mismatch: the source has no precondition,
    so a change landing between that read and the write is not detected)."""
    try:
        current = _current(actor, Action.EDIT, store, path)
    except LegacyNotFound:
        raise FileChanged(None) from None
    _check_version(actor, store, path, current, started_from)
    backend, subject = _backend(), subject_of(actor)
    after = _audited(
        actor, Action.EDIT, store, lambda: backend.replace_item(subject, store.target, path, text)
    )
    _audit(actor, Action.EDIT, store, before=current.text, after=after.text)
    return after


def legacy_entry_edit(
    actor: Actor, store: Store, path: str, old: str, new: str, started_from: Version | None = None
) -> Item:
    """str_replace of one entry's text (NotMatchedOnce unless `old` is there exactly once)."""
    try:
        current = _current(actor, Action.EDIT, store, path)
    except LegacyNotFound:
        raise FileChanged(None) from None
    if started_from is not None:
        _check_version(actor, store, path, current, started_from)
    if not old or (current.text or "").count(old) != 1:
        raise NotMatchedOnce()
    backend, subject = _backend(), subject_of(actor)
    try:
        after = _audited(
            actor,
            Action.EDIT,
            store,
            lambda: backend.edit_item(subject, store.target, path, old, new),
        )
    except LegacyBadRequest:
        # Changed between the read and the write: the store found no single match.
        raise NotMatchedOnce() from None
    _audit(actor, Action.EDIT, store, before=current.text, after=after.text)
    return after


def legacy_file_delete(actor: Actor, store: Store, path: str) -> Item:
    """Deletes the file; returns it as it was (contents, description): what Undo needs."""
    backend, subject = _backend(), subject_of(actor)
    before = _audited(
        actor, Action.DELETE_ENTRY, store, lambda: backend.delete_item(subject, store.target, path)
    )
    _audit(actor, Action.DELETE_ENTRY, store, before=before.text)
    deletions_record(subject.upn, SOURCE, [before.text or ""])
    return before


def legacy_file_restore(actor: Actor, store: Store, item: Item) -> Item:
    """Undo of a delete: re-creates the path (LegacyConflict if something is there now)."""
    backend, subject = _backend(), subject_of(actor)
    after = _audited(
        actor, Action.UNDO, store, lambda: backend.restore_item(subject, store.target, item)
    )
    _audit(actor, Action.UNDO, store, after=after.text)
    deletions_forget(subject.upn, SOURCE, [item.text or ""])
    return after


def legacy_store_clear(actor: Actor, store: Store) -> list[Outcome]:
    """Deletes every file of the actor's in `store`; one outcome per file. One event for
    the store (its count says how many files, its error how many failed)."""
    backend, subject = _backend(), subject_of(actor)
    rows = _audited(actor, Action.CLEAR, store, lambda: backend.clear_target(subject, store.target))
    kept = [row for row in rows if row.result != "erased"]  # failed, or refused (403)
    error = LegacyStoreError(f"{len(kept)} of {len(rows)} files not deleted") if kept else None
    _audit(actor, Action.CLEAR, store, error=error, count=len(rows))
    return rows


def legacy_export(actor: Actor, store: Store, path: str | None = None) -> str:
    """A store (or one file of it) as one markdown document. Audited."""
    backend, subject = _backend(), subject_of(actor)

    def read() -> list[Item]:
        if path is None:
            return backend.export_items(subject, store.target)
        return [backend.read_item(subject, store.target, path)]

    text = export_markdown(store.target, _audited(actor, Action.EXPORT, store, read))
    _audit(actor, Action.EXPORT, store, before=text)
    return text


def legacy_export_all(actor: Actor) -> list[ExportFile]:
    """One markdown file per store with files, for "Export everything", each with the
    version of every file in it (what an erasure must still find). Audited."""
    backend, subject = _backend(), subject_of(actor)
    files = []
    for store in legacy_stores(actor):
        read = functools.partial(backend.export_items, subject, store.target)
        items = _audited(actor, Action.EXPORT, store, read)
        if not items:
            continue
        text = export_markdown(store.target, items)
        _audit(actor, Action.EXPORT, store, before=text)
        versions = {item.key: file_version(item).token() for item in items}
        files.append(ExportFile(f"legacy-{store.key}.md", text, store.key, versions))
    return files


def legacy_erasure_plan(actor: Actor) -> Erasure:
    """What `legacy_erase_subject` would cover, changing nothing (it reads no contents)."""
    try:
        return _backend().plan_erasure(subject_of(actor))
    except LegacyStoreError as exc:  # a subject whose scope the portal cannot make
        return Erasure((Outcome(None, "stores", "not possible", exc.message),))


def legacy_erase_subject(actor: Actor, exported: Mapping[str, Mapping[str, str]] | None) -> Erasure:
    """Support's deletion request (actor.subject_upn) in this source: a row per store
    (erased / partly / changed / not possible and why) and one for conversations. Only
    files still as `exported` handed them over (store -> path -> version) are erased, as
    CoreAPI's clear refuses a memory changed since its export; None (the stores were not
    in the export) erases nothing. Audited per store."""
    try:
        subject = subject_of(actor)
        if exported is None:
            raise LegacyStoreError(NOT_EXPORTED, status=409)
    except LegacyStoreError as exc:
        _audit(actor, Action.ERASE, None, error=exc)
        return Erasure((Outcome(None, "stores", "not possible", exc.message),))

    def unchanged(target: SourceTarget, item: Item) -> bool:
        return exported.get(target.key, {}).get(item.key) == file_version(item).token()

    erasure = _backend().erase_subject(subject, unchanged)
    for row in erasure.outcomes:
        if row.target is None:
            continue
        failed = row.result != "erased"
        error = LegacyStoreError(row.reason or row.result) if failed else None
        _audit(actor, Action.ERASE, _store(row.target), error=error)
    return erasure
