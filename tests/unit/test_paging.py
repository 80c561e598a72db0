"""Pages of a memory document: bounded whatever the document, parsed once per version."""

from __future__ import annotations

import time

import pytest

from memory_ui.documents import count_entries, outline, paging, parse_document
from memory_ui.documents.paging import (
    PAGE_CHARS,
    PAGE_PARTS,
    PART_CHARS,
    RAW_PAGE_CHARS,
    Prepared,
    prepared,
    shown_markdown,
)
from tests.shapes import HOSTILE_SHAPES, long_list, structured
from tests.unit.timing import timed

MiB = 1024 * 1024


def test_entries_come_newest_first_fifty_a_page_to_the_end():
    document = Prepared(structured(120_000, body=100))
    total = document.total
    seen, number = [], 1
    while (page := document.page(number)) is not None:
        assert len(page.parts) <= PAGE_PARTS
        assert page.first == len(seen) + 1
        seen += [part.entry.index for part in page.parts]
        assert page.has_next == (len(seen) < total)
        number += 1
    assert seen == list(range(total - 1, -1, -1))


def test_a_page_renders_a_bounded_amount_however_large_its_parts():
    text = "".join(
        f"## Added 2026-01-{n + 1:02d}T00:00:00Z\n\n" + "word " * 20_000 + "\n\n" for n in range(5)
    )
    page = Prepared(text).page(1)
    assert sum(part.shown for part in page.parts) <= PAGE_CHARS
    assert all(part.truncated and part.shown <= PART_CHARS for part in page.parts)
    assert len(page.parts) == PAGE_CHARS // PART_CHARS


def test_a_document_without_entries_is_paged_by_its_blocks_and_list_items():
    document = Prepared(long_list(100_000))
    first, second = document.page(1), document.page(2)
    assert len(first.parts) == PAGE_PARTS and first.has_next
    assert [item.start_line for item in first.items] == list(range(PAGE_PARTS))
    assert second.items[0].start_line == PAGE_PARTS
    assert all(item.depth == 0 for item in first.items)


def test_the_page_of_an_entry():
    document = Prepared(structured(120_000, body=100))
    newest, oldest = document.total - 1, 0
    assert document.page_of_entry(newest) == 1
    page = document.page(document.page_of_entry(oldest))
    assert oldest in [part.entry.index for part in page.parts]
    assert document.page_of_entry(10_000) == 1


def test_the_markdown_view_is_paged_at_line_ends():
    text = long_list(300_000)
    document = Prepared(text)
    first = document.raw_page(1)
    parts = [document.raw_page(n).text for n in range(1, first.count + 1)]
    assert "".join(parts) == text
    assert all(len(part) <= RAW_PAGE_CHARS + 200 and part.endswith("\n") for part in parts)
    assert document.raw_page(first.count + 1) is None


def test_a_cut_inside_a_fence_closes_it():
    text = "Before\n\n```\n" + "code line\n" * 5000 + "```\n"
    shown = shown_markdown(text, 1000)
    assert shown.endswith("\n```\n") and len(shown) < 1100
    assert outline(shown.splitlines(keepends=True)).open_fence == ""


def test_cards_count_entries_as_the_page_does():
    for text in [
        structured(50_000),
        long_list(20_000),
        "Just a note.\n",
        "",
        "Preamble\n\n" + structured(3_000),
        "```\n## Added 2026-01-01T00:00:00Z\n```\n",
        *(shape(20_000) for shape in HOSTILE_SHAPES.values()),
    ]:
        assert count_entries(text) == parse_document(text).entry_count


@pytest.mark.parametrize("name", list(HOSTILE_SHAPES))
def test_hostile_megabytes_parse_into_pages_in_bounded_time(name):
    text = HOSTILE_SHAPES[name](MiB)
    page = timed(lambda: Prepared(text).page(1))
    assert page is not None


def test_a_document_is_parsed_once_per_version(settings, monkeypatch):
    settings.PORTAL_RENDER_CACHE_SECONDS = 300
    paging.forget_prepared()
    text = structured(10_000)
    assert prepared(text) is prepared(text)
    assert prepared(text + "\n- more\n") is not prepared(text)


def test_the_cache_keeps_within_its_size_and_age(settings, monkeypatch):
    paging.forget_prepared()
    settings.PORTAL_RENDER_CACHE_SECONDS = 300
    one, two = structured(100_000), structured(100_000, salt=" b")
    settings.PORTAL_RENDER_CACHE_BYTES = Prepared(one).cost + 1000  # room for one of them
    first = prepared(one)
    prepared(two)
    assert prepared(one) is not first  # evicted, least recently used first

    settings.PORTAL_RENDER_CACHE_BYTES = 10 * MiB
    now = time.monotonic()
    kept = prepared(one)
    monkeypatch.setattr(paging.time, "monotonic", lambda: now + 301)
    assert prepared(one) is not kept  # too old


def test_no_cache_when_switched_off(settings):
    settings.PORTAL_RENDER_CACHE_SECONDS = 0
    text = structured(5_000)
    assert prepared(text) is not prepared(text)
