"""One Undo for a batch delete: every memory's document as it was before, in the session,
briefly. Kept apart from the single-entry Undo records (`stores`), which name one memory."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

from django.contrib.sessions.backends.base import SessionBase

from memory_ui.memory.batch import Deleted
from memory_ui.memory.operations import Version
from memory_ui.web.stores.undo import UNDO_MAX_BYTES, UNDO_SECONDS

SESSION_KEY = "memory_batch_undo"
MAX_BYTES = 4 * UNDO_MAX_BYTES  # all the memories of one batch together
MAX_RECORDS = 2


@dataclass(frozen=True)
class BatchUndo:
    target_key: str
    before: str  # the document before the batch delete
    after: Version | None  # Undo applies only while it is as the delete left it
    count: int  # entries the delete took from it


def _records(session: SessionBase) -> dict[str, dict[str, Any]]:
    now = time.time()
    return {t: r for t, r in session.get(SESSION_KEY, {}).items() if r["expires"] > now}


def batch_undo_remember(session: SessionBase, done: list[Deleted]) -> str | None:
    """Keep what Undo needs for every memory the batch changed; the token for its form, or
    None when together they are too big to keep."""
    kept = [d for d in done if d.before is not None and d.after is not None]
    if not kept or sum(len(d.before.content_markdown.encode()) for d in kept) > MAX_BYTES:
        return None
    newest = sorted(_records(session).items(), key=lambda item: item[1]["expires"])
    token = secrets.token_urlsafe(16)
    session[SESSION_KEY] = {
        **dict(newest[-(MAX_RECORDS - 1) :]),
        token: {
            "memories": [
                {
                    "target": d.target.key,
                    "before": d.before.content_markdown,
                    "after": Version.of(d.after).token(),
                    "count": d.count,
                }
                for d in kept
            ],
            "expires": time.time() + UNDO_SECONDS,
        },
    }
    return token


def batch_undo_take(session: SessionBase, token: str) -> list[BatchUndo] | None:
    """The batch behind `token`, removed (an Undo is used once), or None."""
    records = _records(session)
    raw = records.pop(token, None)
    session[SESSION_KEY] = records
    if raw is None:
        return None
    return [
        BatchUndo(m["target"], m["before"], Version.parse(m["after"]), m["count"])
        for m in raw["memories"]
    ]
