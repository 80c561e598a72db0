"""What a memory page shows of a document: a bounded amount, whatever its size or shape.

A page shows parts: the entries of a structured document, newest first, or the top-level
blocks of any other document (each list item on its own), in order. A page renders at most
PAGE_PARTS parts and PAGE_CHARS characters of markdown, and at most PART_CHARS of any one
part; the rest of a long part is in the Markdown view and the download. Previews of drafts
and uploads render their first PREVIEW_CHARS. markdown-it takes
quadratic time on some hostile text (a run of "![" or "["), so these bounds are what keep
a page's CPU time and size bounded. The Markdown view is paged too (RAW_PAGE_CHARS).

A document is parsed once per version: `prepared(text)` keeps the parsed document and the
parts rendered so far, keyed by the text's sha256, in this process's memory only, for
PORTAL_RENDER_CACHE_SECONDS after the last use and about PORTAL_RENDER_CACHE_BYTES in all. Memory
content is personal data, so it is never written to a shared cache or to disk, and a
worker's copy goes when the worker does. The key is the content's own hash, so a cached
document is only ever shown to someone whose CoreAPI answer had the same text.
"""

from __future__ import annotations

import json
import threading
import time
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from typing import Any

from django.conf import settings
from django.utils.safestring import SafeString

from memory_ui.documents import (
    Document,
    Entry,
    ListItem,
    content_hash,
    list_items_between,
    outline,
    parse_document,
    render_markdown,
)

PART_CHARS = 16 * 1024
PAGE_CHARS = 48 * 1024
PAGE_PARTS = 50
RAW_PAGE_CHARS = 64 * 1024
PREVIEW_CHARS = 24 * 1024  # of a draft or an upload, rendered before it is saved


@dataclass(frozen=True)
class Part:
    """An entry, or a top-level block of a document without entries."""

    position: int  # 0-based, in the order pages show parts
    start_line: int
    end_line: int
    entry: Entry | None
    chars: int  # of markdown: the entry's body, or the block
    shown: int  # of those, rendered
    html: SafeString
    items: list[ListItem]  # list items that can be deleted on their own (no entries)

    @property
    def truncated(self) -> bool:
        return self.shown < self.chars


@dataclass(frozen=True)
class Page:
    number: int  # 1-based
    parts: list[Part]
    total: int  # parts in the document
    first: int  # 1-based position of the first part shown
    has_next: bool

    @property
    def last(self) -> int:
        return self.first + len(self.parts) - 1

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def items(self) -> list[ListItem]:
        return [item for part in self.parts for item in part.items]


@dataclass(frozen=True)
class RawPage:
    number: int
    count: int
    text: str
    first_line: int  # 1-based, for "lines 1-2,000 of 30,000"
    last_line: int
    total_lines: int


def shown_markdown(text: str, limit: int = PART_CHARS) -> str:
    """At most `limit` characters of `text`, cut at a line end, with a fence it leaves open
    closed again (the rest would otherwise render as code)."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit) + 1 or limit
    shown = text[:cut]
    fence = outline(shown.splitlines(keepends=True)).open_fence
    return f"{shown}\n{fence}\n" if fence else shown


class Prepared:
    """A parsed document and its parts rendered so far; shared by a worker's threads."""

    def __init__(self, text: str, sha256: str = "") -> None:
        self.sha256 = sha256 or content_hash(text)
        self.document: Document = parse_document(text)
        lines = self.document.lines
        self._offsets = array("l", accumulate(map(len, lines), initial=0))
        if self.document.structured:
            self.total = len(self.document.entries)
        else:
            self._starts = self.document.outline.blocks
            self.total = len(self._starts)
        self._parts: dict[int, Part] = {}
        self._page_starts = [0]  # positions where pages 1, 2, … start, found as needed
        self._lock = threading.Lock()
        self.rendered_chars = 0
        self._memo: dict[tuple[object, ...], tuple[tuple[object, ...], Any]] = {}

    @cached_property
    def json_chars(self) -> int:
        """The text's length as a JSON string, as a replace sends it (`fits_one_write`):
        measured once per version, not on every view of a large document."""
        return len(json.dumps(self.document.text))

    @property
    def cost(self) -> int:
        """About the bytes this holds: the text, its lines (a str object of about 57 bytes
        besides its characters each), its entries (a copy of their lines, ~150 bytes each),
        the line offsets and the HTML rendered so far."""
        document = self.document
        lines, entries = len(document.lines), len(document.entries)
        return 4 * len(document.text) + 65 * lines + 150 * entries + self.rendered_chars

    def memo[T: str](
        self, key: tuple[object, ...], make: Callable[[], T], *, replaces: tuple[object, ...]
    ) -> T:
        """What `make` returns for `key`, made once and kept with this document; a newer
        key with the same `replaces` prefix takes the old one's place."""
        with self._lock:
            found = self._memo.get(replaces)
        if found is not None and found[0] == key:
            return found[1]
        made = make()
        with self._lock:
            previous = self._memo.get(replaces)
            self._memo[replaces] = (key, made)
            self.rendered_chars += len(made) - (len(previous[1]) if previous else 0)
        return made

    def _span(self, position: int) -> tuple[int, int, Entry | None]:
        if self.document.structured:
            entry = self.document.entries[self.total - 1 - position]  # newest first
            return entry.start_line, entry.end_line, entry
        start = self._starts[position]
        end = self._starts[position + 1] if position + 1 < self.total else len(self.document.lines)
        return start, end, None

    def _chars(self, position: int) -> int:
        start, end, entry = self._span(position)
        return len(entry.body) if entry else self._offsets[end] - self._offsets[start]

    def part(self, position: int) -> Part:
        with self._lock:
            cached = self._parts.get(position)
        if cached is not None:
            return cached
        start, end, entry = self._span(position)
        markdown = entry.body if entry else "".join(self.document.lines[start:end])
        shown = shown_markdown(markdown)
        whole = len(shown) >= len(markdown)
        items = [] if entry or not whole else list_items_between(self.document.lines, start, end)
        html = render_markdown(shown)
        chars = len(markdown)
        part = Part(position, start, end, entry, chars, min(len(shown), chars), html, items)
        with self._lock:
            self._parts[position] = part
            self.rendered_chars += len(html)
        return part

    def _page_start(self, number: int) -> int | None:
        """Where page `number` starts, or None past the last page."""
        while len(self._page_starts) < number:
            position = self._page_starts[-1]
            if position >= self.total:
                return None
            budget, taken = PAGE_CHARS, 0
            while position < self.total and taken < PAGE_PARTS:
                size = min(self._chars(position), PART_CHARS)
                if taken and size > budget:
                    break
                budget, taken, position = budget - size, taken + 1, position + 1
            self._page_starts.append(position)
        start = self._page_starts[number - 1]
        return start if start < self.total or (start == 0 and number == 1) else None

    def page(self, number: int) -> Page | None:
        """Page `number` (1-based), or None when there is no such page."""
        with self._lock:
            start = self._page_start(number)
            end = self._page_start(number + 1)
            end = self.total if end is None else end
        if start is None:
            return None
        parts = [self.part(position) for position in range(start, end)]
        return Page(number, parts, self.total, start + 1, end < self.total)

    def page_of_entry(self, index: int) -> int:
        """The page that shows entry `index` (1 when there is no such entry)."""
        if not self.document.structured or not 0 <= index < self.total:
            return 1
        position = self.total - 1 - index
        number = 1
        while True:
            with self._lock:
                next_start = self._page_start(number + 1)
            if next_start is None or position < next_start:
                return number
            number += 1

    def raw_page(self, number: int) -> RawPage | None:
        """Page `number` of the markdown itself, cut at line ends."""
        lines, offsets = self.document.lines, self._offsets
        starts = [0]
        while offsets[starts[-1]] < offsets[-1]:
            line = bisect_right(offsets, offsets[starts[-1]] + RAW_PAGE_CHARS) - 1
            starts.append(max(line, starts[-1] + 1))
        count = max(len(starts) - 1, 1)
        if not 1 <= number <= count:
            return None
        first = starts[number - 1]
        last = starts[number] if number < len(starts) else len(lines)
        text = "".join(lines[first:last])
        return RawPage(number, count, text, first + 1, last, len(lines))


class _PreparedCache:
    """Least recently used first out, bounded in characters and in age."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, tuple[float, Prepared]] = OrderedDict()

    def get(self, text: str, sha256: str = "") -> Prepared:
        key = sha256 or content_hash(text)
        now = time.monotonic()
        with self._lock:
            found = self._entries.pop(key, None)
            if found is not None and now - found[0] <= settings.PORTAL_RENDER_CACHE_SECONDS:
                self._entries[key] = (now, found[1])  # now the most recently used
                return found[1]
        prepared = Prepared(text, key)  # outside the lock: another thread may do the same
        with self._lock:
            self._entries[key] = (now, prepared)
            self._evict(now)
        return prepared

    def _evict(self, now: float) -> None:
        ttl = settings.PORTAL_RENDER_CACHE_SECONDS
        limit = settings.PORTAL_RENDER_CACHE_BYTES
        total = sum(prepared.cost for _, prepared in self._entries.values())
        while self._entries:
            key, (used, prepared) = next(iter(self._entries.items()))
            if now - used <= ttl and total <= limit:
                break
            del self._entries[key]
            total -= prepared.cost

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_CACHE = _PreparedCache()


def prepared(text: str, sha256: str = "") -> Prepared:
    """The parsed `text`, from this process's cache when the same text was shown lately;
    `sha256`, its hash where the caller has it already (`content_hash`)."""
    if not settings.PORTAL_RENDER_CACHE_SECONDS:
        return Prepared(text, sha256)
    return _CACHE.get(text, sha256)


def forget_prepared() -> None:
    """Empty this process's cache (tests)."""
    _CACHE.clear()
