"""The move from the legacy stores into CoreAPI (memory_ui.memory.source_move) and
`manage.py move_legacy_memory`, against both emulators over HTTP with real tokens."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from devstack.coreapi import Faults
from devstack.coreapi.app import emulator
from devstack.serve import RunningServer
from memory_ui.documents import parse_document
from memory_ui.identity import Identity
from memory_ui.memory.source_move import (
    MovedFile,
    Origin,
    Result,
    Step,
    move_origin,
    move_preview,
    move_run,
)
from memory_ui.models import AuditEvent
from memory_ui.sources import generic, registry
from memory_ui.sources.agent_memory import Target
from memory_ui.sources.coreapi import CallerAuth, agent_object_id
from memory_ui.sources.coreapi import client as coreapi_client
from memory_ui.sources.coreapi.operations import Actor, memory_read
from memory_ui.sources.legacy import operations as ops
from memory_ui.sources.protocol import Item

TRAVEL = "main.agents.travel_planner_memory"
HELPDESK = "main.agents.it_helpdesk_memory"
ALICE = Identity("a11ce000-0000-4000-8000-000000000001", "t", "alice@contoso.com", "Alice", (), "")
PREFERENCES, PROFILE, BERLIN = (
    "/memories/preferences.md",
    "/memories/profile.md",
    "/memories/trips/2026-06-berlin.md",
)


@pytest.fixture
def portal_coreapi(fresh_coreapi: RunningServer) -> RunningServer:
    return fresh_coreapi


@pytest.fixture
def legacy(db, settings, portal, fresh_legacy: RunningServer) -> Iterator[None]:
    settings.LEGACY_STORES_BASE_URL = fresh_legacy.url
    settings.COREAPI_GET_RETRIES = 0
    ops.reset_caches()
    yield
    ops.reset_caches()


@pytest.fixture
def alice(legacy, coreapi_tokens) -> Actor:
    return Actor(ALICE, CallerAuth(coreapi_tokens.delegated("alice@contoso.com")))


@pytest.fixture
def faults(fresh_coreapi: RunningServer) -> Iterator[Faults]:
    coreapi_client.get_client.cache_clear()
    app = emulator(fresh_coreapi)
    app.faults = Faults()
    yield app.faults
    app.faults = Faults()


def _store(actor: Actor, key: str = TRAVEL) -> Origin:
    origin = move_origin(actor, registry.source("legacy"), key)
    assert origin is not None
    return origin


def _travel(actor: Actor) -> Origin:
    return _store(actor)


def _read(actor: Actor, path: str) -> Item:
    travel = _travel(actor)
    return generic.item_read(actor, travel.backend, travel.target, path)


def _files(actor: Actor) -> tuple[Item, ...]:
    travel = _travel(actor)
    return generic.target_page(actor, travel.backend, travel.target).items


def _agent_memory(actor: Actor, settings, agent: str = "travel-planner") -> str:
    oid = agent_object_id(settings.COREAPI_INSTANCE_ID, agent)
    memory = coreapi_client.get_client().get_memory(actor.auth, "agent", oid)
    return memory.content_markdown


def _results(report) -> dict[str, Result]:
    return {moved.planned.path: moved.result for moved in report.files}


def test_preview_says_where_each_text_goes_and_what_is_already_there(alice: Actor) -> None:
    plan = move_preview(alice, _travel(alice))

    files = {f.path: f for f in plan.files}
    assert {f.destination.key for f in plan.files} == {"agent:travel-planner"}
    prefs = files[PREFERENCES]
    assert prefs.step is Step.MOVE
    assert prefs.present_items == (
        "- Prefers aisle seats and morning flights; loyalty: Alaska Mileage Plan.",
    )
    assert prefs.new_items == ("- Vegetarian meals on flights longer than three hours.",)
    assert files[PROFILE].step is Step.ALREADY_THERE  # in the memory shared with every agent
    assert files[BERLIN].step is Step.MOVE and len(files[BERLIN].new_items) == 2
    updated = _read(alice, PREFERENCES).updated
    assert updated is not None
    assert prefs.reason == f"Moved from {TRAVEL} {PREFERENCES} (file last changed {_z(updated)})"
    assert plan.errors == ()


def _z(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_move_appends_with_the_reason_verifies_and_twice_adds_nothing(
    alice: Actor, settings
) -> None:
    before = _agent_memory(alice, settings)
    berlin_changed = _read(alice, BERLIN).updated
    assert berlin_changed is not None

    report = move_run(alice, _travel(alice))

    assert _results(report) == {
        PREFERENCES: Result.MOVED,
        PROFILE: Result.ALREADY_THERE,
        BERLIN: Result.MOVED,
    }
    after = _agent_memory(alice, settings)
    assert after.count("Vegetarian meals") == 1 and after.count("Hotel Adlon") == 1
    assert after.count("aisle seats") == before.count("aisle seats") == 1
    # CoreAPI keeps the append's reason, with the file's own time; the portal reads it back.
    assert f"Moved from {TRAVEL} {BERLIN} (file last changed {_z(berlin_changed)})" in after
    moved = parse_document(after).entries[-1]
    assert moved.file_changed == berlin_changed.replace(microsecond=0)
    assert moved.provenance_label == "Moved in"

    again = move_run(alice, _travel(alice))

    assert set(_results(again).values()) == {Result.ALREADY_THERE}
    assert _agent_memory(alice, settings) == after
    # One event per file moved, none for the file already there or the second run, and
    # none of the appends inside (Activity read them as the person's own notes).
    moves = AuditEvent.objects.filter(action="move", source="legacy")
    assert moves.count() == 2 and {m.outcome for m in moves} == {"ok"}
    assert {m.destination_agent_name for m in moves} == {"travel-planner"}
    assert not AuditEvent.objects.filter(action="append").exists()
    assert _files(alice)  # nothing deleted unless asked


def test_a_failure_halfway_is_resumed_by_running_again(
    alice: Actor, settings, faults: Faults
) -> None:
    def fail_after_the_first(moved: MovedFile) -> None:
        faults.path_regex = "memory/append"
        faults.error_rate = 1.0

    report = move_run(alice, _travel(alice), progress=fail_after_the_first)

    assert _results(report) == {
        PREFERENCES: Result.MOVED,
        PROFILE: Result.ALREADY_THERE,
        BERLIN: Result.FAILED,
    }
    assert "Hotel Adlon" not in _agent_memory(alice, settings)
    failed = AuditEvent.objects.filter(action="move", outcome="error")
    assert failed.count() == 1
    assert failed.get().reason.startswith(f"Moved from {TRAVEL} {BERLIN} (file last changed ")
    faults.error_rate = 0.0

    resumed = move_run(alice, _travel(alice))

    assert _results(resumed)[BERLIN] is Result.MOVED
    assert _results(resumed)[PREFERENCES] is Result.ALREADY_THERE
    text = _agent_memory(alice, settings)
    assert text.count("Vegetarian meals") == 1 and text.count("Hotel Adlon") == 1


def test_delete_only_the_verified_copies_when_asked(alice: Actor, faults: Faults) -> None:
    def fail_after_the_first(moved: MovedFile) -> None:
        faults.path_regex = "memory/append"
        faults.error_rate = 1.0

    report = move_run(alice, _travel(alice), delete_verified=True, progress=fail_after_the_first)

    assert {m.planned.path: m.deleted for m in report.files} == {
        PREFERENCES: True,
        PROFILE: True,
        BERLIN: False,  # its append failed: the legacy copy stays
    }
    assert [i.key for i in _files(alice)] == [BERLIN]
    assert AuditEvent.objects.filter(action="delete-entry", source="legacy").count() == 2


def test_move_of_one_file(alice: Actor, settings) -> None:
    report = move_run(alice, _travel(alice), [BERLIN])

    assert _results(report) == {BERLIN: Result.MOVED}
    assert "Vegetarian meals" not in _agent_memory(alice, settings)


def test_without_the_agent_the_text_goes_to_the_shared_memory(
    alice: Actor, settings, coreapi_tokens
) -> None:
    settings.LEGACY_STORES_AGENTS = f'{{"no-such-agent": "{HELPDESK}"}}'
    ops.reset_caches()
    store = _store(alice, HELPDESK)

    report = move_run(alice, store)

    assert _results(report) == {"/memories/devices.md": Result.MOVED}
    shared = memory_read(alice, Target("user")).content_markdown
    assert "ThinkPad X1 Carbon" in shared


def _users(tmp_path: Path, *upns: str) -> Path:
    path = tmp_path / "users.txt"
    path.write_text("# people to move\n" + "\n".join(upns) + "\n\n", encoding="utf-8")
    return path


def _command(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("move_legacy_memory", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_command_dry_run_then_real_run_then_again(legacy, tmp_path: Path, settings) -> None:
    users = _users(tmp_path, "alice@contoso.com", "Bob@contoso.com")

    out, err = _command("--store", "it-helpdesk", "--users", str(users), "--dry-run")

    assert out.splitlines()[0].split() == [
        "user",
        "files",
        "to",
        "move",
        "already",
        "there",
        "items",
        "new",
        "errors",
    ]
    # alice's CoreAPI it-helpdesk memory already has her laptop: one item of two is new
    assert out.splitlines()[2].split() == ["alice@contoso.com", "1", "1", "0", "1", "0"]
    assert out.splitlines()[3].split() == ["bob@contoso.com", "2", "2", "0", "2", "0"]
    assert "2/2 bob@contoso.com" in err.splitlines()[-1]
    assert not AuditEvent.objects.filter(action__in=("append", "move")).exists()

    out, _ = _command("--store", HELPDESK, "--users", str(users), "--delete-verified")

    assert out.splitlines()[2].split() == ["alice@contoso.com", "1", "1", "0", "0", "0", "1"]
    assert out.splitlines()[3].split() == ["bob@contoso.com", "2", "2", "0", "0", "0", "2"]
    moves = AuditEvent.objects.filter(action="move")
    assert {(m.actor_upn.startswith("operator:"), m.actor_is_support) for m in moves} == {
        (True, True)
    }

    out, _ = _command("--store", HELPDESK, "--users", str(users))
    assert out.splitlines()[2].split() == ["alice@contoso.com", "0", "0", "0", "0", "0", "0"]


def test_command_refuses_an_unknown_store_and_a_bad_users_file(legacy, tmp_path: Path) -> None:
    users = _users(tmp_path, "alice@contoso.com")
    with pytest.raises(CommandError, match="is not a configured store of Legacy memory stores"):
        _command("--store", "main.agents.nope", "--users", str(users))
    with pytest.raises(CommandError, match="is not a UPN"):
        _command("--store", HELPDESK, "--users", str(_users(tmp_path, "not a upn")))


def test_command_fails_loudly_and_the_next_run_resumes(
    legacy, tmp_path: Path, faults: Faults
) -> None:
    users = _users(tmp_path, "bob@contoso.com")
    faults.path_regex = "memory/append"
    faults.error_rate = 1.0
    out = io.StringIO()

    with pytest.raises(CommandError, match="1 of 1 users not done; run again to resume"):
        call_command(
            "move_legacy_memory",
            "--store",
            HELPDESK,
            "--users",
            str(users),
            stdout=out,
            stderr=io.StringIO(),
        )

    assert out.getvalue().splitlines()[2].split() == [
        "bob@contoso.com",
        "2",
        "0",
        "0",
        "0",
        "2",
        "0",
    ]
    faults.error_rate = 0.0
    out_again, _ = _command("--store", HELPDESK, "--users", str(users))
    assert out_again.splitlines()[2].split() == ["bob@contoso.com", "2", "2", "0", "0", "0", "0"]


def test_a_copy_not_deleted_when_asked_is_not_done_and_the_next_run_deletes_it(
    legacy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--delete-verified: a verified copy whose delete fails leaves the person failed, so a
    rerun of the same job retries the delete instead of passing them over. The emulator
    cannot refuse a DELETE alone (its faults match paths, which reads share), so the delete
    is refused here by replacing the one function that makes it."""
    from memory_ui.memory import source_move
    from memory_ui.models import JobProgress

    users = _users(tmp_path, "bob@contoso.com")
    refuse = "The store refused the delete."
    monkeypatch.setattr(source_move, "_delete_verified", lambda actor, planned: refuse)

    with pytest.raises(CommandError, match="1 of 1 users not done; run again to resume"):
        _command("--store", HELPDESK, "--users", str(users), "--delete-verified")
    row = JobProgress.objects.get(upn="bob@contoso.com")
    assert (row.state, row.error) == (JobProgress.State.FAILED, "not deleted")

    monkeypatch.undo()
    out, _ = _command("--store", HELPDESK, "--users", str(users), "--delete-verified")

    assert out.splitlines()[2].split()[-1] == "2"  # both copies deleted now
    assert JobProgress.objects.get(upn="bob@contoso.com").state != JobProgress.State.FAILED
