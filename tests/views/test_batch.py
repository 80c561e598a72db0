"""Select and delete many (`/memory/select`): by filter or ticked, a preview of what would
go, one confirmation, a version check per memory, results per memory and one Undo."""

from __future__ import annotations

import re
from datetime import timedelta

from django.test import Client

from devstack.coreapi import formats
from memory_ui.models import AuditEvent
from memory_ui.sources.coreapi import Agent
from tests.fake_coreapi import AGENT_PREFIX, FakeCoreAPI, _at
from tests.pages import hidden_fields
from tests.views.helpers import FAILURES, body, fail, field_value, page_text

MEMORIES = [None, "benefits-assistant", "it-helpdesk", "travel-planner", "expense-helper"]


def five_memories_with_forty_batch_entries_each(fake: FakeCoreAPI) -> dict[str | None, str]:
    """A fifth agent, then forty entries with the reason "Batch import" in each of the
    five memories; what each memory held before, by agent (None: the shared memory)."""
    fake.agents.append(
        Agent(
            name="expense-helper",
            object_id=AGENT_PREFIX + "expense-helper",
            display_name="Expense Helper",
            description="Files expense reports.",
        )
    )
    before = {}
    for agent in MEMORIES:
        text = fake.text(agent)
        for n in range(40):
            at = _at("2026-11-01T08:00:00+00:00") + timedelta(minutes=n)
            text = formats.append_entry(text, f"- Imported line {n}.", at, "Batch import")
        before[agent] = text
        fake.put(text, agent)
    return before


def test_two_hundred_entries_from_five_memories_one_preview_one_confirmation_one_undo(
    alice: Client, fake: FakeCoreAPI
):
    before = five_memories_with_forty_batch_entries_each(fake)
    found = alice.get("/memory/select", {"reason": "Batch import"})
    assert found.status_code == 200
    assert "200 matching entries in 5 memories" in page_text(found)

    # "Select all 200 matching": the filter again, not 200 ticks.
    filters = {"q": "", "agent": "", "reason": "Batch import", "date_from": "", "date_to": ""}
    preview = alice.post("/memory/select/preview", {**filters, "mode": "all"})
    text = page_text(preview)
    assert preview.status_code == 200
    assert "Delete 200 entries from 5 memories?" in text
    assert text.count("Imported line") == 5 * 5  # five first lines per memory
    assert text.count("and 35 more") == 5
    assert fake.writes() == []  # a preview changes nothing

    confirm = hidden_fields(body(preview))
    assert (
        len(confirm["pick"]) == 200 and len([k for k in confirm if k.startswith("version-")]) == 5
    )
    done = alice.post("/memory/select/delete", confirm)
    assert done.status_code == 200
    assert "Deleted 200 entries" in page_text(done)
    assert page_text(done).count("deleted 40 entries.") == 5
    for agent in MEMORIES:
        after = fake.text(agent)
        assert "Batch import" not in after and "Imported line" not in after
    assert "aisle seats" in fake.text("travel-planner")  # the other entries stay
    assert AuditEvent.objects.filter(action="delete-entry").count() == 5

    token = hidden_fields(body(done))["token"]
    restored = alice.post("/memory/select/undo", {"token": token[0]})
    assert restored.status_code == 200
    assert page_text(restored).count("restored 40 entries.") == 5
    assert {agent: fake.text(agent) for agent in MEMORIES} == before
    assert alice.post("/memory/select/undo", {"token": token[0]}).status_code == 410


def test_a_memory_that_changed_after_the_preview_is_left_as_it_is(alice: Client, fake: FakeCoreAPI):
    preview = alice.post(
        "/memory/select/preview",
        {
            "q": "",
            "agent": "",
            "reason": "",
            "date_from": "",
            "date_to": "",
            "mode": "picked",
            "pick": ["user:0", "agent:travel-planner:1"],
        },
    )
    assert "Delete 2 entries from 2 memories?" in page_text(preview)
    travel = fake.text("travel-planner")
    fake.put(
        formats.append_entry(travel, "- Seat 42.", _at("2026-12-02T10:00:00+00:00")),
        "travel-planner",
    )
    shared = fake.text()

    done = alice.post("/memory/select/delete", hidden_fields(body(preview)))
    text = page_text(done)
    assert done.status_code == 200 and "Deleted 1 entry" in text
    assert "it changed since the preview, so nothing was deleted in it" in text
    assert "Seat 42" in fake.text("travel-planner") and "Trip to London" in fake.text(
        "travel-planner"
    )
    assert fake.text() != shared

    alice.post("/memory/select/undo", {"token": hidden_fields(body(done))["token"][0]})
    assert fake.text() == shared


def test_only_the_persons_own_memories_can_be_chosen(alice: Client, fake: FakeCoreAPI):
    filters = {"q": "", "agent": "", "reason": "", "date_from": "", "date_to": ""}
    forged = alice.post(
        "/memory/select/preview",
        {**filters, "mode": "picked", "pick": ["agent:finance-insights:0", "user:99", "x"]},
    )
    assert forged.status_code == 400 and "Nothing is chosen" in page_text(forged)
    refused = alice.post(
        "/memory/select/delete",
        {"pick": ["agent:finance-insights:0"], "version-agent:finance-insights": "x"},
    )
    assert refused.status_code == 400 and fake.writes() == []
    assert alice.get("/memory/select/delete").status_code == 405


def test_search_results_and_memory_pages_lead_to_selecting(alice: Client, fake: FakeCoreAPI):
    results = body(alice.get("/search", {"q": "trip"}))
    assert 'href="/memory/select?q=trip">Select these to delete…</a>' in results
    page = body(alice.get("/memory/agents/travel-planner"))
    assert 'href="/memory/select?agent=travel-planner"' in page
    ticked = page_text(alice.get("/memory/select", {"agent": "travel-planner"}))
    assert "2 matching entries in 1 memory" in ticked


# --- ticking entries on a memory page and in search results ----------------------------


def checkboxes(html: str, form_id: str) -> list[str]:
    """The `pick` values of the checkboxes that belong to the form `form_id`: naming it
    (form=) or inside it without naming another."""
    pattern = rf'<input type="checkbox" name="pick" value="([^"]+)" form="{form_id}"[^>]*>'
    named = re.findall(pattern, html)
    start = html.find(f'<form id="{form_id}"')
    inside = html[start : html.index("</form>", start)] if start >= 0 else ""
    unnamed = r'<input type="checkbox" name="pick" value="([^"]+)"(?![^>]* form=)[^>]*>'
    return named + re.findall(unnamed, inside)


def test_a_memory_page_ticks_its_entries_for_the_preview(alice: Client, fake: FakeCoreAPI):
    html = body(alice.get("/memory/agents/travel-planner"))
    assert checkboxes(html, "entry-select") == ["agent:travel-planner:1", "agent:travel-planner:0"]
    # Each checkbox is named after its entry, for screen readers.
    assert 'aria-label="Select entry 2: Upcoming trip"' in html
    form = html[html.index('<form id="entry-select"') :]
    form = form[: form.index("</form>")]
    assert 'action="/memory/select/preview"' in form and "csrfmiddlewaretoken" in form
    assert field_value(form, "agent") == "travel-planner"
    assert "Review selected…" in form

    preview = alice.post(
        "/memory/select/preview",
        {
            "agent": "travel-planner",
            "back": "/memory/agents/travel-planner",
            "mode": "picked",
            "pick": ["agent:travel-planner:1"],
        },
    )
    assert preview.status_code == 200
    text = page_text(preview)
    assert "Delete 1 entry from 1 memory?" in text and "Trip to London" in text
    assert "aisle seats" not in text
    assert (
        'href="/memory/agents/travel-planner" role="button" class="secondary outline">Cancel'
        in (body(preview))
    )
    assert fake.writes() == []


def test_pages_that_cannot_delete_single_entries_have_no_checkboxes(
    alice: Client, fake: FakeCoreAPI
):
    for url in ["/memory/agents/travel-planner/combined", "/memory/agents/it-helpdesk"]:
        html = body(alice.get(url))
        assert 'type="checkbox" name="pick"' not in html and 'id="entry-select"' not in html


def test_the_preview_goes_back_only_to_a_page_of_this_site(alice: Client, fake: FakeCoreAPI):
    for back in ["https://evil.example/", "//evil.example/x", "javascript:alert(1)"]:
        preview = alice.post(
            "/memory/select/preview",
            {"agent": "", "back": back, "mode": "picked", "pick": ["user:0"]},
        )
        assert preview.status_code == 200
        assert "evil" not in body(preview) and "javascript:" not in body(preview)
        assert 'href="/memory/select?q=&amp;agent=&amp;reason=' in body(preview)


def test_search_results_tick_entries_or_take_every_match(alice: Client, fake: FakeCoreAPI):
    html = body(alice.get("/search", {"q": "prefers"}))
    # The page's form holds the CSRF token; the results (replaced as people type) hold the
    # checkboxes, the filters and the buttons, all belonging to it.
    assert '<form id="search-select" method="post" action="/memory/select/preview" hidden>' in html
    assert sorted(checkboxes(html, "search-select")) == ["agent:travel-planner:0", "user:0"]
    assert "Select this entry of Travel Planner, 30 Sep 2026, 12:00: Trip preferences" in html
    assert '<input type="hidden" name="q" value="prefers" form="search-select">' in html
    assert "Select all 2 matching…" in html

    every = alice.post(
        "/memory/select/preview",
        {"q": "prefers", "agent": "", "reason": "", "date_from": "", "date_to": "", "mode": "all"},
    )
    assert "Delete 2 entries from 2 memories?" in page_text(every)
    ticked = alice.post(
        "/memory/select/preview",
        {"q": "prefers", "agent": "", "mode": "picked", "pick": ["agent:travel-planner:0"]},
    )
    assert "Delete 1 entry from 1 memory?" in page_text(ticked)


def test_a_document_without_entries_is_found_but_not_offered_for_selection(
    alice: Client, fake: FakeCoreAPI
):
    html = body(alice.get("/search", {"q": "laptop"}))
    assert "The whole memory" in html
    assert checkboxes(html, "search-select") == [] and "Select all" not in html


def test_undo_keeps_its_token_when_the_agents_cannot_be_listed(alice: Client, fake: FakeCoreAPI):
    preview = alice.post("/memory/select/preview", {"mode": "picked", "pick": ["user:0"]})
    done = alice.post("/memory/select/delete", hidden_fields(body(preview)))
    token = hidden_fields(body(done))["token"][0]
    deleted = fake.text()
    unavailable = next(f for f in FAILURES if f.name == "unavailable")
    fail(fake, "list_agents", unavailable)
    refused_now = alice.post("/memory/select/undo", {"token": token})
    assert refused_now.status_code == 503
    assert "Nothing was changed. CoreAPI is unavailable" in page_text(refused_now)
    assert fake.text() == deleted

    fake.heal()
    restored = alice.post("/memory/select/undo", {"token": token})
    assert restored.status_code == 200 and "restored 1 entry." in page_text(restored)


# --- what the preview shows of each entry, and deleting only matching list items ---------

EVERY_PREFERS = {"q": "prefers", "agent": "", "reason": "", "date_from": "", "date_to": ""}


def shared_memory_with_a_list_entry(fake: FakeCoreAPI) -> str:
    """The shared memory's first entry as the devstack has it: a list whose first item
    does not match "prefers"; then an entry that is a paragraph of two lines."""
    text = formats.append_entry(
        "",
        "- Name: Alice Example, Senior Analyst in Finance.\n- Prefers concise answers.",
        _at("2026-09-14T08:12:03+00:00"),
        reason="User introduced herself",
    )
    text = formats.append_entry(
        text, "Flies often.\nPrefers window seats.", _at("2026-10-02T16:40:55+00:00")
    )
    fake.put(text)
    return text


def test_the_preview_shows_each_entrys_matching_line_and_what_else_it_holds(
    alice: Client, fake: FakeCoreAPI
):
    # Issue 32, item 4: the entry was shown by its first line, "Name: Alice Example…".
    shared_memory_with_a_list_entry(fake)
    preview = alice.post("/memory/select/preview", {**EVERY_PREFERS, "mode": "all"})
    html, text = body(preview), page_text(preview)
    assert "Delete 3 entries from 2 memories?" in text
    reason = '<span class="muted">User introduced herself:</span> '
    assert reason + "<mark>Prefers</mark> concise answers." in html
    assert (
        "The entry also holds 1 more line, kept if you delete only the matching list items: "
        "“Name: Alice Example, Senior Analyst in Finance.”" in text
    )
    assert "<mark>Prefers</mark> window seats." in html
    assert "The entry also holds 1 more line, deleted with it: “Flies often.”" in text
    # A one-line entry holds nothing more.
    trip = '<span class="muted">Trip preferences:</span> <mark>Prefers</mark> aisle seats'
    assert trip + " and morning flights.</li>" in html
    assert "1 of these entries is a list with more in it than the matching items" in text
    assert "Delete 3 entries" in text
    assert "Delete only the 1 matching list item and 2 entries whole" in text
    assert fake.writes() == []

    # Ticked with a search, the same lines; ticked without one, the first lines.
    ticked = {**EVERY_PREFERS, "mode": "picked", "pick": ["user:0"]}
    assert "<mark>Prefers</mark> concise" in body(alice.post("/memory/select/preview", ticked))
    ticked["q"] = ""
    plain = alice.post("/memory/select/preview", ticked)
    assert "User introduced herself: Name: Alice Example, Senior Analyst" in page_text(plain)
    assert "also holds 1 more line, deleted with it: “Prefers concise answers.”" in page_text(plain)
    assert "matching list item" not in page_text(plain)


def test_deleting_only_the_matching_list_items_keeps_the_rest_of_each_list(
    alice: Client, fake: FakeCoreAPI
):
    before = shared_memory_with_a_list_entry(fake)
    travel = fake.text("travel-planner")
    preview = alice.post("/memory/select/preview", {**EVERY_PREFERS, "mode": "all"})
    confirm = hidden_fields(body(preview))
    assert confirm["item"] == ["user:0:3-5"]  # the "Prefers concise answers." item

    done = alice.post("/memory/select/delete", {**confirm, "scope": "items"})
    text = page_text(done)
    assert done.status_code == 200 and "Deleted 2 entries and 1 list item" in text
    assert "Shared with every agent: deleted 1 entry and 1 list item." in text
    assert "Travel Planner: deleted 1 entry." in text
    shared = fake.text()
    assert "Name: Alice Example" in shared and "User introduced herself" in shared
    assert "Prefers" not in shared and "Flies often" not in shared
    assert "aisle seats" not in fake.text("travel-planner")

    restored = alice.post("/memory/select/undo", {"token": hidden_fields(body(done))["token"][0]})
    assert "Shared with every agent: restored 1 entry and 1 list item." in page_text(restored)
    assert fake.text() == before and fake.text("travel-planner") == travel


def test_list_items_go_alone_only_when_asked_and_only_real_ones(alice: Client, fake: FakeCoreAPI):
    before = shared_memory_with_a_list_entry(fake)
    preview = alice.post(
        "/memory/select/preview", {**EVERY_PREFERS, "agent": "_shared", "mode": "all"}
    )
    confirm = hidden_fields(body(preview))
    # A range that is not one of the entry's list items: nothing is deleted in that memory.
    forged = alice.post(
        "/memory/select/delete", {**confirm, "item": "user:0:0-4", "scope": "items"}
    )
    assert forged.status_code == 409 and fake.text() == before
    # Without "scope=items" the entries go whole, whatever items are posted.
    whole = alice.post("/memory/select/delete", {**confirm, "scope": "entries"})
    assert "Deleted 2 entries" in page_text(whole) and "Name: Alice" not in fake.text()
