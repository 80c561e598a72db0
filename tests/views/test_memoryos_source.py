"""MemoryOS (seed 002) through the registry alone: PORTAL_MEMORY_SOURCES naming
memory_ui.sources.memoryos, its emulator at MEMORYOS_BASE_URL. The dashboard shows its
agents and says it cannot list, search asks each agent, and support's deletion request
names it "not possible" with its reason, before and after the clear."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from devstack.memoryos import emulator
from devstack.serve import RunningServer
from memory_ui.sources import registry
from memory_ui.sources.memoryos.adapter import NO_ERASURE, NO_LIST, TITLE
from tests.devstack.memoryos_api import ALICE as ALICE_OID
from tests.pages import table_rows
from tests.views.conftest import identity_for
from tests.views.helpers import body, page_text

ALICE = "alice@contoso.com"

SOURCES = [
    "memory_ui.sources.coreapi",
    "memory_ui.sources.memoryos",
    "memory_ui.sources.agent_notes",
]


@pytest.fixture
def memoryos_source(settings, fake, fresh_memoryos: RunningServer) -> None:
    settings.PORTAL_MEMORY_SOURCES = SOURCES
    settings.MEMORYOS_BASE_URL = fresh_memoryos.url
    # The view tests' alice has the object id identity_for gives, not the devstack's.
    store = emulator(fresh_memoryos).store
    with store.db.write() as conn:
        for table in ("memories", "clarifications"):
            conn.execute(
                f"UPDATE {table} SET external_user_id = ? WHERE external_user_id = ?",
                (identity_for(ALICE).oid, ALICE_OID),
            )


def test_it_is_registered_through_settings_alone(memoryos_source) -> None:
    assert [source.name for source in registry.sources()] == ["coreapi", "memoryos", "agent_notes"]


def test_the_dashboard_shows_its_agents_and_that_it_cannot_list(
    alice: Client, memoryos_source, fresh_memoryos: RunningServer
) -> None:
    section_url = reverse("source_section", args=["memoryos"])
    assert f'hx-get="{section_url}"' in body(alice.get(reverse("dashboard")))

    section = alice.get(section_url, headers={"HX-Request": "true"})

    assert section.status_code == 200
    text = page_text(section)
    assert "Travel Planner" in text and "IT Helpdesk" in text
    assert NO_LIST in text
    # Retrieval moves last_accessed and counts against quota: only when a person asks.
    assert emulator(fresh_memoryos).store.db.rows("SELECT id FROM retrievals") == []


def test_search_asks_each_agent(alice: Client, memoryos_source) -> None:
    html = body(alice.get(reverse("search"), {"q": "ThinkPad"}))

    assert f'<h3 id="search-source-memoryos">{TITLE}' in html
    assert "<mark>ThinkPad</mark> X1 Carbon" in html
    assert "Alice uses a ThinkPad X1 Carbon with Windows 11." in page_text(
        alice.get(reverse("search"), {"q": "ThinkPad"})
    )


def test_support_deletion_request_says_not_possible_before_and_after_the_clear(
    carol: Client, memoryos_source
) -> None:
    from tests.views.test_support import clear, export, start

    request_url = start(carol)
    before = page_text(carol.get(request_url))
    assert f"{TITLE} Memoryos not possible — {NO_ERASURE}" in before

    archive = export(carol, request_url)
    assert not [name for name in archive.namelist() if name.startswith("memoryos/")]
    result = carol.get(clear(carol, request_url)["Location"])
    rows = [row for row in table_rows(body(result)) if row and row[0] == TITLE]
    assert rows == [[TITLE, "Memoryos", "not possible", "—", NO_ERASURE]]
