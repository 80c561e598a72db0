"""Document formats, byte for byte, without a server (docs/architecture.md, Document formats)."""

from __future__ import annotations

import datetime as dt

import pytest

from devstack.coreapi.formats import (
    append_entry,
    combine,
    heading_timestamp,
    import_entry,
    strip_blank_lines,
)

AT = dt.datetime(2026, 10, 2, 16, 40, 55, 987654, tzinfo=dt.UTC)


def test_heading_timestamp_is_utc_seconds_with_z() -> None:
    pacific = dt.timezone(dt.timedelta(hours=-7))
    assert heading_timestamp(AT) == "2026-10-02T16:40:55Z"
    assert heading_timestamp(AT.astimezone(pacific)) == "2026-10-02T16:40:55Z"


def test_append_to_empty_document() -> None:
    assert append_entry("", "  - fact  \n\n", AT) == "## Added 2026-10-02T16:40:55Z\n\n- fact\n"


def test_append_with_reason_and_both_ids() -> None:
    assert append_entry("", "- fact", AT, "Stated", "op-1", "s-1") == (
        "## Added 2026-10-02T16:40:55Z \u2014 Stated\n"
        "> operation: op-1 \u00b7 session: s-1\n"
        "\n"
        "- fact\n"
    )


@pytest.mark.parametrize(
    ("operation_id", "session_id", "line"),
    [
        ("op-1", None, "> operation: op-1\n"),
        (None, "s-1", "> session: s-1\n"),
        ("", "", ""),
        (None, None, ""),
    ],
)
def test_provenance_line_omits_absent_parts(operation_id, session_id, line) -> None:
    expected = f"## Added 2026-10-02T16:40:55Z\n{line}\n- fact\n"
    assert append_entry("", "- fact", AT, None, operation_id, session_id) == expected


def test_append_after_existing_content_trims_trailing_whitespace() -> None:
    existing = "# Notes\n\n- one  \n\n\n \t"
    assert append_entry(existing, "- two", AT, "why") == (
        "# Notes\n\n- one\n\n## Added 2026-10-02T16:40:55Z \u2014 why\n\n- two\n"
    )


def test_whitespace_only_document_counts_as_empty() -> None:
    assert append_entry(" \n\n", "- x", AT) == "## Added 2026-10-02T16:40:55Z\n\n- x\n"


def test_multiline_or_blank_reason_stays_on_the_heading() -> None:
    assert append_entry("", "x", AT, "two\nlines").startswith(
        "## Added 2026-10-02T16:40:55Z \u2014 two lines\n\n"
    )
    assert append_entry("", "x", AT, "   ") == "## Added 2026-10-02T16:40:55Z\n\nx\n"


def test_import_append_uses_imported_heading_without_provenance() -> None:
    assert import_entry("- old\n", "\n- new\n\n", AT) == (
        "- old\n\n## Imported 2026-10-02T16:40:55Z\n\n- new\n"
    )


def test_strip_blank_lines_keeps_first_line_indentation() -> None:
    assert strip_blank_lines("\n \t\n    code\n- x  \n\r\n \n") == "    code\n- x  "
    assert strip_blank_lines(" \n\n") == ""


@pytest.mark.parametrize(
    ("user", "agent", "combined"),
    [
        ("# U\n", "# A\n", "# U\n\n# A\n"),
        ("\n\n# U\n\n\n", "  \n# A", "# U\n\n# A\n"),
        ("", "# A\n", "# A\n"),
        ("# U\n", "", "# U\n"),
        (" \n", "\n", ""),
        ("", "", ""),
    ],
)
def test_combine_joins_non_empty_parts_with_one_blank_line(user, agent, combined) -> None:
    assert combine(user, agent) == combined
