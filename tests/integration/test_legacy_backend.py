"""DRAFT MemoryBackend over the legacy stores (memory_ui.sources.legacy.adapter) against the
emulator, with the portal's real client-credentials token."""

from __future__ import annotations

import pytest

from devstack.legacy import emulator
from devstack.serve import RunningServer
from memory_ui import auth
from memory_ui.sources.legacy import LegacyConflict
from memory_ui.sources.legacy.adapter import CONVERSATIONS_REASON, FORBIDDEN_REASON, LegacyBackend
from memory_ui.sources.legacy.client import LegacyStoresClient
from memory_ui.sources.protocol import Capability, MemoryBackend, Subject, Unsupported, require

STORES = {
    "travel-planner": "main.agents.travel_planner_memory",
    "it-helpdesk": "main.agents.it_helpdesk_memory",
    "benefits-assistant": "main.agents.benefits_assistant_memory",
    "finance-insights": "main.finance.finance_insights_memory",
}
ALICE = Subject("alice@contoso.com", "a11ce000-0000-4000-8000-000000000001")
BOB = Subject("bob@contoso.com", "b0b00000-0000-4000-8000-000000000002")


@pytest.fixture
def backend(portal_identity, fresh_legacy: RunningServer) -> LegacyBackend:
    client = LegacyStoresClient(fresh_legacy.url, auth.legacy_app_token, backoff=0.01)
    return LegacyBackend(client, STORES, "{upn}")


def test_it_is_a_memory_backend_with_declared_capabilities(backend: LegacyBackend) -> None:
    assert isinstance(backend, MemoryBackend)
    assert Capability.SEARCH in backend.capabilities
    assert Capability.IMPORT not in backend.capabilities
    with pytest.raises(Unsupported, match="version check"):
        require(backend, Capability.CONDITIONAL_WRITE)


def test_targets_are_the_readable_configured_stores(backend: LegacyBackend) -> None:
    targets = backend.list_targets(ALICE)

    assert [t.agent for t in targets] == ["travel-planner", "it-helpdesk", "benefits-assistant"]
    assert {t.source for t in targets} == {"legacy"}


def test_read_page_then_item(backend: LegacyBackend) -> None:
    travel = backend.list_targets(ALICE)[0]
    page = backend.read_page(ALICE, travel)

    assert page.items[0].key == "/memories/preferences.md"
    assert all(i.text is None for i in page.items)
    assert "aisle" in (backend.read_item(ALICE, travel, "/memories/preferences.md").text or "")


def test_search_covers_every_store(backend: LegacyBackend) -> None:
    found = backend.search(ALICE, "ThinkPad aisle")

    assert {(t.agent, i.key) for t, i in found} == {
        ("travel-planner", "/memories/preferences.md"),
        ("it-helpdesk", "/memories/devices.md"),
    }


def test_delete_then_restore_is_undo(backend: LegacyBackend) -> None:
    travel = backend.list_targets(ALICE)[0]
    before = backend.read_item(ALICE, travel, "/memories/profile.md")

    deleted = backend.delete_item(ALICE, travel, "/memories/profile.md")
    restored = backend.restore_item(ALICE, travel, deleted)

    assert (restored.text, restored.description) == (before.text, before.description)
    with pytest.raises(LegacyConflict):
        backend.restore_item(ALICE, travel, deleted)  # nothing is overwritten


def test_append_creates_then_extends_the_notes_file(backend: LegacyBackend) -> None:
    helpdesk = backend.list_targets(BOB)[1]

    backend.append(BOB, helpdesk, "first", reason="test")
    assert backend.append(BOB, helpdesk, "second", reason="test").text == "first\nsecond"


def test_erase_subject_reports_per_store_and_conversations(backend: LegacyBackend) -> None:
    erasure = backend.erase_subject(ALICE)

    rows = {(o.key, o.result) for o in erasure.outcomes}
    assert ("main.agents.travel_planner_memory", "erased") in rows
    # Read-only: nothing could be erased there, so not "partly".
    assert ("main.agents.benefits_assistant_memory", "not possible") in rows
    assert ("main.finance.finance_insights_memory", "not possible") in rows  # no READ
    assert erasure.outcomes[-1].reason == CONVERSATIONS_REASON
    assert backend.read_page(ALICE, backend.list_targets(ALICE)[0]).items == ()


def test_a_refused_delete_is_not_possible_with_its_reason(
    backend: LegacyBackend, fresh_legacy: RunningServer
) -> None:
    benefits = backend.list_targets(ALICE)[2]

    rows = backend.clear_target(ALICE, benefits)  # each file's delete gets a 403

    assert [(o.key, o.result, o.reason) for o in rows] == [
        ("/memories/enrolment.md", "not possible", FORBIDDEN_REASON)
    ]
    kept = emulator(fresh_legacy).store.entry(benefits.key, ALICE.upn, "/memories/enrolment.md")
    assert kept is not None and "PPO Plus" in (kept.contents or "")


def test_export_is_markdown_file_by_file(backend: LegacyBackend) -> None:
    text = backend.export(BOB, backend.list_targets(BOB)[1])

    assert text.startswith("# main.agents.it_helpdesk_memory\n")
    assert "## /memories/tickets/printer.md" in text
    assert "Universal Print driver" in text
