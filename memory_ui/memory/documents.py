"""Memory documents: render untrusted markdown safely, split it into entries, edit by line range.

Agents write memory from prompts, so every document is untrusted input. Rendering is
markdown-it (raw HTML off) followed by one nh3 allow-list; `render_markdown` is the only
place in the project that marks HTML safe.

Line numbers are 0-based and half-open over the document's lines, where a line ends at
"\\n", "\\r\\n" or "\\r" (what markdown-it counts; `str.splitlines` also breaks at form
feeds and U+2028, which would shift every line number after one of them).
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Literal

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from memory_ui.text import without_bidi_controls

# --- Rendering ---------------------------------------------------------------------------


def _render_image_as_link(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # An <img> in agent-written memory loads a URL as soon as the page opens: a tracking
    # pixel, or a way to leak data through the query string. A link loads nothing until
    # the user clicks it, and still goes through the sanitizer's scheme check.
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    label = self.renderInlineAsText(token.children or [], options, env) or src
    return f'<a href="{escapeHtml(src)}">{escapeHtml(label)}</a>'


def _render_cell_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # markdown-it aligns table cells with style="text-align:…", which a strict CSP blocks;
    # the align attribute says the same without inline style.
    token = tokens[idx]
    style = token.attrs.pop("style", None)
    if isinstance(style, str) and style.startswith("text-align:"):
        token.attrSet("align", style.removeprefix("text-align:"))
    return self.renderToken(tokens, idx, options, env)


_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_MARKDOWN.add_render_rule("image", _render_image_as_link)
_MARKDOWN.add_render_rule("th_open", _render_cell_open)
_MARKDOWN.add_render_rule("td_open", _render_cell_open)
# The same block rules without inline parsing: where the blocks and list items are.
_BLOCKS = MarkdownIt("commonmark", {"html": False}).enable(["table"]).disable("inline")

_LANGUAGE_CLASS = re.compile(r"language-[\w+#.-]+")


def _filter_attribute(tag: str, attribute: str, value: str) -> str | None:
    # Fenced code carries class="language-…"; any other class could borrow the portal's CSS.
    if tag == "code" and attribute == "class":
        return value if _LANGUAGE_CLASS.fullmatch(value) else None
    return value


_ALIGN = {"left", "center", "right"}
_CLEANER = nh3.Cleaner(
    # Exactly what the markdown above can produce, nothing more (no img: see above).
    tags={
        *("p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code", "hr", "br"),
        *("ul", "ol", "li", "em", "strong", "s", "del", "a"),
        *("table", "thead", "tbody", "tr", "th", "td"),
    },
    attributes={"a": {"href", "title"}, "code": {"class"}, "ol": {"start"}},
    tag_attribute_values={"th": {"align": _ALIGN}, "td": {"align": _ALIGN}},
    attribute_filter=_filter_attribute,
    url_schemes={"http", "https", "mailto"},
    # A relative URL would resolve against the portal itself (including //host, which
    # leaves it); memory has no base of its own, so such links keep only their text.
    url_relative="deny",
    link_rel="noopener noreferrer nofollow",
)


def render_markdown(text: str) -> SafeString:
    """Untrusted markdown to HTML that is safe to insert into a page."""
    # The only mark_safe in the project: raw HTML is off in markdown-it and whatever it
    # emits passes the allow-list above.
    return mark_safe(_CLEANER.clean(_MARKDOWN.render(text)))  # noqa: S308


# --- Parsing -----------------------------------------------------------------------------


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


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_HEADING = re.compile(r"(?P<kind>Added|Imported)\s+(?P<rest>\d.*)", re.IGNORECASE)
# Agents write headings and provenance lines, so these patterns must take linear time on
# any line, however long: none may scan a whitespace run again from inside it. Possessive
# `*+`/`++` never give whitespace back (nothing after them starts with whitespace, so they
# match what `*`/`+` did), and `(?<!\s)` lets a separator start only where a whitespace run
# starts, which is where the leftmost match started anyway (split is called with
# maxsplit=1; later matches could differ). The previous patterns took 10-15 s on a heading
# or "> " line with 64,000 spaces before its last character, and cubic time on
# "> operation: a" followed by spaces.
# The emulator writes an em dash; people typing by hand write " - " or " -- ".
_REASON_SEPARATOR = re.compile(r"(?<!\s)(?:\s*+\u2014\s*+|\s++--?\s++)")
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
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*(?:\r\n|\r|\n))+")


def _lines(text: str) -> list[str]:
    return _LINE.findall(text)


def _is_blank(line: str) -> bool:
    return not line.strip()


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
    stamp, *rest = _REASON_SEPARATOR.split(match["rest"], maxsplit=1)
    reason = without_bidi_controls(rest[0]).strip() if rest else ""
    body_start = heading_end
    while body_start < end and _is_blank(lines[body_start]):
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


@dataclass(frozen=True, slots=True)
class Outline:
    """Where a document's top-level blocks start, found in one linear pass over its lines."""

    headings: list[tuple[int, int, re.Match[str]]]  # entry headings: (start, end, match)
    # Arrays, not lists: a hostile megabyte can hold half a million one-line items.
    items: array[int]  # lines where a top-level list item starts
    blocks: array[int]  # lines where a top-level block starts (after a blank line, or an item)
    open_fence: str  # the fence ("```", "~~~~", …) left open at the end, or ""


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ATX_H2 = re.compile(r" {0,3}##(?![^ \t\r\n])")
_SETEXT_H2 = re.compile(r" {0,3}-+[ \t]*(?:\r\n|\r|\n)?")
_THEMATIC_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*(?:\r\n|\r|\n)?")
_LIST_MARKER = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?=[ \t\r\n]|$)")


_BLOCK_HEADS = frozenset("#>`~")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


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
    spaces = _indent(rest)
    return end + (spaces if 1 <= spaces <= 4 else 1), False


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


def outline(lines: list[str]) -> Outline:
    """Top-level entry headings, list items and block starts, as markdown-it would find them
    for the documents agents write, in linear time: markdown-it's own parse takes seconds on
    some hostile megabyte documents (many table columns, long runs of "-" lines).

    Followed: fenced code (headings inside do not count), list items (a line indented to
    the item's content belongs to it, and so does lazy paragraph text), ATX and setext
    headings (which interrupt paragraphs). Blockquote and indented-code lines never start
    with "##" at 0-3 spaces, so they need no tracking.
    """
    headings: list[tuple[int, int, re.Match[str]]] = []
    items: array[int] = array("l")
    blocks: array[int] = array("l")
    fence: tuple[str, int] | None = None  # the open fence's character and length
    item_indent: int | None = None  # content column of the open top-level list item
    paragraph = False  # the previous line was paragraph text (setext and lazy lines)
    paragraph_start = -1  # where that top-level paragraph started
    empty_item = False  # the open item's first line has only its marker
    blank_before = True
    add_item, add_block = items.append, blocks.append
    for number, line in enumerate(lines):
        stripped = line.lstrip(" ")
        blank = not stripped.strip()
        indent = len(line) - len(stripped)
        # The first character after the indent decides which rules could apply: checking
        # it first (and only then a pattern) keeps a megabyte of one-character lines, half
        # a million of them, within a second.
        head = stripped[:1]
        if fence is not None and item_indent is None:
            opening = _FENCE.match(line) if head == fence[0] else None
            if opening and opening[1][0] == fence[0] and len(opening[1]) >= fence[1]:
                if not line[opening.end() :].strip():
                    fence = None
            blank_before = blank
            continue
        if item_indent is not None:
            if blank and empty_item:  # an item starting with a blank line is empty
                item_indent = None
            elif blank or indent >= item_indent:
                empty_item = False
                paragraph = paragraph and not blank
                blank_before = blank
                continue
        if item_indent is not None:
            if paragraph and head not in _BLOCK_HEADS and not (head in "-+*" or head.isdigit()):
                continue  # lazy paragraph text
            item_indent, paragraph = None, False
        if blank:
            paragraph, blank_before = False, True
            continue
        if blank_before:
            add_block(number)
        after_blank, blank_before = blank_before, False
        content = _atx_content(line) if head == "#" else None
        if content is not None:
            match = _HEADING.fullmatch(content)
            if match:
                headings.append((number, number + 1, match))
            paragraph = False
            continue
        if paragraph and head == "-" and _SETEXT_H2.fullmatch(line):
            # The whole paragraph is the heading's text: only a one-line one can match.
            match = _HEADING.fullmatch(lines[number - 1].strip())
            if match and paragraph_start == number - 1:
                headings.append((number - 1, number + 1, match))
            paragraph = False
            continue
        opening = _FENCE.match(line) if head in "`~" else None
        if opening and not (opening[1][0] == "`" and "`" in line[opening.end() :]):
            fence, paragraph = (opening[1][0], len(opening[1])), False
            continue
        if head in "-*_" and stripped.count(head) >= 3 and _THEMATIC_BREAK.fullmatch(line):
            paragraph = False
            continue
        item = _list_item(line) if head in "-+*" or head.isdigit() else None
        if item is not None:
            add_item(number)
            if not after_blank:
                add_block(number)
            item_indent, empty_item = item
            paragraph = not empty_item
            continue
        if not paragraph and indent < 4 and head not in _BLOCK_HEADS:
            paragraph, paragraph_start = True, number
    open_fence = fence[0] * fence[1] if fence and item_indent is None else ""
    return Outline(headings, items, blocks, open_fence)


def _entry_count(lines: list[str], found: Outline) -> int:
    if found.headings:
        preamble = any(not _is_blank(line) for line in lines[: found.headings[0][0]])
        return len(found.headings) + preamble
    if not any(not _is_blank(line) for line in lines):
        return 0
    return len(found.items) or 1


def count_entries(text: str) -> int:
    """What `parse_document(text).entry_count` says, without making the entries: for the
    dashboard's cards, which show only the count."""
    lines = _lines(text)
    return _entry_count(lines, outline(lines))


def parse_document(text: str) -> Document:
    """Split a memory document at its `## Added …` / `## Imported …` headings.

    Only top-level headings split (see `outline`): a heading inside a fenced code block, a
    quote or a list never does.
    """
    lines = _lines(text)
    found = outline(lines)
    headings = found.headings
    if not headings:
        return Document(text, [], found, lines)

    entries: list[Entry] = []
    first_start = headings[0][0]
    if any(not _is_blank(line) for line in lines[:first_start]):
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
    return Document(text, entries, found, lines)


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


# --- The append and import block format ----------------------------------------------
# What CoreAPI writes (docs/architecture.md, Document formats): the document without its
# trailing whitespace, a blank line, then a heading and the text. `parse_document` reads
# these headings back; `appended` predicts a document after an append or import.


def entry_heading(kind: Literal["Added", "Imported"], when: datetime, reason: str = "") -> str:
    stamp = when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"## {kind} {stamp}" + (f" \u2014 {reason}" if reason else "")


def neutralise_entry_headings(text: str) -> str:
    """`text` with every line that would start an entry of its own escaped, so a note
    cannot forge provenance ("## Added 2020-01-01T00:00:00Z — fake" inside a note stays
    text of that note). Only the headings `parse_document` would split at change."""
    lines = _lines(text)
    for start, _, _ in outline(lines).headings:
        indent = _indent(lines[start])
        # "\#" is a literal "#" (ATX); a setext heading keeps a visible backslash.
        lines[start] = lines[start][:indent] + "\\" + lines[start][indent:]
    return "".join(lines)


def appended(current: str, heading: str, text: str) -> str:
    """`current` with a block under `heading` added at the end, as CoreAPI adds it."""
    block = f"{heading}\n\n{text.strip()}\n"
    return f"{current.rstrip()}\n\n{block}" if current.strip() else block


# --- Editing -----------------------------------------------------------------------------


def remove_entry(text: str, index: int) -> str:
    """The document without entry `index` (as numbered by `parse_document`)."""
    entries = parse_document(text).entries
    if not 0 <= index < len(entries):
        raise OutOfRangeError(f"entry {index} does not exist; the document has {len(entries)}")
    entry = entries[index]
    return remove_lines(text, entry.start_line, entry.end_line)


def remove_lines(text: str, start_line: int, end_line: int) -> str:
    """The document without lines [start_line, end_line); only the seam's blank lines change.

    At most one blank line is left where the lines were, and only if there was one next to
    them, so removing an item from a tight list keeps it tight. No blank lines are left at
    the start or end, and the document ends in a newline exactly when it did before.
    """
    lines = _lines(text)
    if not 0 <= start_line < end_line <= len(lines):
        raise OutOfRangeError(
            f"lines {start_line}-{end_line} are not within the document's {len(lines)} lines"
        )
    before, removed, after = lines[:start_line], lines[start_line:end_line], lines[end_line:]
    # A blank line touching the removed range, kept as the separator if one is needed.
    edges = before[-1:] + removed[:1] + removed[-1:] + after[:1]
    seam = [line for line in edges if _is_blank(line)][:1]
    while before and _is_blank(before[-1]):
        before.pop()
    # Counted, not popped from the front: pop(0) is linear, so a long run of blank lines
    # after the removed range would make this quadratic.
    skip = 0
    while skip < len(after) and _is_blank(after[skip]):
        skip += 1
    after = after[skip:]

    if not after:
        result = "".join(before)
        if text.endswith(("\n", "\r")):
            return result
        # The last line had no newline; neither does the new last line.
        return result.removesuffix("\n").removesuffix("\r")
    return "".join(before + (seam if before else []) + after)


class EntryEditError(ValueError):
    """An edited entry that cannot be written back as one entry."""


def replace_entry(text: str, index: int, body: str, reason: str = "") -> str:
    """The document with entry `index`'s lines replaced by `body` under a rebuilt heading:
    the same kind and timestamp (as written), `reason` instead of the old one, the
    provenance line kept. A preamble has no heading, so only its text changes. Every other
    line stays as it was.

    The new text cannot split into entries of its own or swallow the ones after it: entry
    headings in it are escaped, a fence it leaves open is closed, and the result must have
    as many entries as before (else `EntryEditError`)."""
    document = parse_document(text)
    if not 0 <= index < len(document.entries):
        raise OutOfRangeError(
            f"entry {index} does not exist; the document has {len(document.entries)}"
        )
    entry = document.entries[index]
    lines = document.lines
    body = neutralise_entry_headings(body.strip())
    if not body:
        raise EntryEditError("An entry needs some text; to remove it, use Delete.")
    fence = outline(_lines(body + "\n")).open_fence
    if fence:
        body = f"{body}\n{fence}"
    block = f"{body}\n"
    if entry.kind != "preamble":
        heading = next(h for h in document.outline.headings if h[0] == entry.start_line)
        stamp = _REASON_SEPARATOR.split(heading[2]["rest"], maxsplit=1)[0].strip()
        kind = "Imported" if entry.kind == "imported" else "Added"
        reason = " ".join(without_bidi_controls(reason).split())
        title = f"## {kind} {stamp}" + (f" \u2014 {reason}" if reason else "")
        provenance = ""
        if entry.operation_id or entry.session_id:
            after_heading = heading[1]
            while _is_blank(lines[after_heading]):
                after_heading += 1
            provenance = lines[after_heading].rstrip("\r\n") + "\n"
        block = f"{title}\n{provenance}\n{block}"
    after = lines[entry.end_line :]
    if after:
        block += "\n"
    result = "".join(lines[: entry.start_line]) + block + "".join(after)
    if len(parse_document(result).entries) != len(document.entries):
        raise EntryEditError(
            "This text would change how the memory splits into entries; edit it as markdown."
        )
    return result


_LABEL_MARKS = re.compile(r"^(?:[#>*+\-\s]|\d{1,9}[.)]\s)+|[*_`]+")


def entry_label(text: str, limit: int = 40) -> str:
    """A few words naming what was deleted, for "Deleted “…”": the entry's reason, or the
    first line of its text without markdown marks; cut at `limit` characters."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    words = " ".join(_LABEL_MARKS.sub("", without_bidi_controls(first)).split())
    return words if len(words) <= limit else words[: limit - 1].rstrip() + "\u2026"


def content_hash(text: str) -> str:
    """SHA-256 of the document, to notice that it changed since the user loaded it."""
    return hashlib.sha256(text.encode()).hexdigest()
