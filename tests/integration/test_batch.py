"""Select and delete many against the real devstack: 200 entries across five memories (the
shared one and four agents'), chosen by a filter, go with one preview and one confirmation,
and come back with one Undo, each memory byte for byte as it was. Real JWTs, the
emulator's memory, CSRF enforced; only the Django test client stands in for the browser."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.test import Client

from devstack.config import Fixtures
from devstack.coreapi import start as start_coreapi
from devstack.coreapi.faults import Faults
from devstack.pki import Pki
from devstack.serve import RunningServer
from memory_ui.models import AuditEvent
from memory_ui.sources.coreapi import CallerAuth
from memory_ui.sources.coreapi.client import CoreAPIClient
from tests.batch_memories import ALICE, PER_MEMORY, REASON, AsAlice, with_four_agents
from tests.integration.conftest import sign_in
from tests.pages import form_with_button, hidden_fields, submitted

pytestmark = pytest.mark.django_db


@pytest.fixture
def portal_coreapi(
    tmp_path: Path, idp: RunningServer, pki: Pki, demo: Fixtures
) -> Iterator[RunningServer]:
    """An emulator of its own (this test deletes), where alice has four agents."""
    server = start_coreapi(
        home=tmp_path / "coreapi",
        idp_url=idp.url,
        ca_file=pki.ca_cert,
        faults=Faults(),
        fixtures_=with_four_agents(demo),
    )
    yield server
    server.stop()


@pytest.fixture
def documents(portal_coreapi, coreapi_tokens, demo) -> Iterator[Callable[[], dict]]:
    """The forty entries added to each of the five memories; for the test, a call that
    reads what CoreAPI holds in each now."""
    direct = AsAlice(
        CoreAPIClient(portal_coreapi.url, demo.instance_id),
        CallerAuth(coreapi_tokens.delegated(ALICE)),
        demo.instance_id,
    )
    direct.add_entries()
    yield direct.documents
    direct.client.close()


def test_two_hundred_entries_in_five_memories_one_preview_one_confirmation_one_undo(
    portal, pki, documents
):
    before = documents()
    assert all(text.count(f"— {REASON}") == PER_MEMORY for text in before.values())
    browser = Client(enforce_csrf_checks=True)
    sign_in(browser, ALICE, str(pki.ca_cert))

    found = browser.get("/memory/select", {"reason": REASON})
    html = found.content.decode()
    assert found.status_code == 200
    assert "200 matching entries in 5 memories" in html

    # One preview: "Select all 200 matching" sends the filter (and the CSRF token).
    every = form_with_button(html, "mode", "all")
    preview = browser.post(every.action, submitted(every, ("mode", "all")))
    page = preview.content.decode()
    assert preview.status_code == 200
    assert "Delete 200 entries from 5 memories?" in page
    assert documents() == before  # nothing changed yet

    # One confirmation: the preview's form carries 200 picks and a version per memory.
    confirm = hidden_fields(page)
    assert len(confirm["pick"]) == 200
    assert len([name for name in confirm if name.startswith("version-")]) == 5
    done = browser.post("/memory/select/delete", confirm)
    result = done.content.decode()
    assert done.status_code == 200
    assert "Deleted 200 entries" in result
    assert result.count(f"deleted {PER_MEMORY} entries.") == 5
    after = documents()
    assert all(REASON not in text and "Imported line" not in text for text in after.values())
    assert "aisle seats" in after["travel-planner"]  # the other entries stay
    assert AuditEvent.objects.filter(action="delete-entry").count() == 5

    # One Undo: every memory back exactly as it was.
    undo = hidden_fields(result)
    restored = browser.post("/memory/select/undo", undo)
    assert restored.status_code == 200
    assert restored.content.decode().count(f"restored {PER_MEMORY} entries.") == 5
    assert documents() == before
    assert browser.post("/memory/select/undo", undo).status_code == 410  # once only
