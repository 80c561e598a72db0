"""Undo: the whole document as it was before a delete, in the session."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.sessions.backends.base import SessionBase

from memory_ui.documents.versions import Version
from memory_ui.sources.agent_memory import Memory, Target
from memory_ui.web.stores.kept import drop, keep, kept

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
    record = {
        "target": target.key,
        "before": before,
        "after": Version.of(after).token(),
        "removed": removed,
        "label": label,
    }
    return keep(session, UNDO_SESSION_KEY, record, most=UNDO_MAX_RECORDS, seconds=UNDO_SECONDS)


def undo_record(session: SessionBase, token: str, target: Target) -> UndoRecord | None:
    """The record behind `token`, if it is still there and about `target`."""
    raw = kept(session, UNDO_SESSION_KEY).get(token)
    if raw is None or raw["target"] != target.key:
        return None
    after = Version.parse(raw["after"])
    return UndoRecord(raw["target"], raw["before"], after, raw["removed"], raw.get("label", ""))


def undo_forget(session: SessionBase, token: str) -> None:
    drop(session, UNDO_SESSION_KEY, token)


def undo_forget_target(session: SessionBase, target: Target) -> None:
    """A cleared memory keeps no copies for Undo: clearing means it is gone."""
    records = kept(session, UNDO_SESSION_KEY)
    session[UNDO_SESSION_KEY] = {
        token: r for token, r in records.items() if r["target"] != target.key
    }
