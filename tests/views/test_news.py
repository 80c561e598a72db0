"""New since the last visit (`memory_ui.visits`): what a person's visits keep, the
dashboard card's count, the memory page's marks and "Mark as seen", and What's new."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from devstack.coreapi import formats
from memory_ui.models import MemoryVisit
from tests.fake_coreapi import FakeCoreAPI
from tests.views.helpers import HTMX, body, field_value, page_text

TRAVEL = "/memory/agents/travel-planner"
TRAVEL_QUERY = {"scope": "agent", "agent": "travel-planner"}


class Clock:
    """The time the portal records visits at, moved on by hand: each step of a test comes
    a minute after the one before (entry times are whole seconds)."""

    def __init__(self) -> None:
        self.at = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.at

    def tick(self) -> datetime:
        self.at += timedelta(minutes=1)
        return self.at


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr("memory_ui.visits.timezone", clock)
    return clock


def agent_adds(fake: FakeCoreAPI, clock: Clock, agent: str | None, text: str, reason: str):
    """An agent appending a minute after whatever came before, while nobody watches."""
    fake.put(formats.append_entry(fake.text(agent), text, clock.tick(), reason), agent)
    clock.tick()


def visit_queries(queries: CaptureQueriesContext) -> int:
    return sum(MemoryVisit._meta.db_table in q["sql"] for q in queries.captured_queries)


def new_marks(html: str) -> list[str]:
    return re.findall(r'<li class="entry entry-new" id="(entry-\d+)"', html)


def test_a_visit_keeps_a_time_and_a_version_and_marks_nothing_new(alice: Client, fake, clock):
    html = body(alice.get(TRAVEL))
    assert new_marks(html) == [] and "since your last visit" not in html
    visit = MemoryVisit.objects.get()
    assert visit.target_key == "agent:travel-planner" and visit.previous_seen_at is None
    stamp, digest = visit.seen_version.split("|")
    assert stamp.startswith("2026-11-25T18:45:30") and re.fullmatch(r"[0-9a-f]{64}", digest)
    # A time and a version, nothing of the memory itself.
    fields = {f.name for f in MemoryVisit._meta.get_fields()}
    assert fields == {"id", "user_oid", "target_key", "seen_at", "seen_version", "previous_seen_at"}
    # htmx requests of the open page are the same visit.
    alice.get(TRAVEL, {"view": "raw"}, headers=HTMX)
    assert MemoryVisit.objects.get().previous_seen_at is None


def test_entries_added_since_the_last_visit_are_new_on_every_page(alice: Client, fake, clock):
    alice.get(TRAVEL)
    alice.get("/memory/user")
    agent_adds(fake, clock, "travel-planner", "- Booked the Eurostar, 14 December.", "Train booked")
    agent_adds(fake, clock, "travel-planner", "- Hotel: the Strand Palace.", "Hotel booked")

    card = body(alice.get("/cards/agents/travel-planner", headers=HTMX))
    assert '<strong class="new-badge">2 new</strong>' in card
    batch = body(alice.get("/cards/agents", {"name": "travel-planner"}, headers=HTMX))
    assert '<strong class="new-badge">2 new</strong>' in batch
    assert "new-badge" not in body(alice.get("/cards/user", headers=HTMX))

    news = alice.get("/whats-new")
    text = page_text(news)
    assert news.status_code == 200 and "2 new entries." in text
    assert text.index("Hotel: the Strand Palace.") < text.index("Booked the Eurostar")
    assert "because: Hotel booked" in text and "Travel Planner" in text
    assert f'href="{TRAVEL}?entry=3#entry-3"' in body(news)
    # The page says which memories were never opened (they count from the first visit).
    assert "Not opened here yet" in text and "IT Helpdesk" in text

    opened = body(alice.get(TRAVEL))
    assert new_marks(opened) == ["entry-3", "entry-2"]  # newest first
    assert "2 new since your last visit" in page_text(alice.get(TRAVEL, headers=HTMX))
    # Opening the page was a visit: the card and What's new count nothing new any more.
    assert "new-badge" not in body(alice.get("/cards/agents/travel-planner", headers=HTMX))
    assert "Nothing new since you last looked." in page_text(alice.get("/whats-new"))


def test_mark_as_seen_clears_the_marks_unless_the_memory_changed(alice: Client, fake, clock):
    alice.get(TRAVEL)
    agent_adds(fake, clock, "travel-planner", "- Booked the Eurostar.", "Train booked")
    html = body(alice.get(TRAVEL))
    assert new_marks(html) == ["entry-2"]
    fields = {"scope": "agent", "agent": "travel-planner", "version": field_value(html, "version")}

    agent_adds(fake, clock, "travel-planner", "- Seat 42.", "Seat booked")  # meanwhile
    stale = alice.post("/memory/seen", fields, follow=True)
    assert "changed since the page was shown, so nothing was marked as seen" in page_text(stale)
    assert len(new_marks(body(stale))) == 1  # still the visit before: entry 2 stays new

    fields["version"] = field_value(body(stale), "version")
    seen = alice.post("/memory/seen", fields)
    assert seen.status_code == 302 and seen["Location"] == TRAVEL
    after = alice.get(TRAVEL)
    assert new_marks(body(after)) == [] and "Marked as seen." in page_text(after)


def test_mark_all_as_seen_on_whats_new(alice: Client, fake, clock):
    alice.get(TRAVEL)
    alice.get("/memory/user")
    agent_adds(fake, clock, "travel-planner", "- Booked the Eurostar.", "Train booked")
    agent_adds(fake, clock, None, "- Works from Lisbon in January.", "Travel plans")
    page = body(alice.get("/whats-new"))
    assert "2 new entries." in page_text(alice.get("/whats-new"))
    versions = dict(re.findall(r'name="(version-[^"]+)" value="([^"]*)"', page))
    assert set(versions) == {
        "version-user",
        "version-agent:benefits-assistant",
        "version-agent:it-helpdesk",
        "version-agent:travel-planner",
    }
    done = alice.post("/whats-new/seen", versions, follow=True)
    assert "Marked everything as seen." in page_text(done)
    assert "Nothing new since you last looked." in page_text(done)
    assert MemoryVisit.objects.count() == 4


def test_a_memory_never_opened_counts_from_the_first_visit_here(alice: Client, fake, clock):
    # Issue 32, item 10: it flagged nothing outside What's new's one line.
    alice.get("/memory/user")  # the first visit to the portal, elsewhere
    agent_adds(fake, clock, "travel-planner", "- Booked the Eurostar.", "Train booked")
    agent_adds(fake, clock, "travel-planner", "- Seat 42.", "Seat booked")

    card = body(alice.get("/cards/agents/travel-planner", headers=HTMX))
    assert '<strong class="new-badge">2 new</strong>' in card
    assert "since your first visit here" in card
    names = {"name": ["benefits-assistant", "it-helpdesk", "travel-planner"]}
    with CaptureQueriesContext(connection) as queries:
        batch = body(alice.get("/cards/agents", names, headers=HTMX))
    assert '<strong class="new-badge">2 new</strong>' in batch
    assert batch.count("new-badge") == 1
    with CaptureQueriesContext(connection) as more:
        text = page_text(alice.get("/whats-new"))
    assert "2 new entries." in text and "Seat 42." in text and "Booked the Eurostar." in text
    # The baseline comes with the visits: one query for the batch, one for What's new.
    assert visit_queries(queries) == 1 and visit_queries(more) == 1
    assert "since your first visit here counts as new" in text

    opened = body(alice.get(TRAVEL))
    assert new_marks(opened) == ["entry-3", "entry-2"]
    assert "2 new since your last visit" in page_text(alice.get(TRAVEL, headers=HTMX))
    # The marks stay on a reload; the card and What's new count from this opening now.
    assert new_marks(body(alice.get(TRAVEL))) == ["entry-3", "entry-2"]
    assert "new-badge" not in body(alice.get("/cards/agents/travel-planner", headers=HTMX))
    assert "Nothing new since you last looked." in page_text(alice.get("/whats-new"))


def test_a_first_time_user_sees_nothing_marked(alice: Client, fake, clock):
    agent_adds(fake, clock, "travel-planner", "- Booked the Eurostar.", "Train booked")
    agent_adds(fake, clock, "travel-planner", "- Seat 42.", "Seat booked")

    assert "new-badge" not in body(alice.get("/cards/agents/travel-planner", headers=HTMX))
    text = page_text(alice.get("/whats-new"))
    assert "Nothing new since you last looked." in text
    assert "so nothing in them counts as new until you open a memory" in text
    html = body(alice.get(TRAVEL))
    assert new_marks(html) == [] and "since your last visit" not in html
    assert MemoryVisit.objects.get().previous_seen_at is None
    # That first visit is the baseline: what came before it is not new anywhere else either.
    agent_adds(fake, clock, None, "- Works from Lisbon in January.", "Travel plans")
    assert "new-badge" in body(alice.get("/cards/user", headers=HTMX))
    assert "1 new entry." in page_text(alice.get("/whats-new"))
    assert len(new_marks(body(alice.get("/memory/user")))) == 1


def test_mark_as_seen_takes_only_the_persons_own_memories(alice: Client, fake, clock):
    fields = {"scope": "agent", "agent": "finance-insights", "version": "x|" + "0" * 64}
    assert alice.post("/memory/seen", fields).status_code == 404
    assert alice.get("/memory/seen").status_code == 405
    assert MemoryVisit.objects.count() == 0


def test_visits_are_per_person(alice: Client, bob: Client, fake, clock):
    alice.get(TRAVEL)
    agent_adds(fake, clock, "travel-planner", "- Booked the Eurostar.", "Train booked")
    assert "1 new entry." in page_text(alice.get("/whats-new"))
    assert "Nothing new since you last looked." in page_text(bob.get("/whats-new"))


def test_entries_appended_after_a_fence_left_open_are_each_new(alice: Client, fake, clock):
    # Issue 32, item 14: the first note's fence is never closed ("``` XM40" closes nothing).
    alice.get(TRAVEL)
    agent_adds(fake, clock, "travel-planner", "Route:\n\n```\nSEA -> LHR\n``` XM40", "Route")
    agent_adds(fake, clock, "travel-planner", "- Seat 42.", "Seat booked")
    agent_adds(fake, clock, "travel-planner", "- Hotel: the Strand Palace.", "Hotel booked")

    assert "3 new entries." in page_text(alice.get("/whats-new"))
    card = body(alice.get("/cards/agents/travel-planner", headers=HTMX))
    assert '<strong class="new-badge">3 new</strong>' in card

    page = alice.get(TRAVEL)
    assert new_marks(body(page)) == ["entry-4", "entry-3", "entry-2"]
    # Only the note that left it open says so, in its own card.
    cards = re.split(r'<li class="entry[^"]*" id="', body(page))[1:]
    unclosed = [card[: card.index('"')] for card in cards if "code block was never closed" in card]
    assert unclosed == ["entry-2"]
    assert "Seat 42." in page_text(page) and "Strand Palace" in page_text(page)


def test_saving_an_edit_keeps_the_other_entries_new_marks(alice: Client, fake, clock):
    # Issue 32, item 10: the page after the save was a visit of its own, so nothing was new.
    alice.get(TRAVEL)
    agent_adds(fake, clock, "travel-planner", "- Booked the Eurostar.", "Train booked")
    agent_adds(fake, clock, "travel-planner", "- Seat 42.", "Seat booked")
    assert new_marks(body(alice.get(TRAVEL))) == ["entry-3", "entry-2"]
    clock.tick()

    editor = body(alice.get("/memory/entries/edit", {**TRAVEL_QUERY, "index": 0}))
    fields = {**TRAVEL_QUERY, "index": "0", "version": field_value(editor, "version")}
    fields |= {"reason": "Trip preferences", "content": "- Prefers window seats."}
    saved = alice.post("/memory/entries/edit", fields, follow=True)
    assert "Saved the entry." in page_text(saved)
    assert new_marks(body(saved)) == ["entry-3", "entry-2"]
    clock.tick()
    # Nor does opening the page again while nothing new arrived: only "Mark as seen" does.
    assert new_marks(body(alice.get(TRAVEL))) == ["entry-3", "entry-2"]
    assert "new-badge" not in body(alice.get("/cards/agents/travel-planner", headers=HTMX))

    # Something added since the last opening starts a new visit: it alone is new then.
    agent_adds(fake, clock, "travel-planner", "- Hotel: the Strand Palace.", "Hotel booked")
    assert new_marks(body(alice.get(TRAVEL))) == ["entry-4"]


def test_opening_a_version_already_seen_writes_no_visit(alice: Client, fake, clock):
    # Issue 31, item 2: every view wrote its visit row, an UPDATE even when nothing changed.
    alice.get(TRAVEL)
    agent_adds(fake, clock, "travel-planner", "- Booked the Eurostar.", "Train booked")
    assert new_marks(body(alice.get(TRAVEL))) == ["entry-2"]
    before = MemoryVisit.objects.get()
    clock.tick()
    with CaptureQueriesContext(connection) as queries:
        again = body(alice.get(TRAVEL))
    visits = [q["sql"] for q in queries.captured_queries if MemoryVisit._meta.db_table in q["sql"]]
    assert len(visits) == 1 and visits[0].startswith("SELECT")  # read once, nothing written
    assert new_marks(again) == ["entry-2"]
    assert MemoryVisit.objects.get().seen_at == before.seen_at

    # What counts new later is the same: only what comes after, once the memory changes.
    agent_adds(fake, clock, "travel-planner", "- Seat 42.", "Seat booked")
    card = body(alice.get("/cards/agents/travel-planner", headers=HTMX))
    assert '<strong class="new-badge">1 new</strong>' in card
    assert new_marks(body(alice.get(TRAVEL))) == ["entry-3"]
    assert MemoryVisit.objects.get().seen_at == clock.at
