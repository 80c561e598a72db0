"""A memory document split into entries at its `## Added …` / `## Imported …` headings
(where `outline` finds them), and the list items of a document without entries."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property
from typing import Literal

from markdown_it import MarkdownIt

from memory_ui.documents.outline import Outline, is_blank, outline, split_lines
from memory_ui.text import without_bidi_controls

# The reason a file moved in from an older memory system is appended with (built by
# `moved_file_reason`): CoreAPI stamps the heading with the time of the move, so the file's
# own time travels in the reason.
MOVED_FILE_REASON = re.compile(
    r"Moved from .+ \(file last changed (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\)"
)


def moved_file_reason(origin: str, changed: datetime | None) -> str:
    """The reason "Moved from <origin>", with the file's last change when its system
    gave one."""
    reason = f"Moved from {origin}"
    if changed is None:
        return reason
    return f"{reason} (file last changed {changed.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ})"


class OutOfRangeError(ValueError):
    """An entry index or line range that does not exist in the document."""


@dataclass(frozen=True, slots=True)
class Entry:
    index: int
    kind: Literal["added", "imported", "preamble"]
    timestamp: datetime | None
    reason: str | None
    operation_id: str | None
    session_id: str | None
    body: str
    start_line: int
    end_line: int
    source: str
    # A code fence in it is never closed: it runs to the entry's end (an appended entry
    # after it is still one of its own: outline.py, `_appended_heading`).
    unclosed_fence: bool = False

    @property
    def number(self) -> int:
        """The entry's number for people, counting from 1."""
        return self.index + 1

    @property
    def dated(self) -> bool:
        """Under a dated heading (everything but the text before the first one)."""
        return self.kind != "preamble"

    @property
    def file_changed(self) -> datetime | None:
        """When the file this entry was moved in from last changed (its reason says so:
        `moved_file_reason`); None for any other entry."""
        found = MOVED_FILE_REASON.fullmatch(self.reason or "")
        if found is None:
            return None
        return datetime.strptime(found[1], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)

    @property
    def provenance_label(self) -> str:
        """How the entry came to be, in words; its date, when `dated`, follows."""
        if self.file_changed is not None:
            return "Moved in"
        return {"added": "Added", "imported": "Imported"}.get(
            self.kind, "Before the first dated entry"
        )


@dataclass(frozen=True, slots=True)
class ListItem:
    start_line: int
    end_line: int
    depth: int  # 0 for a top-level item, 1 for an item nested in one, and so on
    text: str  # the item's exact source lines, nested items included


@dataclass(frozen=True)
class Document:
    text: str
    entries: list[Entry]  # empty when the document is not structured
    outline: Outline = field(repr=False)
    lines: list[str] = field(repr=False)

    @property
    def structured(self) -> bool:
        return bool(self.entries)

    @cached_property
    def size_bytes(self) -> int:
        return len(self.text.encode())

    @property
    def entry_count(self) -> int:
        return _entry_count(self.lines, self.outline)

    @cached_property
    def list_items(self) -> list[ListItem]:
        """Every list item of a document that is not structured (markdown-it's parse of the
        whole text: for a page, `list_items_between` one part's lines is bounded)."""
        if self.structured:
            return []
        return list_items_between(self.lines, 0, len(self.lines))


# The same block rules without inline parsing: where the blocks and list items are.
_BLOCKS = MarkdownIt("commonmark", {"html": False}).enable(["table"]).disable("inline")

# Agents write headings and provenance lines, so these patterns must take linear time on
# any line, however long: none may scan a whitespace run again from inside it. Possessive
# `*+`/`++` never give whitespace back (nothing after them starts with whitespace, so they
# match what `*`/`+` did), and `(?<!\s)` lets a separator start only where a whitespace run
# starts, which is where the leftmost match started anyway (split is called with
# maxsplit=1; later matches could differ). The previous patterns took 10-15 s on a heading
# or "> " line with 64,000 spaces before its last character, and cubic time on
# "> operation: a" followed by spaces.
# The emulator writes an em dash; people typing by hand write " - " or " -- ".
REASON_SEPARATOR = re.compile(r"(?<!\s)(?:\s*+\u2014\s*+|\s++--?\s++)")
# `> operation: … · session: …`, either part optional. The operation is the shortest text
# before "·", "session:" or the end of the line, the session all the rest; neither keeps
# surrounding whitespace. Both are matched in units of (whitespace run, one other
# character), so they end only after a non-space character: ending inside a whitespace
# run would be tried after ending at its start, which always matches as well.
_PROVENANCE = re.compile(
    r">\s*+(?:operation:\s*+(?P<operation>(?:\s*+[^\s\u00b7])*?)\s*+)?(?:\u00b7\s*+)?"
    r"(?:session:\s*+(?P<session>(?:\s*+\S)*+))?\s*+",
    re.IGNORECASE,
)


def is_provenance_line(line: str) -> bool:
    """Whether `line`, first after an entry's heading, would be read as its provenance."""
    provenance = _PROVENANCE.fullmatch(line.rstrip("\r\n"))
    return bool(provenance and (provenance["operation"] or provenance["session"]))


_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*(?:\r\n|\r|\n))+")


def _parse_timestamp(raw: str) -> datetime | None:
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        return None
    # Appends are stamped in UTC; a timestamp without an offset is most likely UTC too.
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _entry(
    index: int, lines: list[str], start: int, end: int, heading_end: int, match: re.Match[str]
) -> Entry:
    stamp, *rest = REASON_SEPARATOR.split(match["rest"], maxsplit=1)
    reason = without_bidi_controls(rest[0]).strip() if rest else ""
    body_start = heading_end
    while body_start < end and is_blank(lines[body_start]):
        body_start += 1
    provenance = None
    if body_start < end:
        provenance = _PROVENANCE.fullmatch(lines[body_start].rstrip("\r\n"))
    operation_id = session_id = None
    if provenance and (provenance["operation"] or provenance["session"]):
        operation_id, session_id = provenance["operation"] or None, provenance["session"] or None
        body_start += 1
    return Entry(
        index=index,
        kind="added" if match["kind"].lower() == "added" else "imported",
        timestamp=_parse_timestamp(stamp.strip()),
        reason=reason or None,
        operation_id=operation_id,
        session_id=session_id,
        body=_body(lines[body_start:end]),
        start_line=start,
        end_line=end,
        source="".join(lines[start:end]),
    )


def _body(lines: list[str]) -> str:
    # Strip surrounding blank lines but keep the first line's indentation (indented code).
    return _LEADING_BLANK_LINES.sub("", "".join(lines)).rstrip()


def _entry_count(lines: list[str], found: Outline) -> int:
    if found.headings:
        preamble = any(not is_blank(line) for line in lines[: found.headings[0][0]])
        return len(found.headings) + preamble
    if not any(not is_blank(line) for line in lines):
        return 0
    return len(found.items) or 1


def count_entries(text: str) -> int:
    """What `parse_document(text).entry_count` says, without making the entries: for the
    dashboard's cards, which show only the count."""
    lines = split_lines(text)
    return _entry_count(lines, outline(lines))


def parse_document(text: str) -> Document:
    """Split a memory document at its `## Added …` / `## Imported …` headings.

    Only top-level headings split (see `outline`): a heading inside a fenced code block, a
    quote or a list never does.
    """
    lines = split_lines(text)
    found = outline(lines)
    headings = found.headings
    if not headings:
        return Document(text, [], found, lines)

    entries: list[Entry] = []
    first_start = headings[0][0]
    if any(not is_blank(line) for line in lines[:first_start]):
        entries.append(
            Entry(
                index=0,
                kind="preamble",
                timestamp=None,
                reason=None,
                operation_id=None,
                session_id=None,
                body=_body(lines[:first_start]),
                start_line=0,
                end_line=first_start,
                source="".join(lines[:first_start]),
            )
        )
    ends = [start for start, _, _ in headings[1:]] + [len(lines)]
    for (start, heading_end, match), end in zip(headings, ends, strict=True):
        entries.append(_entry(len(entries), lines, start, end, heading_end, match))
    if found.unclosed or found.open_fence:
        entries = _with_unclosed_fences(entries, found)
    return Document(text, entries, found, lines)


def _with_unclosed_fences(entries: list[Entry], found: Outline) -> list[Entry]:
    """The entries, those whose fence is never closed marked: cut by the next entry's
    heading (`Outline.unclosed`), or still open where the document ends."""
    cut = set(found.unclosed)
    last = len(entries) - 1
    return [
        replace(entry, unclosed_fence=True)
        if entry.end_line in cut or (entry.index == last and found.open_fence)
        else entry
        for entry in entries
    ]


def list_items_between(lines: list[str], start: int, end: int) -> list[ListItem]:
    """The list items in lines [start, end) (whole top-level blocks: see `outline`), with
    their line numbers in the whole document. Block structure only: the text of an item is
    not parsed for emphasis and links, which costs most on hostile text."""
    items: list[ListItem] = []
    depth = 0
    for token in _BLOCKS.parse("".join(lines[start:end])):
        if token.type == "list_item_open" and token.map:
            first, last = token.map[0] + start, token.map[1] + start
            items.append(ListItem(first, last, depth, "".join(lines[first:last])))
            depth += 1
        elif token.type == "list_item_close":
            depth -= 1
    return items
