"""Undo of an item's delete in a source with pages of the kind (a legacy store's file, a
generic source's item): the item as it was (key, description, text), in the session, never
in a URL (contents would reach logs), with the place it came from (`place`: the store, or
the source and target), from which alone it is taken back. Briefly, a few at a time, and
only for items of a reasonable size, like CoreAPI's Undo (`stores.undo`)."""

from __future__ import annotations

from django.contrib.sessions.backends.base import SessionBase

from memory_ui.sources.protocol import Item
from memory_ui.web.stores.kept import drop, keep, kept
from memory_ui.web.stores.undo import UNDO_MAX_BYTES, UNDO_MAX_RECORDS, UNDO_SECONDS

SESSION_KEY = "item_undo"


def item_undo_remember(session: SessionBase, place: str, item: Item) -> str | None:
    """Keep the deleted item; the token for Undo's form, or None when it is too big."""
    text = item.text or ""
    if len(text.encode()) > UNDO_MAX_BYTES:
        return None
    record = {"place": place, "path": item.key, "description": item.description, "text": text}
    return keep(session, SESSION_KEY, record, most=UNDO_MAX_RECORDS, seconds=UNDO_SECONDS)


def item_undo_take(session: SessionBase, token: str, place: str) -> Item | None:
    """The item behind `token` if it is still kept and from `place`; it stays kept
    until `item_undo_forget` (a failed Undo can be tried again)."""
    raw = kept(session, SESSION_KEY).get(token)
    if raw is None or raw["place"] != place:
        return None
    return Item(key=raw["path"], description=raw["description"], updated=None, text=raw["text"])


def item_undo_label(session: SessionBase, token: str, place: str) -> str:
    item = item_undo_take(session, token, place)
    return item.key if item else ""


def item_undo_forget(session: SessionBase, token: str) -> None:
    drop(session, SESSION_KEY, token)
