"""Writing entries: the block format CoreAPI appends and imports in, and edits by entry
or line range that change only those lines."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Literal

from memory_ui.documents.outline import indent_of, is_blank, outline, split_lines
from memory_ui.documents.parse import (
    REASON_SEPARATOR,
    OutOfRangeError,
    is_provenance_line,
    parse_document,
)
from memory_ui.text import without_bidi_controls

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
    lines = split_lines(text)
    for start, _, _ in outline(lines).headings:
        indent = indent_of(lines[start])
        # "\#" is a literal "#" (ATX); a setext heading keeps a visible backslash.
        lines[start] = lines[start][:indent] + "\\" + lines[start][indent:]
    return "".join(lines)


def neutralise_provenance(text: str) -> str:
    """`text` with its first line escaped if, written under an entry heading, it would be
    read as that entry's provenance: typed or imported text cannot claim operation and
    session ids ("> operation: X · session: Y" stays text, shown as such)."""
    lines = split_lines(text)
    first = next((i for i, line in enumerate(lines) if not is_blank(line)), None)
    if first is not None and is_provenance_line(lines[first].lstrip()):
        indent = indent_of(lines[first])
        # "\>" is a literal ">": the line no longer matches, and reads as typed.
        lines[first] = lines[first][:indent] + "\\" + lines[first][indent:]
    return "".join(lines)


def appended(current: str, heading: str, text: str) -> str:
    """`current` with a block under `heading` added at the end, as CoreAPI adds it."""
    block = f"{heading}\n\n{text.strip()}\n"
    return f"{current.rstrip()}\n\n{block}" if current.strip() else block


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
    lines = split_lines(text)
    if not 0 <= start_line < end_line <= len(lines):
        raise OutOfRangeError(
            f"lines {start_line}-{end_line} are not within the document's {len(lines)} lines"
        )
    before, removed, after = lines[:start_line], lines[start_line:end_line], lines[end_line:]
    # A blank line touching the removed range, kept as the separator if one is needed.
    edges = before[-1:] + removed[:1] + removed[-1:] + after[:1]
    seam = [line for line in edges if is_blank(line)][:1]
    while before and is_blank(before[-1]):
        before.pop()
    # Counted, not popped from the front: pop(0) is linear, so a long run of blank lines
    # after the removed range would make this quadratic.
    skip = 0
    while skip < len(after) and is_blank(after[skip]):
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
    provenance line kept as it was (none stays none: a provenance-looking first line of
    `body` is escaped). A preamble has no heading, so only its text changes. Every other
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
    if entry.kind != "preamble":
        body = neutralise_provenance(body)
    if not body:
        raise EntryEditError("An entry needs some text; to remove it, use Delete.")
    fence = outline(split_lines(body + "\n")).open_fence
    if fence:
        body = f"{body}\n{fence}"
    block = f"{body}\n"
    if entry.kind != "preamble":
        heading = next(h for h in document.outline.headings if h[0] == entry.start_line)
        stamp = REASON_SEPARATOR.split(heading[2]["rest"], maxsplit=1)[0].strip()
        kind = "Imported" if entry.kind == "imported" else "Added"
        reason = " ".join(without_bidi_controls(reason).split())
        title = f"## {kind} {stamp}" + (f" \u2014 {reason}" if reason else "")
        provenance = ""
        if entry.operation_id or entry.session_id:
            after_heading = heading[1]
            while is_blank(lines[after_heading]):
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
