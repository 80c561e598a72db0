"""The Activity page: a user's own events, named as every other page names memories
(display names, "Shared with every agent"), filtered by memory and action, in pages, each
linking to the memory it was about; Undo recorded as its own action."""

from __future__ import annotations

import re

from django.test import Client

from memory_ui.audit import Action, agent_names_remember, audit_record
from memory_ui.models import AuditEvent
from memory_ui.sources.coreapi import Agent, CoreAPIUnavailable
from tests.fake_coreapi import AGENTS, FakeCoreAPI
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
    assert "You Restored (undo) Travel Planner" in rows(alice.get("/activity"))[1]


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
    assert "<td>retired-bot</td>" in html  # no display name known: the name
    assert "<td>travel-planner</td>" in html
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
            assert "<td>travel-planner</td>" in body(response)
            assert 'href="/memory/agents/travel-planner"' not in body(response)


def test_display_names_seen_earlier_still_name_agents(alice: Client, fake: FakeCoreAPI):
    """Any agent list names an agent (support staff's look-up, the user's own earlier)."""
    record(Action.EDIT, scope="agent", agent=TRAVEL_PLANNER)
    agent_names_remember([TRAVEL_PLANNER])
    fake.fail("list_agents", CoreAPIUnavailable("CoreAPI is unavailable, try again.", status=503))
    html = body(alice.get("/activity"))
    assert "<td>Travel Planner</td>" in html
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
        "Exported What Travel Planner sees — Done",
        "Edited Travel Planner — Done",
    ]
    edits = alice.get("/activity", {"memory": "user", "action": "edit"})
    assert [row.split(" You ")[1] for row in rows(edits)[1:]] == [
        "Edited Shared with every agent — Done"
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
