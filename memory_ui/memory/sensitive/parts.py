"""What a finding belongs to in a document: a dated entry, a top-level list item, or
the rest of the document."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Literal

from memory_ui.documents import Document, Entry, ListItem


@dataclass(frozen=True, slots=True)
class Part:
    """What a finding belongs to, as the memory page shows it and can delete it: a dated
    entry, a top-level list item of a document without entries, or the rest of such a
    document (which can only be edited as a whole)."""

    kind: Literal["entry", "item", "document"]
    start_line: int
    end_line: int
    entry: Entry | None = None
    item: ListItem | None = None
    number: int = 0  # 1-based, as the memory page numbers entries and items


def line_starts(text: str) -> list[int]:
    # The same line breaks as documents.outline.split_lines: "\n", "\r\n" or "\r".
    starts = [0]
    for newline in re.finditer(r"\r\n|\r|\n", text):
        starts.append(newline.end())
    return starts


def document_parts(document: Document) -> list[Part]:
    if document.structured:
        return [
            Part("entry", entry.start_line, entry.end_line, entry=entry, number=entry.index + 1)
            for entry in document.entries
        ]
    items = [
        Part("item", item.start_line, item.end_line, item=item, number=number)
        for number, item in enumerate(document.list_items, start=1)
        if item.depth == 0
    ]
    # The rest of the document (headings, paragraphs) can be edited, not deleted alone.
    return [*items, Part("document", 0, len(line_starts(document.text)))]


def part_at(parts: list[Part], line: int) -> int | None:
    """The index of the part holding `line`: an entry or item, else the whole document.
    Entries and top-level items come in document order and do not overlap."""
    starts = [part.start_line for part in parts if part.kind != "document"]
    i = bisect.bisect_right(starts, line) - 1
    if i >= 0 and line < parts[i].end_line:
        return i
    return len(parts) - 1 if parts and parts[-1].kind == "document" else None
