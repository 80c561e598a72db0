"""One Undo for a batch delete: every memory's document as it was before, in the session,
briefly. Kept apart from the single-entry Undo records (`stores`), which name one memory."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.sessions.backends.base import SessionBase

from memory_ui.documents.versions import Version
from memory_ui.memory.batch import Deleted
from memory_ui.web.stores.kept import drop, keep, kept
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
    items: int = 0  # list items it took from entries that stayed


def batch_undo_remember(session: SessionBase, done: list[Deleted]) -> str | None:
    """Keep what Undo needs for every memory the batch changed; the token for its form, or
    None when together they are too big to keep."""
    changed = [d for d in done if d.before is not None and d.after is not None]
    if not changed or sum(len(d.before.content_markdown.encode()) for d in changed) > MAX_BYTES:
        return None
    memories = [
        {
            "target": d.target.key,
            "before": d.before.content_markdown,
            "after": Version.of(d.after).token(),
            "count": d.count,
            "items": d.items,
        }
        for d in changed
    ]
    return keep(
        session, SESSION_KEY, {"memories": memories}, most=MAX_RECORDS, seconds=UNDO_SECONDS
    )


def batch_undo_take(session: SessionBase, token: str) -> list[BatchUndo] | None:
    """The batch behind `token`, removed (an Undo is used once), or None."""
    raw = kept(session, SESSION_KEY).get(token)
    drop(session, SESSION_KEY, token)
    if raw is None:
        return None
    return [
        BatchUndo(
            m["target"], m["before"], Version.parse(m["after"]), m["count"], m.get("items", 0)
        )
        for m in raw["memories"]
    ]
