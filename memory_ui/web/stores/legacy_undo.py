"""Undo of a legacy file's delete: the file as it was (path, description, contents), in the
session, never in a URL (contents would reach logs). Briefly, a few at a time, and only
for files of a reasonable size, like CoreAPI's Undo (`stores.undo`)."""

from __future__ import annotations

from django.contrib.sessions.backends.base import SessionBase

from memory_ui.sources.protocol import Item
from memory_ui.web.stores.kept import drop, keep, kept
from memory_ui.web.stores.undo import UNDO_MAX_BYTES, UNDO_MAX_RECORDS, UNDO_SECONDS

SESSION_KEY = "legacy_undo"


def legacy_undo_remember(session: SessionBase, store_key: str, item: Item) -> str | None:
    """Keep the deleted file; the token for Undo's form, or None when it is too big."""
    text = item.text or ""
    if len(text.encode()) > UNDO_MAX_BYTES:
        return None
    record = {"store": store_key, "path": item.key, "description": item.description, "text": text}
    return keep(session, SESSION_KEY, record, most=UNDO_MAX_RECORDS, seconds=UNDO_SECONDS)


def legacy_undo_take(session: SessionBase, token: str, store_key: str) -> Item | None:
    """The file behind `token` if it is still kept and from `store_key`; it stays kept
    until `legacy_undo_forget` (a failed Undo can be tried again)."""
    raw = kept(session, SESSION_KEY).get(token)
    if raw is None or raw["store"] != store_key:
        return None
    return Item(key=raw["path"], description=raw["description"], updated=None, text=raw["text"])


def legacy_undo_label(session: SessionBase, token: str, store_key: str) -> str:
    item = legacy_undo_take(session, token, store_key)
    return item.key if item else ""


def legacy_undo_forget(session: SessionBase, token: str) -> None:
    drop(session, SESSION_KEY, token)
