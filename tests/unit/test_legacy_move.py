"""What the move counts as one item and as "already there", and the command's input and
table (memory_ui.memory.source_move, manage.py move_legacy_memory)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError

from memory_ui.management.commands.move_legacy_memory import read_users, table
from memory_ui.memory.source_move import _normal, _present, items_of


def test_items_are_list_items_with_continuations_and_paragraphs() -> None:
    text = "# Trips\n\n- Berlin, June.\n  Hotel Adlon.\n- Rome.\n\nA paragraph\nover two lines.\n"

    assert items_of(text) == [
        "# Trips",
        "- Berlin, June.\n  Hotel Adlon.",
        "- Rome.",
        "A paragraph\nover two lines.",
    ]
    assert items_of("") == [] and items_of("\n\n") == []


@pytest.mark.parametrize(
    "document",
    [
        "## Added 2026-01-01\n\n* Prefers   aisle seats.\n",  # another list marker, spacing
        "Notes: Prefers aisle seats. More.",  # inside a sentence
        "\\# Prefers aisle seats.",  # the escape the portal adds to a heading
    ],
)
def test_already_there_ignores_whitespace_and_markers(document: str) -> None:
    assert _present("- Prefers aisle seats.", [_normal(document)])


def test_different_text_is_not_there() -> None:
    assert not _present("- Prefers window seats.", [_normal("- Prefers aisle seats.")])


def test_users_file(tmp_path: Path) -> None:
    path = tmp_path / "users.txt"
    path.write_text(
        "# batch 1\nAlice@Contoso.com\n\nbob@contoso.com  # helpdesk\nalice@contoso.com\n"
    )

    assert read_users(path) == ["alice@contoso.com", "bob@contoso.com"]
    path.write_text("alice@contoso.com\nnot a upn\n")
    with pytest.raises(CommandError, match=r"users.txt:2: 'not a upn' is not a UPN"):
        read_users(path)
    with pytest.raises(CommandError, match="Cannot read"):
        read_users(tmp_path / "missing.txt")


def test_table_aligns_columns() -> None:
    assert table(("user", "files"), [("a@x.com", "10"), ("bb@x.com", "2")]).splitlines() == [
        "user      files",
        "--------  -----",
        "a@x.com   10",
        "bb@x.com  2",
    ]
