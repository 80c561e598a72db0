"""The legacy memory stores' audited steps over everything a person has in them (seed 003;
docs/legacy-stores.md): "Export everything" and support's deletion request (`steps.py`),
and the process-wide adapter every other step reaches them through (`_backend`, wrapped
for pages, search and the move by `backend.py`, whose steps `sources.generic` audits).

Which stores a user has is configuration (LEGACY_STORES_AGENTS: agent -> store), and the
`scope` inside each comes from LEGACY_STORES_SCOPE_TEMPLATE over the verified identity, never
from the browser. Every step here is audited with source "legacy" (agent_name: the store's
agent, agent_object_id: the store's full name; never a path or content). Failures are
`LegacyStoreError`s, which carry a user-safe `message` and a `portal_status`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping

from django.conf import settings

from memory_ui import auth, budget, directory
from memory_ui.audit import Action
from memory_ui.budget import fan_out
from memory_ui.directory import DirectoryError, DirectoryUnavailable
from memory_ui.identity import Actor
from memory_ui.sources import generic
from memory_ui.sources.legacy import (
    LegacyStoreError,
    LegacyUnauthorized,
    LegacyUnavailable,
    parse_store_agents,
    parse_store_owners,
)
from memory_ui.sources.legacy.adapter import (
    SOURCE,
    LegacyBackend,
    export_markdown,
)
from memory_ui.sources.legacy.client import LegacyStoresClient, client_from_settings
from memory_ui.sources.legacy.values import (
    GRAPH_OFF,
    NO_TOKEN,
    NOT_EXPORTED,
    OID_UNKNOWN,
    ExportFile,
    file_version,
)
from memory_ui.sources.protocol import (
    Erasure,
    Item,
    Outcome,
    SourceTarget,
    Subject,
)

logger = logging.getLogger("memory_ui.memory.legacy")

# Said beside "being turned down", which the pages show once, in their own words.
SYSTEM_NOTICE = "Move what you want to keep into your current memory."


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
    """Whose files: the signed-in user, or the user support staff act for (`scoped`)."""
    return scoped(generic.subject_of(actor))


def scoped(subject: Subject) -> Subject:
    """`subject` with what the scope template needs. Support knows a person by UPN only, so
    a template using {oid} gets the object id from Microsoft Graph (memory_ui.directory);
    where Graph is off or finds none, the subject is refused saying why, never guessed."""
    if subject.oid or "{oid}" not in settings.LEGACY_STORES_SCOPE_TEMPLATE:
        return subject
    found = directory.configured()
    if found is None:
        raise LegacyStoreError(f"{OID_UNKNOWN} {GRAPH_OFF}")
    try:
        return Subject(subject.upn, found.object_id(subject.upn))
    except DirectoryUnavailable as exc:
        raise LegacyUnavailable(f"{OID_UNKNOWN} {exc.message}") from exc
    except DirectoryError as exc:
        raise LegacyStoreError(f"{OID_UNKNOWN} {exc.message}") from exc


def _audit(
    actor: Actor,
    action: str,
    target: SourceTarget | None,
    *,
    before: str | None = None,
    error: LegacyStoreError | None = None,
) -> None:
    generic.audit(actor, SOURCE, action, target, before=before, error=error)


def _audited[T](actor: Actor, action: str, target: SourceTarget, step: Callable[[], T]) -> T:
    """Runs a step whose failure is audited as `action`'s (success is audited by the caller,
    which knows what it read)."""
    try:
        return step()
    except LegacyStoreError as exc:
        _audit(actor, action, target, error=exc)
        raise


def legacy_store_keys() -> frozenset[str]:
    """The configured stores' full names (their keys), asking them nothing (Activity's links
    to them); none while the setting is unreadable: the legacy pages say so, Activity not."""
    try:
        stores = parse_store_agents(settings.LEGACY_STORES_AGENTS) if legacy_enabled() else {}
    except ValueError:
        return frozenset()
    return frozenset(stores.values())


def _readable(actor: Actor) -> list[SourceTarget]:
    """The configured stores the portal may read (one store call each, a few at a time)."""
    subject_of(actor)  # refuses a subject whose scope the portal cannot make
    backend = _backend()
    return [t for t in fan_out(backend.describe, backend.configured_targets()) if t is not None]


def legacy_export_all(actor: Actor) -> list[ExportFile]:
    """One markdown file per store with files, for "Export everything", each with the
    version of every file in it (what an erasure must still find). Audited."""
    backend, subject = _backend(), subject_of(actor)
    files = []
    for target in _readable(actor):
        read = functools.partial(backend.export_items, subject, target)
        items = _audited(actor, Action.EXPORT, target, read)
        if not items:
            continue
        text = export_markdown(target, items)
        _audit(actor, Action.EXPORT, target, before=text)
        versions = {item.key: file_version(item).token() for item in items}
        files.append(ExportFile(f"legacy-{target.key}.md", text, target.key, versions))
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
        _audit(actor, Action.ERASE, row.target, error=error)
    return erasure
