"""The Activity page: a user's own events, named as every other page names memories
(display names, "Shared with every agent"), filtered by memory and action, in pages, each
linking to the memory it was about; Undo recorded as its own action."""

from __future__ import annotations

import csv
import io
import re

from django.db import models
from django.test import Client

from memory_ui.audit import Action, agent_names_remember, audit_record, source_label
from memory_ui.models import AuditEvent
from memory_ui.sources.coreapi import Agent, CoreAPIUnavailable
from tests.fake_coreapi import AGENTS, FakeCoreAPI
from tests.pages import cells, hidden_fields, table_rows
from tests.views.conftest import identity_for
from tests.views.helpers import (
    HTMX,
    TRAVEL,
    body,
    each_failure,
    fail,
    field_value,
    is_page,
    page_text,
    varies_on_htmx,
)

ALICE = "alice@contoso.com"
TRAVEL_PLANNER = next(agent for agent in AGENTS if agent.name == "travel-planner")


def record(action: str, *, scope: str = "user", agent: Agent | None = None, upn: str = ALICE):
    """An event as the portal's own steps write it, for `upn`."""
    return audit_record(identity_for(upn), action, scope=scope, agent=agent)


def rows(response) -> list[str]:
    """The text of each row of the events table."""
    found = re.findall(r"<tr>(.*?)</tr>", body(response), re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", row).split()) for row in found]


def test_undo_is_recorded_as_its_own_action(alice: Client, fake: FakeCoreAPI):
    page = body(alice.get("/memory/agents/travel-planner"))
    fields = {**TRAVEL, "version": field_value(page, "version"), "index": "0"}
    deleted = alice.post("/memory/entries/delete", fields, headers=HTMX)
    undone = alice.post("/memory/undo", {**TRAVEL, "token": field_value(body(deleted), "token")})
    assert undone.status_code == 302

    assert list(AuditEvent.objects.values_list("action", flat=True)) == ["undo", "delete-entry"]
    undo = AuditEvent.objects.get(action="undo")
    assert undo.sha256_after == AuditEvent.objects.get(action="delete-entry").sha256_before
    assert "You Restored (undo) CoreAPI Travel Planner" in rows(alice.get("/activity"))[1]


def test_activity_names_memories_as_the_other_pages_do(alice: Client, fake: FakeCoreAPI):
    record(Action.APPEND)
    record(Action.EDIT, scope="agent", agent=TRAVEL_PLANNER)
    record(Action.EXPORT, scope="combined", agent=TRAVEL_PLANNER)
    html = body(alice.get("/activity"))
    assert '<a href="/memory/user">Shared with every agent</a>' in html
    assert '<a href="/memory/agents/travel-planner">Travel Planner</a>' in html
    assert '<a href="/memory/agents/travel-planner/combined">What Travel Planner sees</a>' in html
    assert "travel-planner<" not in html and "Shared memory" not in html


def test_an_agent_the_user_no_longer_has_is_named_but_not_linked(alice: Client, fake: FakeCoreAPI):
    fake.agents = [agent for agent in fake.agents if agent.name != "travel-planner"]
    record(Action.EDIT, scope="agent", agent=TRAVEL_PLANNER)
    record(Action.EDIT, scope="agent", agent=Agent("retired-bot", "/x/agents/retired-bot", "Old"))
    html = body(alice.get("/activity"))
    assert "retired-bot" in cells(html)  # no display name known: the name
    assert "travel-planner" in cells(html)
    assert 'href="/memory/agents/travel-planner"' not in html
    assert 'href="/memory/agents/retired-bot"' not in html


def test_activity_when_the_agents_cannot_be_listed(alice: Client, fake: FakeCoreAPI, subtests):
    record(Action.EDIT, scope="agent", agent=TRAVEL_PLANNER)
    for (failure,) in each_failure():
        with subtests.test(failure.name):
            fail(fake, "list_agents", failure)
            response = alice.get("/activity")
            assert response.status_code == 200  # the events are the portal's own
            assert "Your agents could not be listed just now" in page_text(response)
            assert "travel-planner" in cells(body(response))
            assert 'href="/memory/agents/travel-planner"' not in body(response)


def test_display_names_seen_earlier_still_name_agents(alice: Client, fake: FakeCoreAPI):
    """Any agent list names an agent (support staff's look-up, the user's own earlier)."""
    record(Action.EDIT, scope="agent", agent=TRAVEL_PLANNER)
    agent_names_remember([TRAVEL_PLANNER])
    fake.fail("list_agents", CoreAPIUnavailable("CoreAPI is unavailable, try again.", status=503))
    html = body(alice.get("/activity"))
    assert "Travel Planner" in cells(html)
    assert 'href="/memory/agents/travel-planner"' not in html


def test_activity_filters_by_memory_and_action(alice: Client, fake: FakeCoreAPI):
    record(Action.APPEND)
    record(Action.EDIT)
    record(Action.EDIT, scope="agent", agent=TRAVEL_PLANNER)
    record(Action.EXPORT, scope="combined", agent=TRAVEL_PLANNER)
    page = alice.get("/activity")
    assert '<option value="agent:travel-planner">Travel Planner</option>' in body(page)
    assert '<option value="undo">Restored (undo)</option>' in body(page)

    travel = alice.get("/activity", {"memory": "agent:travel-planner"})
    assert [row.split(" You ")[1] for row in rows(travel)[1:]] == [
        "Exported CoreAPI What Travel Planner sees — Done",
        "Edited CoreAPI Travel Planner — Done",
    ]
    edits = alice.get("/activity", {"memory": "user", "action": "edit"})
    assert [row.split(" You ")[1] for row in rows(edits)[1:]] == [
        "Edited CoreAPI Shared with every agent — Done"
    ]
    assert '<option value="user" selected>' in body(edits)
    assert "Show all activity" in page_text(edits)

    none = alice.get("/activity", {"action": "clear"})
    assert "Nothing matches these filters." in page_text(none)
    stale = alice.get("/activity", {"memory": "agent:no-such-agent"})
    assert stale.status_code == 200
    assert "That filter is not available any more" in page_text(stale)
    # The filter's own field says where to choose again, for screen readers too.
    select = re.search(r'<select name="memory"[^>]*>', body(stale))
    assert select and 'aria-invalid="true"' in select[0]
    assert 'aria-describedby="filter-memory-error"' in select[0]
    assert 'id="filter-memory-error" class="field-error">Choose from the list.' in body(stale)


def test_activity_pages_keep_the_filter(alice: Client, fake: FakeCoreAPI):
    for _ in range(30):
        record(Action.EDIT)
    record(Action.APPEND)
    first = alice.get("/activity", {"action": "edit"})
    assert len(rows(first)) == 1 + 25
    assert "Page 1 of 2" in page_text(first)
    html = body(first)
    assert 'href="?action=edit&amp;page=2"' in html and 'hx-get="?action=edit&amp;page=2"' in html

    second = alice.get("/activity", {"action": "edit", "page": "2"})
    assert len(rows(second)) == 1 + 5 and "Page 2 of 2" in page_text(second)

    fragment = alice.get("/activity", {"action": "edit", "page": "2"}, headers=HTMX)
    assert not is_page(fragment) and varies_on_htmx(fragment)
    assert body(fragment).lstrip().startswith('<div id="events"')


def test_activity_shows_only_the_users_own_events(alice: Client, fake: FakeCoreAPI):
    record(Action.EDIT, upn="bob@contoso.com")
    assert "Nothing recorded yet." in page_text(alice.get("/activity"))


# --- which memory system (issue 27) --------------------------------------------------------------


def options(html: str, name: str) -> list[str]:
    """The labels of a select's options, in order."""
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select, name
    return re.findall(r"<option [^>]*>(.*?)</option>", select[1])


def legacy_event(upn: str = ALICE, *, outcome: str = "ok") -> AuditEvent:
    """An event as the legacy steps write it: the store's agent and the store's full name."""
    return AuditEvent.objects.create(
        actor_upn=upn, subject_upn=upn, action="delete-entry", source="legacy", outcome=outcome,
        agent_name="travel-planner", agent_object_id="main.agents.travel_planner_memory",
    )  # fmt: skip


def test_activity_names_and_filters_each_events_system(alice: Client, fake: FakeCoreAPI):
    record(Action.EDIT, scope="agent", agent=TRAVEL_PLANNER)
    legacy_event()
    page = alice.get("/activity")
    html = body(page)
    heads, *found = table_rows(html)
    system = heads.index("System")
    assert heads[system + 1] == "Memory"
    assert [(row[system], row[system + 1]) for row in found] == [
        ("Legacy memory stores", "main.agents.travel_planner_memory"),
        ("CoreAPI", "Travel Planner"),
    ]
    # The filter is a field like the others: its label, its choices named as the rows are.
    assert '<label for="filter-system">System</label>' in html
    assert re.search(r'<select name="system" id="filter-system">', html)
    # Memory Portal: what it did across every system (an erasure receipt).
    assert options(html, "system") == [
        "Any system",
        "CoreAPI",
        "Legacy memory stores",
        "Memory Portal",
    ]

    legacy = alice.get("/activity", {"system": "legacy"})
    assert [row[system] for row in table_rows(body(legacy))[1:]] == ["Legacy memory stores"]
    assert '<option value="legacy" selected>' in body(legacy)
    coreapi = alice.get("/activity", {"system": "coreapi", "action": "delete-entry"})
    assert "Nothing matches these filters." in page_text(coreapi)

    gone = alice.get("/activity", {"system": "no-such-system"})
    assert gone.status_code == 200
    assert "That filter is not available any more" in page_text(gone)
    assert 'id="filter-system-error" class="field-error">Choose from the list.' in body(gone)


def test_the_audit_trail_names_filters_and_exports_each_events_system(
    carol: Client, fake: FakeCoreAPI
):
    record(Action.EDIT, scope="agent", agent=TRAVEL_PLANNER)
    legacy_event(outcome="error")
    page = body(carol.get("/support/audit"))
    assert '<label for="audit-system">System</label>' in page
    heads, *found = table_rows(page)
    system = heads.index("System")
    assert sorted(row[system] for row in found) == ["CoreAPI", "Legacy memory stores"]

    # A POST like every filter of the trail, back as a GET that keeps it.
    filtered = carol.post("/support/audit", {"system": "legacy"})
    assert filtered.status_code == 302 and filtered["Location"] == "/support/audit?system=legacy"
    legacy = body(carol.get(filtered["Location"]))
    assert [row[system] for row in table_rows(legacy)[1:]] == ["Legacy memory stores"]
    assert '<option value="legacy" selected>' in legacy

    exported = carol.get(f"{filtered['Location']}&format=csv")
    lines = list(csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode())))
    assert [(line["source"], line["system"], line["memory"]) for line in lines] == [
        ("legacy", "Legacy memory stores", "main.agents.travel_planner_memory")
    ]
    everything = carol.get("/support/audit", {"format": "csv"})
    lines = list(csv.DictReader(io.StringIO(b"".join(everything.streaming_content).decode())))
    assert sorted(line["system"] for line in lines) == ["CoreAPI", "Legacy memory stores"]

    wrong = carol.post("/support/audit", {"system": "no-such-system"})
    assert wrong.status_code == 400
    assert 'id="audit-system-error" class="field-error">' in body(wrong)


def test_a_systems_name_comes_from_one_place(
    alice: Client, carol: Client, fake: FakeCoreAPI, monkeypatch
):
    """A system added to `AuditEvent.Source` (a registry of sources later) is named by its
    label in Activity, its filter, the audit trail's filter and the admin, unchanged."""
    members = [(m.name, (m.value, m.label)) for m in AuditEvent.Source]
    grown = models.TextChoices(
        "Source", [*members, ("WORKSPACE", ("workspace", "Workspace memory"))]
    )
    monkeypatch.setattr(AuditEvent, "Source", grown)
    AuditEvent.objects.create(
        actor_upn=ALICE, subject_upn=ALICE, action="edit", source="workspace", outcome="ok"
    )
    assert source_label("workspace") == "Workspace memory"
    assert source_label("retired") == "retired"  # a system gone since: its recorded name

    own = body(alice.get("/activity", {"system": "workspace"}))
    assert '<option value="workspace" selected>Workspace memory</option>' in own
    assert "Workspace memory" in table_rows(own)[1]
    assert '<option value="workspace">Workspace memory</option>' in body(
        carol.get("/support/audit")
    )
    admin = body(carol.get("/admin/memory_ui/auditevent/"))
    assert 'href="?source=workspace">Workspace memory</a>' in admin
    assert '<td class="field-system">Workspace memory</td>' in admin


# --- how many, why, and which store (issue 32, item 11) -----------------------------------------


def test_a_batch_says_how_many_entries_it_deleted_and_restored(alice: Client, fake: FakeCoreAPI):
    picks = ["agent:travel-planner:1", "agent:travel-planner:0"]
    preview = alice.post(
        "/memory/select/preview",
        {"agent": "travel-planner", "back": "/", "mode": "picked", "pick": picks},
    )
    done = alice.post("/memory/select/delete", hidden_fields(body(preview)))
    assert "Deleted 2 entries" in page_text(done)
    alice.post("/memory/select/undo", {"token": hidden_fields(body(done))["token"][0]})
    record(Action.DELETE_ENTRY, scope="agent", agent=TRAVEL_PLANNER)  # one entry, on its own

    assert list(AuditEvent.objects.values_list("action", "count")) == [
        ("delete-entry", None),
        ("undo", 2),
        ("delete-entry", 2),
    ]
    whats = [row[2] for row in table_rows(body(alice.get("/activity")))[1:]]
    assert whats == ["Deleted an entry", "Restored (undo) · 2 entries", "Deleted 2 entries"]


def test_the_memory_filter_lists_the_legacy_stores_events_name(alice: Client, fake: FakeCoreAPI):
    record(Action.EDIT, scope="agent", agent=TRAVEL_PLANNER)
    legacy_event()
    html = body(alice.get("/activity"))
    assert options(html, "memory")[-1] == "main.agents.travel_planner_memory"

    store = alice.get("/activity", {"memory": "legacy:main.agents.travel_planner_memory"})
    assert [row[4] for row in table_rows(body(store))[1:]] == ["main.agents.travel_planner_memory"]
    # The agent's own memory is a memory apart from the store kept for the same agent.
    agent = alice.get("/activity", {"memory": "agent:travel-planner"})
    assert [row[3:5] for row in table_rows(body(agent))[1:]] == [["CoreAPI", "Travel Planner"]]
