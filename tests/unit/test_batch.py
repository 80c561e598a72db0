"""Deleting many entries of one document at once (`memory_ui.memory.batch.without_entries`):
parsed once, yet the same text as removing the entries one at a time."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from devstack.coreapi import formats
from memory_ui.documents import parse_document, remove_entry
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
