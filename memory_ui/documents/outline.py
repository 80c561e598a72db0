"""The outline scanner: where a document's top-level blocks start, in one linear pass.

markdown-it's own parse takes seconds on some hostile megabyte documents (many table
columns, long runs of "-" lines), so `outline` follows only the CommonMark rules that
decide where the documents agents write split into entries, list items and blocks. Each
line goes through the rules below in this order; the first that takes the line ends its
turn (the order matters: a thematic break "- - -" is not a list item, an underline "---"
after one paragraph line makes it a heading):

| rule (function)      | CommonMark (0.31) | what it does with the line                            |
|----------------------|-------------------|-------------------------------------------------------|
| `_appended_heading`  | (not CommonMark)  | an appended block's heading ends a fence left open    |
| `_in_fence`          | 4.5 fenced code   | inside an open fence only its closing fence counts    |
| `_in_item`           | 5.2 list items    | blank, or indented to the open item's content: in it  |
| `_lazy_line`         | 5.2 laziness      | paragraph text after an item's paragraph stays in it  |
| `_blank`             | 4.9 blank lines   | ends a paragraph; the next line starts a block        |
| `_atx_heading`       | 4.2 ATX headings  | "## Added …" at 0-3 spaces is an entry heading        |
| `_setext_heading`    | 4.3 setext        | "---" under a one-line paragraph "Added …" is one too |
| `_fence_opening`     | 4.5 fenced code   | "```" or "~~~" (no backtick in a backtick info string)|
| `_thematic_break`    | 4.1 breaks        | three or more of one of "-*_" alone on the line       |
| `_list_item_start`   | 5.2 list items    | a top-level item; its content column is remembered    |
| `_paragraph`         | 4.8 paragraphs    | other text at 0-3 spaces starts a paragraph           |

`_appended_heading` is the one rule CommonMark does not have. Each agent appends a block of
its own (docs/architecture.md, Document formats: after a blank line, a heading exactly
`## Added 2026-10-02T16:40:55Z[ — reason]`, an optional `> operation: …` line, a blank
line), so a note that leaves its fence open (no closing line, or "``` XM40", which does not
close one) must not swallow the blocks appended after it: inside a top-level fence such a
heading ends the fence and starts an entry (`Outline.unclosed` says where). Only that exact
shape does; any other heading-like line in code stays code.

Blockquote (5.1) and indented-code (4.4) lines never start with "##" at 0-3 spaces, so
they need no rule. A line meets only the rules its first character after the indent
(`head`) allows (`_RULES_BY_HEAD`), and a pattern only after that; blank lines outside
fences and items skip the rules altogether, and a short line's `_Line` and list marker are
looked up, not recomputed, when it repeats. A megabyte of "-" lines, half a million of
them, takes about 0.5 s of CPU, 0.85-0.9x the single loop this replaced (e6a495d);
bench/outline.py measures every shape, tests/unit/test_outline.py checks the results
against that loop's, and tests/unit/test_paging.py bounds a page of such a document at
two seconds.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
# An entry heading's text: `parse.py` reads its kind, timestamp and reason.
ENTRY_HEADING = re.compile(r"(?P<kind>Added|Imported)\s+(?P<rest>\d.*)", re.IGNORECASE)
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
# The heading an append or import writes (docs/architecture.md, Document formats), exactly.
_APPENDED_HEADING = re.compile(
    r"## (?:Added|Imported) \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ(?: \u2014 [^\r\n]+)?(?:\r\n|\r|\n)?"
)
_APPENDED_PROVENANCE = ("> operation: ", "> session: ")
_ATX_H2 = re.compile(r" {0,3}##(?![^ \t\r\n])")
_SETEXT_H2 = re.compile(r" {0,3}-+[ \t]*(?:\r\n|\r|\n)?")
_THEMATIC_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*(?:\r\n|\r|\n)?")
_LIST_MARKER = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?=[ \t\r\n]|$)")
# First characters of lines that start a block of their own (heading, quote, fence).
_BLOCK_HEADS = frozenset("#>`~")


def split_lines(text: str) -> list[str]:
    """The document's lines with their line ends ("\\n", "\\r\\n" or "\\r")."""
    return _LINE.findall(text)


def is_blank(line: str) -> bool:
    return not line.strip()


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


@dataclass(frozen=True, slots=True)
class Outline:
    """Where a document's top-level blocks start, found in one linear pass over its lines."""

    headings: list[tuple[int, int, re.Match[str]]]  # entry headings: (start, end, match)
    # Arrays, not lists: a hostile megabyte can hold half a million one-line items.
    items: array[int]  # lines where a top-level list item starts
    blocks: array[int]  # lines where a top-level block starts (after a blank line, or an item)
    open_fence: str  # the fence ("```", "~~~~", …) left open at the end, or ""
    # Entry headings that ended a fence left open before them (`_appended_heading`).
    unclosed: list[int] = field(default_factory=list)


class _Line(NamedTuple):
    """A line's text and what the rules read from it (the same for every equal line)."""

    text: str
    stripped: str  # without its leading spaces
    indent: int
    head: str  # the first character after the indent, or ""
    blank: bool


@dataclass(slots=True)
class _State:
    """What the rules remember from the lines before."""

    lines: list[str]
    number: int = 0  # the line the rules are looking at
    headings: list[tuple[int, int, re.Match[str]]] = field(default_factory=list)
    items: array[int] = field(default_factory=lambda: array("l"))
    blocks: array[int] = field(default_factory=lambda: array("l"))
    fence: tuple[str, int] | None = None  # the open fence's character and length
    unclosed: list[int] = field(default_factory=list)  # see `Outline.unclosed`
    item_indent: int | None = None  # content column of the open top-level list item
    empty_item: bool = False  # the open item's first line has only its marker
    paragraph: bool = False  # the previous line was paragraph text (setext and lazy lines)
    paragraph_start: int = -1  # where that top-level paragraph started
    blank_before: bool = True  # the previous line was blank (or there was none)
    after_blank: bool = False  # this line starts a block after a blank line


def _appended_heading(state: _State, line: _Line) -> bool:
    """Inside an open top-level fence: an appended block's heading (blank lines around it,
    or its provenance line then a blank line) ends the fence; the rules below then take the
    line as the entry heading it is."""
    if line.head != "#" or line.indent or not state.blank_before:
        return False
    if not _APPENDED_HEADING.fullmatch(line.text):
        return False
    following = state.lines[state.number + 1 : state.number + 3]
    if following and following[0].startswith(_APPENDED_PROVENANCE):
        following = following[1:]
    if not following or not is_blank(following[0]):
        return False
    state.fence = None
    state.unclosed.append(state.number)
    return True


def _in_fence(state: _State, line: _Line) -> bool:
    if state.fence is None or state.item_indent is not None:
        return False
    char, length = state.fence
    closing = _FENCE.match(line.text) if line.head == char else None
    if closing and closing[1][0] == char and len(closing[1]) >= length:
        if not line.text[closing.end() :].strip():
            state.fence = None
    state.blank_before = line.blank
    return True


def _in_item(state: _State, line: _Line) -> bool:
    if state.item_indent is None:
        return False
    if line.blank and state.empty_item:
        state.item_indent = None  # an item starting with a blank line is empty
        return False
    if line.blank or line.indent >= state.item_indent:
        state.empty_item = False
        state.paragraph = state.paragraph and not line.blank
        state.blank_before = line.blank
        return True
    return False


def _lazy_line(state: _State, line: _Line) -> bool:
    """Any other line ends the open item, unless it continues the item's paragraph."""
    if state.item_indent is None:
        return False
    head = line.head
    if state.paragraph and head not in _BLOCK_HEADS and not (head in "-+*" or head.isdigit()):
        return True
    state.item_indent, state.paragraph = None, False
    return False


def _blank(state: _State) -> None:
    """Called for blank lines only (no pattern to try)."""
    state.paragraph, state.blank_before = False, True


def _atx_heading(state: _State, line: _Line) -> bool:
    content = _atx_content(line.text) if line.head == "#" else None
    if content is None:
        return False
    match = ENTRY_HEADING.fullmatch(content)
    if match:
        state.headings.append((state.number, state.number + 1, match))
    state.paragraph = False
    return True


def _atx_content(line: str) -> str | None:
    """The text of an ATX level-2 heading line (closing hashes removed), else None."""
    opening = _ATX_H2.match(line)
    if not opening:
        return None
    rest = line[opening.end() :].rstrip(" \t\r\n")
    unclosed = rest.rstrip("#")
    if len(unclosed) < len(rest) and (not unclosed or unclosed[-1] in " \t"):
        rest = unclosed
    return rest.strip()


def _setext_heading(state: _State, line: _Line) -> bool:
    # Called after a paragraph line and for "-" only (`_RULES_AFTER_PARAGRAPH`).
    if not _SETEXT_H2.fullmatch(line.text):
        return False
    # The whole paragraph is the heading's text: only a one-line one can match.
    number = state.number
    match = ENTRY_HEADING.fullmatch(state.lines[number - 1].strip())
    if match and state.paragraph_start == number - 1:
        state.headings.append((number - 1, number + 1, match))
    state.paragraph = False
    return True


def _fence_opening(state: _State, line: _Line) -> bool:
    opening = _FENCE.match(line.text) if line.head in "`~" else None
    if not opening or (opening[1][0] == "`" and "`" in line.text[opening.end() :]):
        return False
    state.fence, state.paragraph = (opening[1][0], len(opening[1])), False
    return True


def _thematic_break(state: _State, line: _Line) -> bool:
    head = line.head
    if not (
        head in "-*_" and line.stripped.count(head) >= 3 and _THEMATIC_BREAK.fullmatch(line.text)
    ):
        return False
    state.paragraph = False
    return True


def _list_item_start(state: _State, line: _Line) -> bool:
    # `_RULES_BY_HEAD` calls this rule for "-+*" or a digit only. Hostile documents repeat
    # one short line (half a million "-" lines): those are looked up in a cache, while the
    # longer, mostly distinct lines of ordinary lists would only fill it.
    text = line.text
    item = (_short_list_item if len(text) <= _SHORT else _list_item)(text)
    if item is None:
        return False
    state.items.append(state.number)
    if not state.after_blank:
        state.blocks.append(state.number)  # an item interrupting a paragraph starts a block
    state.item_indent, state.empty_item = item
    state.paragraph = not state.empty_item
    return True


def _list_item(line: str) -> tuple[int, bool] | None:
    """If `line` starts a list item: the column its content starts at, and whether the
    line has nothing after the marker. Not for a thematic break (checked first)."""
    marker = _LIST_MARKER.match(line)
    if not marker:
        return None
    end = marker.end()
    rest = line[end:]
    if not rest.strip():
        return end + 1, True
    spaces = indent_of(rest)
    return end + (spaces if 1 <= spaces <= 4 else 1), False


_SHORT = 16
_short_list_item = lru_cache(maxsize=1024)(_list_item)


def _paragraph(state: _State, line: _Line) -> None:
    if not state.paragraph and line.indent < 4 and line.head not in _BLOCK_HEADS:
        state.paragraph, state.paragraph_start = True, state.number


# The rules a line can still meet after the block-start bookkeeping, in the order of the
# table above, by the line's first character: most lines (text) meet none and go to
# `_paragraph`. A setext underline needs a paragraph line before it, so it has its own table.
_Rule = Callable[[_State, _Line], bool]
_RULES_BY_HEAD: dict[str, tuple[_Rule, ...]] = {
    "#": (_atx_heading,),
    "-": (_thematic_break, _list_item_start),
    "`": (_fence_opening,),
    "~": (_fence_opening,),
    "*": (_thematic_break, _list_item_start),
    "_": (_thematic_break,),
    "+": (_list_item_start,),
}
_RULES_AFTER_PARAGRAPH = {**_RULES_BY_HEAD, "-": (_setext_heading, *_RULES_BY_HEAD["-"])}
_DIGIT_RULES: tuple[_Rule, ...] = (_list_item_start,)  # any Unicode digit, as `\d` matches


def outline(lines: list[str]) -> Outline:
    """Top-level entry headings, list items and block starts, as markdown-it would find them
    for the documents agents write, in linear time (the rules: this module's docstring)."""
    state = _State(lines)
    # The hot loop of a hostile megabyte (half a million lines): the rules are called only
    # when they can apply, and `_Line` is built by `tuple.__new__` (its generated `__new__`
    # is one more Python call per line).
    new_line, digit_rules = tuple.__new__, _DIGIT_RULES
    rules_by_head, rules_after_paragraph = _RULES_BY_HEAD.get, _RULES_AFTER_PARAGRAPH.get
    blocks_append = state.blocks.append
    short_lines: dict[str, _Line] = {}
    for number, text in enumerate(lines):
        stripped = text.lstrip(" ")
        blank = not stripped.strip()
        if blank and state.item_indent is None and state.fence is None:
            _blank(state)  # the commonest line: no `_Line` needed
            continue
        state.number = number
        # Hostile documents repeat one short line: its `_Line` is made once.
        line = short_lines.get(text)
        if line is None:
            line = new_line(_Line, (text, stripped, len(text) - len(stripped), stripped[:1], blank))
            if len(text) <= _SHORT:
                short_lines[text] = line
        head = line.head
        # The first four rules only matter while a list item or a fence is open.
        if state.item_indent is not None:
            if _in_item(state, line) or _lazy_line(state, line):
                continue
        elif state.fence is not None:
            # Most fenced lines are not headings: no call for them (a megabyte of code).
            if not (head == "#" and _appended_heading(state, line)) and _in_fence(state, line):
                continue
        if blank:
            _blank(state)
            continue
        # A line that no rule above took starts a block when a blank line came before it.
        if state.blank_before:
            blocks_append(number)
        state.after_blank, state.blank_before = state.blank_before, False
        rules = (rules_after_paragraph if state.paragraph else rules_by_head)(head)
        for rule in rules or (digit_rules if head.isdigit() else ()):
            if rule(state, line):
                break
        else:
            _paragraph(state, line)
    fence = state.fence
    open_fence = fence[0] * fence[1] if fence and state.item_indent is None else ""
    return Outline(state.headings, state.items, state.blocks, open_fence, state.unclosed)
