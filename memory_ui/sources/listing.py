"""What the generic source pages list, read without changing anything: a subject's
targets and their items (`targets_list`, `target_page` in `generic`), counted for support
(`targets_counted`), and which of them came back after the person deleted them
(`items_shown`, `item_came_back`; memory_ui/resurfacing.py). Texts read only to be hashed
are dropped once hashed: never shown, logged or audited (not a reveal)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from memory_ui.budget import fan_out
from memory_ui.identity import Actor
from memory_ui.resurfacing import Deletions, deletions_of
from memory_ui.sources.generic import all_items, subject_of
from memory_ui.sources.protocol import (
    Capability,
    Item,
    MemoryBackend,
    SourceError,
    SourceTarget,
    Subject,
    require,
)


@dataclass(frozen=True)
class Listed:
    """One target with its items (metadata only), as the generic pages list them, or why
    they could not be listed, and how many of them the person deleted before
    (`came_back`: of the items listed with text)."""

    target: SourceTarget
    items: tuple[Item, ...] = ()
    next_cursor: str | None = None
    error: SourceError | None = None
    came_back: int = 0

    @property
    def updated(self) -> dt.datetime | None:
        """The last change among the listed items."""
        return max((item.updated for item in self.items if item.updated), default=None)


def targets_list(actor: Actor, backend: MemoryBackend) -> list[Listed]:
    """The subject's targets, each with its first page of items (a target that cannot be
    listed says why; the others are still listed; none is read where the source cannot
    list: its pages say so instead); one query for what the person deleted before."""
    subject = subject_of(actor)
    if Capability.LIST not in backend.capabilities:
        return [Listed(target, ()) for target in backend.list_targets(subject)]
    deletions = deletions_of(subject.upn)
    listed = []
    for target in backend.list_targets(subject):
        try:
            page = backend.read_page(subject, target)
            texts = _hashable(backend, subject, target, page.items, deletions)
        except SourceError as exc:
            listed.append(Listed(target, error=exc))
            continue
        back = deletions.count(backend.source, (text for text in texts if text))
        listed.append(Listed(target, page.items, page.next_cursor, came_back=back))
    return listed


def _hashable(
    backend: MemoryBackend,
    subject: Subject,
    target: SourceTarget,
    items: Iterable[Item],
    deletions: Deletions,
) -> list[str | None]:
    """The items' texts to hash against what the person deleted: as listed, except where
    the person deleted anything from this source, an item listed without its text (a legacy
    file) written since their first delete from it (or of unknown date) is read for it, a few
    at a time. One that cannot be read is not hashed (None), the others still are. Hashed
    and dropped: never shown, logged or audited (not a reveal)."""
    items = list(items)
    since = deletions.since(backend.source)
    if since is None:
        return [item.text for item in items]

    def text_of(item: Item) -> str | None:
        if item.text is not None or not item.has_text:
            return item.text
        if item.updated is not None and item.updated < since:
            return None  # not written since the first delete: it cannot have come back
        try:
            return backend.read_item(subject, target, item.key).text
        except SourceError:
            return None

    return fan_out(text_of, items)


@dataclass(frozen=True)
class Counted:
    """One target as support's overview counts it, without content: its items, and how
    many of them the person deleted before (`came_back`), or why it could not be read."""

    target: SourceTarget
    items: int = 0
    came_back: int = 0
    error: SourceError | None = None


def targets_counted(actor: Actor, backend: MemoryBackend, deletions: Deletions) -> list[Counted]:
    """The subject's targets, each with its items counted (every page) and, only where the
    person deleted anything from this source, how many came back. Read as a deletion
    request's plan reads to count, not as a reveal: the texts are hashed and dropped, never
    shown, logged or audited (an item listed without its text is read for it). A target
    that cannot be read says why; the others are still counted. A shared target
    (`SourceTarget.shared`) is listed, neither read nor counted."""
    require(backend, Capability.LIST)
    subject = subject_of(actor)
    hashed = deletions.holds(backend.source)
    counted = []
    for target in backend.list_targets(subject):
        if target.shared:  # not kept about the person: not read, not counted as theirs
            counted.append(Counted(target))
            continue
        try:
            items = all_items(backend, subject, target)
            texts = _hashable(backend, subject, target, items, deletions) if hashed else []
        except SourceError as exc:
            counted.append(Counted(target, error=exc))
            continue
        back = deletions.count(backend.source, (text for text in texts if text))
        counted.append(Counted(target, len(items), back))
    return counted


@dataclass(frozen=True)
class Shown:
    """An item as a page shows it: `came_back` is when the person deleted the same text
    before (memory_ui/resurfacing.py), when it came back."""

    item: Item
    came_back: datetime | None = None


def item_came_back(actor: Actor, source: str, item: Item) -> datetime | None:
    """When the person deleted `item`'s text from `source` before, if it came back (an item
    read whole, on its own page): one query."""
    if not item.text:
        return None
    return deletions_of(subject_of(actor).upn).came_back(source, item.text)


def items_shown(
    actor: Actor, backend: MemoryBackend, target: SourceTarget, items: Iterable[Item]
) -> list[Shown]:
    """`items` with those the person deleted before marked: one query for what they deleted;
    an item listed without its text is read for it only where they deleted anything from
    this source (`_hashable`)."""
    subject = subject_of(actor)
    deletions = deletions_of(subject.upn)
    items = list(items)
    texts = _hashable(backend, subject, target, items, deletions)
    return [
        Shown(item, deletions.came_back(backend.source, text) if text else None)
        for item, text in zip(items, texts, strict=True)
    ]
