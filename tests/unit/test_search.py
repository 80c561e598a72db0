"""Searching memory documents (memory_ui/memory/search.py), without CoreAPI: documents
already read, as `memory_load_many` hands them over."""

from __future__ import annotations

import re
import time
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from devstack.coreapi import formats
from memory_ui.memory.search import (
    EXCERPT_CONTEXT,
    Limits,
    SearchQuery,
    Segment,
    day_range,
    excerpt,
    search_loaded,
)
from memory_ui.memory.source_search import SourceHit, SourceResults, search_counts
from memory_ui.sources.agent_memory import Target
from memory_ui.sources.coreapi import Agent, CoreAPIUnavailable, Memory
from memory_ui.sources.coreapi.operations import Loaded
from memory_ui.sources.protocol import Source, SourceError, SourceTarget

TRAVEL = Agent(name="travel-planner", object_id="/agents/travel-planner", display_name="Travel")
HELPDESK = Agent(name="it-helpdesk", object_id="/agents/it-helpdesk", display_name="IT Helpdesk")


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def entries(*blocks: tuple[str, str, str | None]) -> str:
    """A document of appended entries: (body, timestamp, reason)."""
    document = ""
    for body, stamp, reason in blocks:
        document = formats.append_entry(document, body, at(stamp), reason=reason)
    return document


def loaded(text: str, target: Target | None = None) -> Loaded:
    target = target or Target("user")
    return Loaded(
        target, Memory(scope=target.scope, upn="alice@contoso.com", content_markdown=text)
    )


def search(*documents: Loaded, limits: Limits | None = None, **query: object):
    return search_loaded(list(documents), SearchQuery(**query), limits or Limits())  # type: ignore[arg-type]


def plain(segments: list[Segment]) -> str:
    return "".join(s.text for s in segments)


def marked(segments: list[Segment]) -> list[str]:
    return [s.text for s in segments if s.match]


USER = entries(
    ("- Prefers concise answers.", "2026-09-14T08:12:03Z", "User introduced herself"),
    ("- Writes in British English.", "2026-10-02T16:40:55Z", "User stated preference"),
    ("- Flies from Seattle.", "2026-11-20T11:05:10Z", None),
)


def test_text_matches_entry_bodies_case_insensitively_newest_first():
    results = search(loaded(USER), text="PREFERS")
    [memory] = results.memories
    assert memory.total == 1
    [hit] = memory.hits
    assert (hit.index, hit.kind, hit.timestamp) == (0, "added", at("2026-09-14T08:12:03Z"))
    assert marked(hit.excerpt) == ["Prefers"]
    assert plain(hit.excerpt) == "- Prefers concise answers."

    everything = search(loaded(USER)).memories[0]
    assert [hit.index for hit in everything.hits] == [2, 1, 0]  # newest first


def test_text_matches_the_reason_too_and_is_highlighted_there():
    [hit] = search(loaded(USER), text="stated").memories[0].hits
    assert hit.index == 1
    assert marked(hit.reason) == ["stated"]
    assert plain(hit.reason) == "User stated preference"
    assert marked(hit.excerpt) == []  # the body is shown from its start, nothing to mark
    assert plain(hit.excerpt) == "- Writes in British English."


def test_whitespace_in_the_text_matches_any_run_of_whitespace():
    document = "- Prefers   aisle\nseats on morning flights.\n"
    [hit] = search(loaded(document), text="aisle seats").memories[0].hits
    assert marked(hit.excerpt) == ["aisle seats"]  # collapsed to one line


def test_the_text_is_taken_literally_never_as_a_pattern():
    document = entries(("- Budget: $100 (approx.) per night.", "2026-10-01T00:00:00Z", None))
    assert search(loaded(document), text="$100 (approx.)").total == 1
    assert search(loaded(document), text=".*").total == 0
    assert search(loaded(document), text="[").total == 0


def test_reason_filter_is_a_case_insensitive_substring_and_needs_a_reason():
    results = search(loaded(USER), reason="user")
    assert [hit.index for hit in results.memories[0].hits] == [1, 0]
    assert marked(results.memories[0].hits[0].reason) == ["User"]
    assert search(loaded(USER), reason="user", text="british").total == 1
    assert search(loaded(USER), reason="nobody wrote this").total == 0


def test_date_range_is_inclusive_start_exclusive_end():
    start, end = day_range(date(2026, 10, 2), date(2026, 11, 20), UTC)
    assert (start, end) == (at("2026-10-02T00:00:00Z"), at("2026-11-21T00:00:00Z"))
    results = search(loaded(USER), start=start, end=end)
    assert [hit.index for hit in results.memories[0].hits] == [2, 1]
    only_start = search(loaded(USER), start=at("2026-10-02T16:40:56Z"))
    assert [hit.index for hit in only_start.memories[0].hits] == [2]
    only_end = search(loaded(USER), end=at("2026-10-02T16:40:55Z"))
    assert [hit.index for hit in only_end.memories[0].hits] == [0]


def test_day_range_follows_the_time_zone():
    start, end = day_range(date(2026, 10, 2), date(2026, 10, 2), ZoneInfo("America/Los_Angeles"))
    assert start == at("2026-10-02T07:00:00Z")
    assert end == at("2026-10-03T07:00:00Z")
    assert day_range(None, None, UTC) == (None, None)


def test_a_document_without_dated_entries_is_one_undated_result_whatever_the_dates():
    notes = "# Notes\n\n- Laptop: ThinkPad X1 Carbon.\n- VPN profile: Contoso VPN.\n"
    results = search(
        loaded(notes, Target("agent", HELPDESK)),
        text="vpn",
        start=at("2030-01-01T00:00:00Z"),
    )
    [hit] = results.memories[0].hits
    assert (hit.index, hit.kind, hit.timestamp, hit.dated) == (None, "document", None, False)
    assert marked(hit.excerpt) == ["VPN", "VPN"]
    assert results.shows_undated
    # Without a date filter there is nothing to point out.
    assert not search(loaded(notes), text="vpn").shows_undated
    # An undated document has no reason, so a reason filter leaves it out.
    assert search(loaded(notes), reason="vpn").total == 0


def test_a_preamble_is_undated_and_kept_by_date_filters():
    document = "Intro written by hand.\n\n" + USER
    results = search(loaded(document), start=at("2030-01-01T00:00:00Z"))
    [hit] = results.memories[0].hits
    assert (hit.index, hit.kind, hit.timestamp) == (0, "preamble", None)
    assert plain(hit.excerpt) == "Intro written by hand."


def test_results_are_grouped_by_memory_with_labels_counts_and_errors():
    failed = Loaded(Target("agent", HELPDESK), error=CoreAPIUnavailable("down", status=503))
    travel = entries(("- Prefers aisle seats.", "2026-09-30T12:00:00Z", "Trip"))
    results = search(loaded(USER), failed, loaded(travel, Target("agent", TRAVEL)), text="prefers")
    labels = [(m.label, m.total, m.error is not None) for m in results.memories]
    assert labels == [
        ("Shared with every agent", 1, False),
        ("IT Helpdesk", 0, True),
        ("Travel", 1, False),
    ]
    assert results.total == 2
    assert [m.label for m in results.matched] == ["Shared with every agent", "Travel"]
    assert [str(e) for e in results.errors] == ["down"]
    assert not results.nothing_remembered


def test_nothing_remembered_only_when_every_memory_was_read_and_is_empty():
    empty = search(loaded(""), loaded("  \n", Target("agent", TRAVEL)))
    assert empty.nothing_remembered and empty.total == 0
    failed = Loaded(Target("agent", HELPDESK), error=CoreAPIUnavailable("down", status=503))
    assert not search(loaded(""), failed).nothing_remembered


def test_results_are_capped_per_memory_and_overall_but_all_counted():
    many = entries(*((f"- fact {i}", f"2026-10-01T00:00:{i:02d}Z", None) for i in range(30)))
    limits = Limits(per_memory=5, alone=20, overall=8)
    alone = search(loaded(many), limits=limits, text="fact")
    assert (len(alone.memories[0].hits), alone.memories[0].total) == (8, 30)  # overall cap
    several = search(
        loaded(many), loaded(many, Target("agent", TRAVEL)), limits=limits, text="fact"
    )
    shown = [(len(m.hits), m.total, m.more) for m in several.memories]
    assert shown == [(5, 30, 25), (3, 30, 27)]
    assert several.total == 60
    one = search(loaded(many), limits=Limits(per_memory=5, alone=20, overall=100))
    assert len(one.memories[0].hits) == 20  # one memory alone shows more


@pytest.mark.parametrize("gap", [" ", "\n", "\t "])
def test_excerpt_is_plain_text_around_the_first_match_with_every_match_marked(gap: str):
    words = gap.join(f"w{i}" for i in range(100))
    text = f"{words}{gap}NEEDLE middle needle{gap}{words}"
    segments = excerpt(text, re.compile("needle", re.IGNORECASE))
    assert marked(segments) == ["NEEDLE", "needle"]
    assert segments[0] == Segment("…") and segments[-1] == Segment("…")
    shown = plain(segments)
    assert len(shown) <= 2 * EXCERPT_CONTEXT + len("NEEDLE") + 2
    # Cut at word boundaries: no half words at either end.
    assert shown[1:].split()[0] in words.split()
    assert shown[:-1].split()[-1] in words.split()
    assert "\n" not in shown and "\t" not in shown


def test_excerpt_keeps_hostile_text_as_plain_text_without_bidi_controls():
    text = "<script>alert(1)</script> pay \u202eevil\u202c to <b>bob</b>"
    hit = search(loaded(text), text="<script>").memories[0].hits[0]
    assert marked(hit.excerpt) == ["<script>"]  # escaping is the template's job
    assert plain(hit.excerpt) == "<script>alert(1)</script> pay evil to <b>bob</b>"


def test_hostile_inputs_take_linear_time():
    # A long whitespace run between the words of the text, and huge reason lines.
    spaces = " " * 200_000
    document = entries(
        (f"- a{spaces}b a{spaces}c", "2026-10-01T00:00:00Z", f"r{spaces}x"),
    )
    started = time.perf_counter()
    results = search(loaded(document), text="a c", reason="r x")
    assert time.perf_counter() - started < 2
    [hit] = results.memories[0].hits
    assert marked(hit.excerpt) == ["a c"]  # the second "a", across its run of spaces
    assert marked(hit.reason) == ["r x"]
    assert len(plain(hit.reason)) < 3 * EXCERPT_CONTEXT


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_text_lists_everything_the_other_filters_let_through(text: str):
    assert search(loaded(USER), text=text).total == 3
    assert not SearchQuery(text="").filtered
    assert SearchQuery(reason="x").filtered


STORES = Source("stores", "Legacy memory stores", "Files kept elsewhere.")


def _other_hit(store: str, path: str) -> SourceHit:
    return SourceHit(SourceTarget("stores", store, store, "", None), path, "", [])


def test_counts_take_every_system_searched():
    results = search(loaded(USER), loaded("", Target("agent", TRAVEL)), text="prefers")
    other = SourceResults(
        STORES,
        [_other_hit("a", "/memories/x.md"), _other_hit("a", "/y.md"), _other_hit("b", "/z.md")],
    )

    counts = search_counts(results, [other])

    assert (counts.matches, counts.memories, counts.unsearched) == (4, 3, 0)
    assert search_counts(results).matches == 1
    failed = search_counts(results, [SourceResults(STORES, error=SourceError("down"))])
    assert (failed.matches, failed.memories, failed.unsearched) == (1, 1, 1)
    # CoreAPI holds nothing, another system's target does: there is memory.
    empty = search(loaded(""), text="x")
    assert empty.nothing_remembered and search_counts(empty).nothing_remembered
    other = SourceResults(STORES, [_other_hit("a", "/x.md")])
    assert not search_counts(empty, [other]).nothing_remembered
