"""Undo: the whole document as it was before a delete, in the session."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

from django.contrib.sessions.backends.base import SessionBase

from memory_ui.coreapi import Memory
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
