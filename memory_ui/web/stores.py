"""What the portal keeps between two requests of one person: Undo copies, staged zip
restores, single-use confirmations and support look-ups. Sessions and the cache are
server-side (database or Redis), so any worker or instance can serve the next request.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.contrib.sessions.backends.base import SessionBase
from django.core.cache import cache, caches

from memory_ui.coreapi import Memory
from memory_ui.memory.archive import ParsedArchive
from memory_ui.memory.operations import Version
from memory_ui.memory.targets import Target

# --- Undo: the whole document as it was before a delete, in the session; briefly, for a
# few deletes at a time, and only for documents of a reasonable size.

UNDO_SESSION_KEY = "memory_undo"
UNDO_SECONDS = 15 * 60
UNDO_MAX_BYTES = 256 * 1024
UNDO_MAX_RECORDS = 5


@dataclass(frozen=True)
class UndoRecord:
    target_key: str
    before: str  # the document before the delete
    after: Version | None  # Undo applies only while the document is as the delete left it
    removed: str  # what the delete removed, offered as a note when Undo can't apply
    label: str = ""  # a few words naming it: "Deleted “Upcoming trip”. Undo"


def _undo_records(session: SessionBase) -> dict[str, dict[str, Any]]:
    now = time.time()
    records = session.get(UNDO_SESSION_KEY, {})
    return {token: r for token, r in records.items() if r["expires"] > now}


def undo_remember(
    session: SessionBase,
    target: Target,
    before: str,
    after: Memory,
    removed: str,
    label: str = "",
) -> str | None:
    """Keep what Undo needs; the token for its form, or None when the document is too big."""
    if len(before.encode()) > UNDO_MAX_BYTES:
        return None
    records = _undo_records(session)
    newest = sorted(records.items(), key=lambda item: item[1]["expires"])[-(UNDO_MAX_RECORDS - 1) :]
    token = secrets.token_urlsafe(16)
    session[UNDO_SESSION_KEY] = {
        **dict(newest),
        token: {
            "target": target.key,
            "before": before,
            "after": Version.of(after).token(),
            "removed": removed,
            "label": label,
            "expires": time.time() + UNDO_SECONDS,
        },
    }
    return token


def undo_record(session: SessionBase, token: str, target: Target) -> UndoRecord | None:
    """The record behind `token`, if it is still there and about `target`."""
    raw = _undo_records(session).get(token)
    if raw is None or raw["target"] != target.key:
        return None
    after = Version.parse(raw["after"])
    return UndoRecord(raw["target"], raw["before"], after, raw["removed"], raw.get("label", ""))


def undo_forget(session: SessionBase, token: str) -> None:
    records = _undo_records(session)
    records.pop(token, None)
    session[UNDO_SESSION_KEY] = records


def undo_forget_target(session: SessionBase, target: Target) -> None:
    """A cleared memory keeps no copies for Undo: clearing means it is gone."""
    records = _undo_records(session)
    session[UNDO_SESSION_KEY] = {
        token: r for token, r in records.items() if r["target"] != target.key
    }


# --- Staged zip restores: the validated archive waits in the cache, bound to the user,
# while they review what goes where. The "durable" cache is always the database, so a Redis
# restart between the preview and the go-ahead loses nothing.

STAGE_SECONDS = 30 * 60
STAGE_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")


@dataclass
class RestoreOutcome:
    ok: bool
    message: str
    unknown: bool = False  # no answer came: it may still be restored (retrying re-checks)


@dataclass
class StagedRestore:
    """An uploaded, validated archive waiting for the user's go-ahead."""

    archive: ParsedArchive
    source: str
    mode: str = "replace"
    outcomes: dict[str, RestoreOutcome] = field(default_factory=dict)
    # What the last apply set out to restore: those without an outcome were not reached
    # (the request stopped midway), and applying the preview again finishes them.
    chosen: list[str] = field(default_factory=list)

    @property
    def interrupted(self) -> list[str]:
        return [key for key in self.chosen if key not in self.outcomes]


def _stage_key(owner_oid: str, token: str) -> str:
    return f"import-archive:{owner_oid}:{token}"


def stage_restore(owner_oid: str, staged: StagedRestore, token: str | None = None) -> str:
    """Keep (or keep again, after an attempt) a staged restore; its token."""
    token = token or secrets.token_urlsafe(16)
    caches["durable"].set(_stage_key(owner_oid, token), staged, STAGE_SECONDS)
    return token


def staged_restore(owner_oid: str, token: str) -> StagedRestore | None:
    if not STAGE_TOKEN.fullmatch(token):
        return None
    staged = caches["durable"].get(_stage_key(owner_oid, token))
    return staged if isinstance(staged, StagedRestore) else None


# --- Single-use confirmations (support): a replayed POST does nothing, and a confirmation
# issued for one user and one action (export or clear) confirms nothing else, so a form
# for alice cannot export bob's memory.

SESSION_NONCES = "support_nonces"
NONCES_KEPT = 21


def _nonces(session: SessionBase) -> list[list[str]]:
    """[nonce, casefolded UPN, action], oldest first. Bare strings (issued before nonces
    were bound) confirm nothing and are dropped."""
    kept = session.get(SESSION_NONCES, [])
    return [n for n in kept if isinstance(n, list) and len(n) == 3]


def nonce_issue(session: SessionBase, upn: str, action: str) -> str:
    """A confirmation for `action` on `upn`'s memory, good once."""
    nonce = secrets.token_urlsafe(16)
    recent = _nonces(session)[-(NONCES_KEPT - 1) :]
    session[SESSION_NONCES] = [*recent, [nonce, upn.casefold(), action]]
    return nonce


def nonce_spend(session: SessionBase, nonce: str, upn: str, action: str) -> bool:
    """Use `nonce` up; True only when it was issued for this `upn` and `action`. Sent for
    another user or action it is used up all the same: a form never posts it there."""
    nonces = _nonces(session)
    found = next((n for n in nonces if n[0] == nonce), None)
    if found is None:
        return False
    nonces.remove(found)
    session[SESSION_NONCES] = nonces
    return found[1:] == [upn.casefold(), action]


# --- Support look-ups: an overview opens only after a look-up through the (CSRF-checked)
# form, so a link from elsewhere cannot write audit events in staff's names.

SESSION_LOOKUPS = "support_lookups"


def lookup_remember(session: SessionBase, upn: str) -> None:
    recent = [u for u in session.get(SESSION_LOOKUPS, []) if u != upn.casefold()]
    session[SESSION_LOOKUPS] = [*recent[-19:], upn.casefold()]


def looked_up(session: SessionBase, upn: str) -> bool:
    return upn.casefold() in session.get(SESSION_LOOKUPS, [])


# --- A form whose sign-in had expired: what was typed waits in the session until the
# person is back on the page the form came from (the same user: signing in as someone
# else flushes the session).

PENDING_FORM = "pending_form"
PENDING_FORM_MAX_BYTES = 4 * 1024 * 1024
NOT_KEPT = frozenset({"csrfmiddlewaretoken"})
# Fields people type, shown to them again; the rest (which memory, versions) stay hidden.
TYPED_FIELDS = {
    "content": "What you wrote",
    "pasted": "What you pasted",
    "text": "What you were importing",
    "reason": "Reason",
    "ticket": "Ticket reference",
    "confirm_upn": "The user's UPN, typed to confirm",
    "phrase": "Confirmation",
    "upn": "User principal name",
}


@dataclass(frozen=True)
class PendingForm:
    action: str  # where the form posted
    origin: str  # the page it came from (path and query)
    fields: list[tuple[str, str]]
    had_files: bool

    @property
    def rows(self) -> list[tuple[str, str, str]]:
        """(name, value, label) for the form that sends it again; the label is empty for
        fields people did not type (which memory, versions), which stay hidden."""
        return [(name, value, TYPED_FIELDS.get(name, "")) for name, value in self.fields]


def pending_form_keep(session: SessionBase, pending: PendingForm) -> bool:
    """Keep what was typed; False when it is too large to keep."""
    size = sum(len(name) + len(value.encode()) for name, value in pending.fields)
    if size > PENDING_FORM_MAX_BYTES:
        return False
    session[PENDING_FORM] = {
        "action": pending.action,
        "origin": pending.origin,
        "fields": [list(pair) for pair in pending.fields],
        "had_files": pending.had_files,
    }
    return True


def pending_form_take(session: SessionBase, path: str) -> PendingForm | None:
    """The kept form, once, when `path` is the page it came from."""
    raw = session.get(PENDING_FORM)
    if not raw or raw["origin"].split("?", 1)[0] != path:
        return None
    del session[PENDING_FORM]
    fields = [(name, value) for name, value in raw["fields"]]
    return PendingForm(raw["action"], raw["origin"], fields, raw["had_files"])


# --- One addition per rendered form: a form that adds to memory carries a key, and the
# first request that claims it is the only one that adds (cache.add is atomic in the
# database and Redis caches, so two requests sent at once cannot both claim it).

SUBMISSION_SECONDS = 24 * 3600
SUBMISSION_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")


def submission_claim(owner_oid: str, token: str) -> bool:
    """True the first time `token` is claimed (or when the form carried none)."""
    if not token:
        return True
    if not SUBMISSION_TOKEN.fullmatch(token):
        return False
    return cache.add(f"submission:{owner_oid}:{token}", 1, SUBMISSION_SECONDS)


# --- One preview at a time per person ------------------------------------------------
# A turn expires on its own after PREVIEW_TURN_SECONDS, should a worker die mid-render.

PREVIEW_TURN_SECONDS = 10


@contextmanager
def preview_turn(owner_oid: str) -> Iterator[bool]:
    """True while this request holds the person's one preview turn; False when another
    request holds it (cache.add is atomic in every cache backend the portal uses)."""
    key = f"preview-turn:{owner_oid}"
    taken = cache.add(key, 1, PREVIEW_TURN_SECONDS)
    try:
        yield taken
    finally:
        if taken:
            cache.delete(key)
