"""Searching all of a user's memory: their shared memory and every agent's, entry by entry.

Each document is split into entries (`documents.parse_document`); an entry matches when
the text occurs in its body or reason (case-insensitive, the text taken literally, any run
of whitespace in it matching any run in the memory), its reason contains the reason
filter, and its timestamp lies in the date range. A document without dated entries is
matched as one whole, and so is a preamble: they have no date, so date filters skip them
(the page says so) rather than hide them.

Memory is hostile text. Nothing here renders it: an excerpt is a list of plain-text
segments, some marked as matches, and the template escapes each one.

The work is bounded: at most `PORTAL_COREAPI_FAN_OUT` CoreAPI reads at a time, one linear
scan of each document, and excerpts only for the results shown (`Limits`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Literal

from memory_ui.documents import Document
from memory_ui.identity import Actor
from memory_ui.resurfacing import Deletions
from memory_ui.sources.agent_memory import USER_MEMORY_LABEL, Loaded, Target
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_source, memory_store
from memory_ui.text import without_bidi_controls

# Characters of context on each side of the first match in an excerpt.
EXCERPT_CONTEXT = 80
# How far an excerpt's edge may move to end on a word boundary.
EXCERPT_SNAP = 20
_WHITESPACE = re.compile(r"\s+")
_WHITESPACE_RUN = r"\s++"  # possessive: a run of whitespace is never scanned twice


@dataclass(frozen=True)
class Limits:
    """How many results are shown: per memory when several are searched, per memory when
    one is, and in all. Every match is still counted."""

    per_memory: int = 10
    alone: int = 100
    overall: int = 100


@dataclass(frozen=True)
class SearchQuery:
    """What to look for. `start` is inclusive and `end` exclusive (aware datetimes)."""

    text: str = ""
    reason: str = ""
    start: datetime | None = None
    end: datetime | None = None

    @property
    def dated(self) -> bool:
        return self.start is not None or self.end is not None

    @property
    def filtered(self) -> bool:
        return bool(self.text or self.reason or self.dated)


def day_range(
    first: date | None, last: date | None, tz: tzinfo
) -> tuple[datetime | None, datetime | None]:
    """The instants from the start of day `first` to the end of day `last` in `tz`: a
    `start` and `end` for `SearchQuery`."""
    start = datetime.combine(first, time.min, tz) if first else None
    end = datetime.combine(last + timedelta(days=1), time.min, tz) if last else None
    return start, end


def text_pattern(text: str) -> re.Pattern[str] | None:
    """The text to look for as a pattern (taken literally, any whitespace run matching any
    run), or None when there is none."""
    words = text.split()
    if not words:
        return None
    return re.compile(_WHITESPACE_RUN.join(re.escape(word) for word in words), re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Segment:
    text: str
    match: bool = False


@dataclass(frozen=True, slots=True)
class Hit:
    """One matching entry, or a whole document (`index` None) that has no dated entries;
    `came_back`: when the person deleted the entry before, if it came back (the memory page
    flags it too: memory_ui/resurfacing.py)."""

    index: int | None
    kind: Literal["added", "imported", "preamble", "document"]
    timestamp: datetime | None
    reason: list[Segment]  # empty when the entry has no reason
    excerpt: list[Segment]
    came_back: datetime | None = None

    @property
    def dated(self) -> bool:
        return self.timestamp is not None


@dataclass
class MemoryResults:
    """The results in one memory, or the error that kept it from being searched."""

    target: Target
    hits: list[Hit] = field(default_factory=list)  # the ones shown
    total: int = 0  # every match in this memory, shown or not
    entries: int = 0  # of those, entries (not a whole document): what can be selected
    empty: bool = False  # nothing is remembered in it
    error: SourceError | None = None

    @property
    def label(self) -> str:
        agent = self.target.agent
        return agent.display_name if agent else USER_MEMORY_LABEL

    @property
    def more(self) -> int:
        return self.total - len(self.hits)


@dataclass
class SearchResults:
    query: SearchQuery
    memories: list[MemoryResults]

    @property
    def total(self) -> int:
        return sum(memory.total for memory in self.memories)

    @property
    def entries(self) -> int:
        """Matching entries: what "Select all N matching" takes (`matching_entries`)."""
        return sum(memory.entries for memory in self.memories)

    @property
    def matched(self) -> list[MemoryResults]:
        return [memory for memory in self.memories if memory.total]

    @property
    def errors(self) -> list[SourceError]:
        return [memory.error for memory in self.memories if memory.error is not None]

    @property
    def nothing_remembered(self) -> bool:
        """Every memory could be read, and none holds anything."""
        return all(memory.empty and memory.error is None for memory in self.memories)

    @property
    def shows_undated(self) -> bool:
        """A date filter is on and some results shown have no date (it skipped them)."""
        return self.query.dated and any(
            not hit.dated for memory in self.memories for hit in memory.hits
        )


# --- matching ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Piece:
    """What is matched: an entry, or a whole document without dated entries."""

    index: int | None
    kind: Literal["added", "imported", "preamble", "document"]
    timestamp: datetime | None
    reason: str
    body: str


def _pieces(document: Document) -> list[_Piece]:
    if not document.structured:
        text = document.text.strip()
        return [_Piece(None, "document", None, "", text)] if text else []
    return [
        _Piece(entry.index, entry.kind, entry.timestamp, entry.reason or "", entry.body)
        for entry in document.entries
    ]


class _Matcher:
    def __init__(self, query: SearchQuery) -> None:
        self.query = query
        self.text = text_pattern(query.text)
        self.reason = text_pattern(query.reason)
        # A reason shows what matched there: the text, the reason filter, or both.
        both = [p.pattern for p in (self.text, self.reason) if p is not None]
        self.in_reason = re.compile("|".join(both), re.IGNORECASE) if both else None

    def matches(self, piece: _Piece) -> bool:
        query = self.query
        # Undated pieces are not filtered by date: the page marks them "no date".
        if piece.timestamp is not None:
            if query.start is not None and piece.timestamp < query.start:
                return False
            if query.end is not None and piece.timestamp >= query.end:
                return False
        if self.reason is not None and not self.reason.search(piece.reason):
            return False
        if self.text is not None:
            return bool(self.text.search(piece.body) or self.text.search(piece.reason))
        return True

    def hit(self, piece: _Piece, came_back: datetime | None = None) -> Hit:
        reason = excerpt(piece.reason, self.in_reason) if piece.reason else []
        body = excerpt(piece.body, self.text)
        return Hit(piece.index, piece.kind, piece.timestamp, reason, body, came_back)


def _clean(text: str) -> str:
    """A stretch of memory as one line of plain text: whitespace collapsed, and without
    bidirectional controls, which could make the text around them read differently."""
    return _WHITESPACE.sub(" ", without_bidi_controls(text))


def excerpt(text: str, pattern: re.Pattern[str] | None) -> list[Segment]:
    """Plain text around the first match of `pattern` in `text` (or its beginning), with
    every match inside it marked; "…" where text was left out."""
    found = pattern.search(text) if pattern else None
    if found:
        start = max(0, found.start() - EXCERPT_CONTEXT)
        end = min(len(text), found.end() + EXCERPT_CONTEXT)
    else:
        start, end = 0, min(len(text), 2 * EXCERPT_CONTEXT)
    # End on word boundaries where one is near, never cutting into the first match.
    if start > 0:
        limit = min(start + EXCERPT_SNAP, found.start() if found else end)
        spaces = [i for i in range(start, limit) if text[i].isspace()]
        start = spaces[0] + 1 if spaces else start
    if end < len(text):
        limit = max(end - EXCERPT_SNAP, found.end() if found else start)
        spaces = [i for i in range(limit, end) if text[i].isspace()]
        end = spaces[-1] if spaces else end
    window = text[start:end]
    segments: list[Segment] = []
    position = 0
    for match in pattern.finditer(window) if pattern else ():
        if match.start() > position:
            segments.append(Segment(window[position : match.start()]))
        segments.append(Segment(window[match.start() : match.end()], match=True))
        position = match.end()
    if position < len(window):
        segments.append(Segment(window[position:]))
    segments = [Segment(_clean(s.text), s.match) for s in segments]
    if segments and not segments[0].match:
        segments[0] = Segment(segments[0].text.lstrip())
    if segments and not segments[-1].match:
        segments[-1] = Segment(segments[-1].text.rstrip())
    if start > 0:
        segments.insert(0, Segment("…"))
    if end < len(text):
        segments.append(Segment("…"))
    return [segment for segment in segments if segment.text]


# --- searching ---------------------------------------------------------------------------


def matching_entries(document: Document, query: SearchQuery) -> list[int]:
    """The indexes of every entry of `document` that matches `query`, newest first: what
    "Select all matching" takes (`memory_ui.memory.batch`). A document without dated
    entries has none (it is matched as one whole, which is not an entry to delete)."""
    matcher = _Matcher(query)
    return [
        piece.index
        for piece in reversed(_pieces(document))
        if piece.index is not None and matcher.matches(piece)
    ]


def search_loaded(
    loaded: list[Loaded], query: SearchQuery, limits: Limits, deletions: Deletions | None = None
) -> SearchResults:
    """Search documents already read; results in the order of `loaded`. With `deletions`
    (what the person deleted before), each entry shown that came back says when it went:
    only the entries shown are hashed, as on a memory page."""
    matcher = _Matcher(query)
    source = memory_source() if deletions is not None else ""

    def came_back(piece: _Piece) -> datetime | None:
        # Entries only, as on the memory page: a whole document is not what was deleted.
        if deletions is None or piece.index is None:
            return None
        return deletions.came_back(source, piece.body)

    per_memory = limits.alone if len(loaded) == 1 else limits.per_memory
    room = limits.overall
    memories: list[MemoryResults] = []
    for each in loaded:
        if each.error is not None or each.document is None:
            memories.append(MemoryResults(each.target, error=each.error))
            continue
        pieces = _pieces(each.document)
        # Newest first, as memory pages list entries: agents append at the end.
        found = [piece for piece in reversed(pieces) if matcher.matches(piece)]
        shown = found[: min(per_memory, room)]
        room -= len(shown)
        memories.append(
            MemoryResults(
                each.target,
                hits=[matcher.hit(piece, came_back(piece)) for piece in shown],
                total=len(found),
                entries=sum(piece.index is not None for piece in found),
                empty=not pieces,
            )
        )
    return SearchResults(query, memories)


def memory_search(
    actor: Actor,
    targets: list[Target],
    query: SearchQuery,
    limits: Limits | None = None,
    deletions: Deletions | None = None,
) -> SearchResults:
    """Read every memory in `targets` (a few at a time) and search them; a memory CoreAPI
    failed to give is reported with its error, and the others are still searched. With
    `deletions`, entries that came back are flagged (`search_loaded`)."""
    loaded = memory_store().load_many(actor, targets)
    return search_loaded(loaded, query, limits or Limits(), deletions)
