"""Against the real devstack (conditional writes on): an agent's append no longer blocks a
person's edit, delete or undo, and a note whose answer was lost is not added twice when
the form given back is sent again (docs/architecture.md, Changes made meanwhile).

The agent appends straight to the emulator with alice's delegated token. The race tests
sweep the append's arrival across the portal request (as bench/integrity.py does with more
tries): each try schedules the append for a moment of the request measured beforehand.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

import pytest
from django.test import Client

from devstack.coreapi.faults import Faults
from memory_ui.sources.coreapi import client as coreapi_client
from tests.integration.test_changes import (  # noqa: F401 (fixtures)
    HTMX,
    Agent,
    _entry_delete,
    _entry_editor,
    _form,
    agent,
    faults,
    portal_coreapi,
)

pytestmark = pytest.mark.django_db

FLIGHT = "- Flight to Madrid on 3 March, 10:00."
NOTICE = "\u201cFlight to Madrid\u201d was added while you were changing this memory"


def _delete_fields(alice: Client, index: str = "1") -> dict[str, str]:
    page = alice.get("/memory/user").content.decode()
    return _entry_delete(page, index).fields


def test_delete_while_an_agent_appends_keeps_both(alice: Client, agent: Agent):  # noqa: F811
    fields = _delete_fields(alice)
    agent.append(FLIGHT, reason="Flight to Madrid")

    response = alice.post("/memory/entries/delete", fields)

    assert response.status_code == 302
    stored = agent.text()
    assert "Writes in British English" not in stored
    assert FLIGHT in stored and "Prefers concise answers" in stored
    assert NOTICE in alice.get(response["Location"]).content.decode()


def test_undo_while_an_agent_appends_restores_and_keeps_it(alice: Client, agent: Agent):  # noqa: F811
    before = agent.text()
    deleted = alice.post("/memory/entries/delete", _delete_fields(alice), **HTMX)
    undo = _form(deleted.content.decode(), "/memory/undo")
    agent.append(FLIGHT, reason="Flight to Madrid")

    response = alice.post(undo.action, undo.fields, **HTMX)

    assert response.status_code == 200
    stored = agent.text()
    assert stored.startswith(before.rstrip()) and stored.rstrip().endswith(FLIGHT)
    assert "both are kept" in response.content.decode()


def test_entry_edit_while_an_agent_appends_changes_only_that_entry(alice: Client, agent: Agent):  # noqa: F811
    form = _entry_editor(alice, "/memory/user", 1)
    agent.append(FLIGHT, reason="Flight to Madrid")

    response = alice.post(form.action, {**form.fields, "content": "- Writes in US English."})

    assert response.status_code == 302
    stored = agent.text()
    assert "- Writes in US English." in stored and "British English" not in stored
    assert stored.rstrip().endswith(FLIGHT)


def test_import_replace_still_refuses_when_anything_arrived(alice: Client, agent: Agent):  # noqa: F811
    preview = alice.post("/memory/user/import/preview", {"pasted": "- Only this.\n"})
    confirm = _form(preview.content.decode(), "/memory/user/import/confirm")
    agent.append(FLIGHT)
    meanwhile = agent.text()
    fields = {**confirm.fields, "text": "- Only this.\n", "mode": "replace"}

    response = alice.post(confirm.action, {**fields, "confirm_replace": "yes"})

    assert response.status_code == 409
    assert agent.text() == meanwhile


# --- the race, swept across the request ---------------------------------------------------


def _delete(alice: Client) -> Callable[[], object]:
    fields = _delete_fields(alice, "0")
    return lambda: alice.post("/memory/entries/delete", fields)


def _entry_edit(alice: Client) -> Callable[[], object]:
    form = _entry_editor(alice, "/memory/user", 0)
    fields = {**form.fields, "content": "- Prefers long answers."}
    return lambda: alice.post(form.action, fields)


def _undo(alice: Client) -> Callable[[], object]:
    deleted = alice.post("/memory/entries/delete", _delete_fields(alice, "0"), **HTMX)
    undo = _form(deleted.content.decode(), "/memory/undo")
    return lambda: alice.post(undo.action, undo.fields)


def _clear(alice: Client) -> Callable[[], object]:
    page = alice.get("/memory/clear", {"scope": "user"}).content.decode()
    fields = {**_form(page, "/memory/clear").fields, "confirm": "true"}
    return lambda: alice.post("/memory/clear", fields)


FLOWS = {"delete": _delete, "entry edit": _entry_edit, "undo": _undo, "clear": _clear}
TRIES = 6


@pytest.mark.parametrize("latency_ms", [0, 100])
@pytest.mark.parametrize("flow", list(FLOWS))
def test_an_agent_append_swept_across_each_flow(
    alice: Client,
    agent: Agent,  # noqa: F811
    faults: Faults,  # noqa: F811
    settings,
    flow: str,
    latency_ms: int,
):
    settings.COREAPI_READ_TIMEOUT = 10
    coreapi_client.get_client.cache_clear()
    baseline = agent.text()
    faults.latency_ms, faults.path_regex = latency_ms, "^/instances/"
    prepare = FLOWS[flow]
    send = prepare(alice)
    began = time.monotonic()
    send()
    window = time.monotonic() - began
    done = 0
    for i in range(TRIES):
        agent.replace(baseline)
        send = prepare(alice)
        marker = f"- Agent fact {uuid.uuid4().hex[:12]}."
        # The emulator holds the append `latency_ms` before storing it: sent that early.
        start = time.monotonic() + 0.05
        lands = start + window * (i + 0.5) / TRIES - latency_ms / 1000
        appender = threading.Timer(max(0.0, lands - time.monotonic()), agent.append, [marker])
        appender.start()
        # Not a wait for a condition: the request starts at its moment of the sweep.
        time.sleep(max(0.0, start - time.monotonic()))
        response = send()
        appender.join(timeout=10)
        assert not appender.is_alive()
        stored = agent.text()
        assert marker in stored, f"try {i}: the agent's append was lost"
        if response.status_code == 302:
            done += 1
        else:
            assert response.status_code == 409, response.status_code
    if flow == "clear":
        return  # a clear refuses whenever anything arrived after its confirmation
    assert done >= TRIES - 1, f"{flow}: {done} of {TRIES} went through"
