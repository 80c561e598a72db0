"""Move or copy an entry against the real devstack (conditional writes on): the pages
without JavaScript from the entry's link to the confirmation, the entry landing with its
provenance line and a reason, one Undo restoring both memories, and an agent's append to
the destination between the preview and the confirmation kept.

A removal that fails after the entry landed needs a failure of the second of two imports
in one request, which the emulator's path-based faults cannot aim at: the view and unit
tests cover it with the fake CoreAPI."""

from __future__ import annotations

import pytest
from django.test import Client

from memory_ui.models import AuditEvent
from tests.integration.test_changes import (  # noqa: F401 (fixtures)
    Agent,
    _form,
    agent,
    portal_coreapi,
)
from tests.pages import forms

pytestmark = pytest.mark.django_db

TRAVEL = (
    "## Added 2026-09-30T12:00:00Z — Trip preferences\n\n"
    "- Prefers aisle seats and morning flights.\n\n"
    "## Added 2026-11-25T18:45:30Z — Flight to Madrid\n"
    "> operation: op-77 · session: sess-9\n\n"
    "- Flight to Madrid on 3 March, 10:00.\n"
)
LANDED = (
    "## Added 2026-11-25T18:45:30Z — Flight to Madrid (moved from Travel Planner)\n"
    "> operation: op-77 · session: sess-9\n\n"
    "- Flight to Madrid on 3 March, 10:00.\n"
)


def _preview(alice: Client, to: str, mode: str) -> str:
    """From the entry's Actions link (its own page without JavaScript) and that page's
    "Move or copy" link, through the chooser, to the preview."""
    page = alice.get("/memory/agents/travel-planner").content.decode()
    actions = "/memory/agents/travel-planner/1"
    assert f'href="{actions}" class="entry-actions"' in page
    entry_page = alice.get(actions, follow=True).content.decode()
    link = "/memory/entries/move?scope=agent&amp;agent=travel-planner&amp;index=1"
    assert f'href="{link}"' in entry_page
    chooser = alice.get(link.replace("&amp;", "&"))
    assert chooser.status_code == 200
    form = next(f for f in forms(chooser.content.decode()) if f.method == "get")
    shown = alice.get(form.action, {**form.fields, "to": to, "mode": mode})
    assert shown.status_code == 200, shown.content[:2000]
    return shown.content.decode()


def test_move_to_the_shared_memory_and_one_undo(alice: Client, agent: Agent):  # noqa: F811
    agent.replace(TRAVEL, "travel-planner")
    shared_before = agent.text()
    preview = _preview(alice, "user", "move")
    assert "It leaves <strong>Travel Planner</strong>, which keeps 1 entry." in preview

    done = alice.post(
        "/memory/entries/move/confirm", _form(preview, "/memory/entries/move/confirm").fields
    )
    assert done.status_code == 200, done.content[:2000]
    assert agent.text().endswith(LANDED)
    assert "Flight to Madrid" not in agent.text("travel-planner")
    assert "aisle seats" in agent.text("travel-planner")
    event = AuditEvent.objects.get(action="move-entry")
    assert (event.outcome, event.agent_name, event.destination_scope) == (
        "ok",
        "travel-planner",
        "user",
    )

    undone = alice.post(
        "/memory/entries/move/undo",
        _form(done.content.decode(), "/memory/entries/move/undo").fields,
    )
    assert undone.status_code == 200
    assert agent.text("travel-planner") == TRAVEL
    assert agent.text() == shared_before


def test_copy_to_another_agent_while_an_agent_appends_there(alice: Client, agent: Agent):  # noqa: F811
    agent.replace(TRAVEL, "travel-planner")
    preview = _preview(alice, "agent:benefits-assistant", "copy")
    agent.append("- Dental plan renewed.", "benefits-assistant", reason="Renewal")

    fields = _form(preview, "/memory/entries/move/confirm").fields
    done = alice.post("/memory/entries/move/confirm", fields)
    assert done.status_code == 200, done.content[:2000]
    benefits = agent.text("benefits-assistant")
    assert "- Dental plan renewed." in benefits  # the append meanwhile is kept
    assert LANDED.replace("moved from", "copied from") in benefits
    assert agent.text("travel-planner") == TRAVEL  # a copy leaves the source alone
    again = alice.post("/memory/entries/move/confirm", fields)
    assert again.status_code == 409  # the same confirmation works once
    assert agent.text("benefits-assistant") == benefits
