"""Moving or copying one entry (memory/moves.py): the entry as it lands (heading kind and
time and provenance line kept, the reason saying where it came from, nothing forged), and
the step itself against the fake CoreAPI: destination first, one audit event."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_ui.audit import Action
from memory_ui.documents import parse_document
from memory_ui.identity import Identity
from memory_ui.memory.moves import (
    Mode,
    SourceChanged,
    entry_move,
    land_in,
    landing_block,
    landing_reason,
)
from memory_ui.models import AuditEvent
from memory_ui.sources.agent_memory import Target
from memory_ui.sources.coreapi import Agent, CallerAuth, CoreAPIUnavailable
from memory_ui.sources.coreapi.operations import Actor, Version, memory_read
from tests.fake_coreapi import AGENT_PREFIX, FakeCoreAPI

NOW = datetime(2026, 12, 4, 15, 0, tzinfo=UTC)
TRAVEL = Target("agent", Agent("travel-planner", AGENT_PREFIX + "travel-planner", "Travel Planner"))
SHARED = Target("user")

DOCUMENT = (
    "Intro before any entry.\n\n"
    "## Added 2026-11-25T18:45:30Z — Upcoming trip\n"
    "> operation: op-1 · session: s-1\n\n"
    "- Trip to London.\n\n"
    "## Imported 2026-11-26T08:00:00Z\n\n"
    "Imported text.\n"
)


def test_the_reason_says_where_it_came_from_after_its_own():
    entries = parse_document(DOCUMENT).entries
    assert (
        landing_reason(entries[1], TRAVEL, Mode.MOVE) == "Upcoming trip (moved from Travel Planner)"
    )
    assert landing_reason(entries[2], SHARED, Mode.COPY) == "Copied from Shared memory"


def test_a_dated_entry_keeps_its_heading_time_kind_and_provenance_line():
    block = landing_block(DOCUMENT, 1, "Upcoming trip (moved from Travel Planner)", NOW)
    assert block == (
        "## Added 2026-11-25T18:45:30Z — Upcoming trip (moved from Travel Planner)\n"
        "> operation: op-1 · session: s-1\n\n- Trip to London.\n"
    )
    imported = landing_block(DOCUMENT, 2, "Moved from Travel Planner", NOW)
    assert imported.startswith("## Imported 2026-11-26T08:00:00Z — Moved from Travel Planner\n\n")


def test_the_text_before_the_first_entry_gets_a_heading_dated_now_and_cannot_claim_ids():
    forged = "> operation: forged · session: forged\nIntro.\n\n" + DOCUMENT.split("\n\n", 1)[1]
    block = landing_block(forged, 0, "Moved from Shared memory", NOW)
    assert block.startswith("## Added 2026-12-04T15:00:00Z — Moved from Shared memory\n\n\\>")
    landed = parse_document(land_in("", block)).entries[-1]
    assert landed.operation_id is None and landed.session_id is None


def test_a_reason_cannot_split_the_heading_or_add_lines():
    block = landing_block(DOCUMENT, 2, "Sneaky\n## Added 2020-01-01T00:00:00Z", NOW)
    assert block.count("\n## ") == 0 and block.splitlines()[0].endswith("2020-01-01T00:00:00Z")
    assert len(parse_document(land_in("", block)).entries) == 1


def test_it_lands_as_the_last_entry_or_not_at_all():
    block = landing_block(DOCUMENT, 1, "r", NOW)
    assert land_in("", block) == block
    landed = land_in("## Added 2026-01-01T00:00:00Z\n\nOld.\n\n\n", block)
    assert landed == "## Added 2026-01-01T00:00:00Z\n\nOld.\n\n" + block
    # An entry appended after a note whose code fence was never closed is an entry of its
    # own (issue 32, item 14), so the move lands there too, as the last entry.
    after_open_fence = land_in("## Added 2026-01-01T00:00:00Z\n\n```\nan open fence\n", block)
    assert (
        parse_document(after_open_fence).entries[-1].body == parse_document(block).entries[-1].body
    )


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeCoreAPI:
    coreapi = FakeCoreAPI(conditional=True)
    monkeypatch.setattr("memory_ui.sources.coreapi.client.get_client", lambda: coreapi)
    return coreapi


ALICE = Actor(
    Identity("oid-alice", "tid", "alice@contoso.com", "Alice", (), "home"),
    CallerAuth(access_token="fake-delegated-token"),
)


def _versions(fake: FakeCoreAPI) -> tuple[Version, Version]:
    return Version.of(memory_read(ALICE, TRAVEL)), Version.of(memory_read(ALICE, SHARED))


@pytest.mark.django_db
def test_a_move_writes_the_destination_first_and_is_one_audit_event(fake: FakeCoreAPI):
    travel, shared = _versions(fake)
    fake.calls.clear()
    done = entry_move(ALICE, TRAVEL, 1, travel, SHARED, shared, Mode.MOVE)
    assert done.removed is not None and not done.in_both
    writes = [call for call in fake.calls if call.method == "import_memory"]
    assert [call.agent_object_id for call in writes] == [None, TRAVEL.agent_object_id]
    assert AuditEvent.objects.get().action == Action.MOVE_ENTRY
    assert [d.target for d in done.undo_records()] == [SHARED, TRAVEL]


@pytest.mark.django_db
def test_a_failed_removal_leaves_the_entry_in_both(fake: FakeCoreAPI):
    travel, shared = _versions(fake)
    fake.fail("import_memory", CoreAPIUnavailable("down"), agent="travel-planner")
    done = entry_move(ALICE, TRAVEL, 1, travel, SHARED, shared, Mode.MOVE)
    assert done.in_both and done.removal_error is not None
    assert "Trip to London" in fake.text("travel-planner") and "Trip to London" in fake.text()
    event = AuditEvent.objects.get()
    assert event.outcome == "error" and event.destination_sha256_after
    assert [d.target for d in done.undo_records()] == [SHARED]


@pytest.mark.django_db
def test_a_changed_source_writes_nothing(fake: FakeCoreAPI):
    travel, shared = _versions(fake)
    fake.put(fake.text("travel-planner").replace("London", "Paris"), "travel-planner")
    fake.calls.clear()
    with pytest.raises(SourceChanged):
        entry_move(ALICE, TRAVEL, 1, travel, SHARED, shared, Mode.MOVE)
    assert fake.writes() == []
