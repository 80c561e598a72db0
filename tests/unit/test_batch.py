"""Deleting many entries of one document at once (`memory_ui.memory.batch.without_entries`):
parsed once, yet the same text as removing the entries one at a time."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from devstack.coreapi import formats
from memory_ui.documents import (
    list_items_between,
    parse_document,
    remove_entry,
    remove_lines,
)
from memory_ui.memory.batch import without_entries


def one_at_a_time(text: str, indexes: set[int]) -> str:
    """The reference: each entry removed from the last one up, the text read again each time."""
    for index in sorted(indexes, reverse=True):
        text = remove_entry(text, index)
    return text


def documents() -> list[str]:
    """Appended entries (as CoreAPI writes them) after a preamble, with the blank lines
    and line endings people and agents leave: none, several, CRLF, no final newline."""
    start = datetime(2026, 11, 1, 8, tzinfo=UTC)
    appended = "# About me\n\n- Likes tea.\n"
    for n in range(12):
        appended = formats.append_entry(
            appended, f"- Fact {n}.\n\n  more", start + timedelta(minutes=n), "Batch"
        )
    crowded = appended.replace("\n\n## Added", "\n\n\n\n## Added")
    tight = appended.replace("\n\n## Added", "\n## Added")
    return [appended, crowded, tight, appended.replace("\n", "\r\n"), appended.rstrip("\n")]


def test_many_entries_go_as_if_removed_one_at_a_time() -> None:
    rng = random.Random(22)
    for text in documents():
        count = len(parse_document(text).entries)
        assert count == 13
        choices = [set(range(1, count)), {0}, {count - 1}, {3, 4, 5}, {0, 2, 4, 6}]
        choices += [set(rng.sample(range(count), rng.randint(1, count - 1))) for _ in range(40)]
        for indexes in choices:
            assert without_entries(text, indexes) == one_at_a_time(text, indexes), indexes


def test_every_entry_with_the_preamble_leaves_nothing() -> None:
    # One at a time cannot do this: without its dated entries, the text before them is no
    # longer an entry (the document is read as one whole), so the last removal found nothing.
    for text in documents():
        assert without_entries(text, set(range(13))) == ""


def test_entries_not_there_are_ignored() -> None:
    text = documents()[0]
    assert without_entries(text, {99}) is None
    assert without_entries(text, {1, 99}) == one_at_a_time(text, {1})


def test_list_items_go_alone_as_if_removed_one_at_a_time() -> None:
    # Items of a loose list end in the blank line after them, so two items with one kept
    # between them, or next to a whole entry removed, must not shift each other's lines.
    start = datetime(2026, 11, 1, 8, tzinfo=UTC)
    text = formats.append_entry("", "- a\n\n- b\n\n- c\n\n- d", start, "Loose")
    text = formats.append_entry(text, "- e\n- f", start + timedelta(minutes=1), "Tight")
    text = formats.append_entry(text, "Whole.", start + timedelta(minutes=2))
    document = parse_document(text)
    items = {index: [] for index in range(2)}
    for index in range(2):
        entry = document.entries[index]
        found = list_items_between(document.lines, entry.start_line, entry.end_line)
        items[index] = [(item.start_line, item.end_line) for item in found]
    chosen = {0: [items[0][0], items[0][2], items[0][3]], 1: [items[1][1]]}
    expected = text
    for start_line, end_line in sorted([*chosen[0], *chosen[1]], reverse=True):
        expected = remove_lines(expected, start_line, end_line)

    assert without_entries(text, {0, 1}, chosen) == expected
    assert "- b" in expected and "- e" in expected and "- f" not in expected
    assert without_entries(text, {0, 1, 2}, chosen) == remove_entry(expected, 2)
    # A range that is not one of the entry's top-level items: not this document.
    assert without_entries(text, {0}, {0: [(items[0][0][0], items[0][1][1])]}) is None
