"""`manage.py move_legacy_memory` as a tenant-wide job (issue 31, item 5): shards of one list
and per-person progress, against both emulators over HTTP with real tokens. A pod killed
halfway is a run stopped by `--limit`, or one whose person was moved but not yet recorded."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command

from devstack.serve import RunningServer
from memory_ui.identity import Identity
from memory_ui.memory.source_move import Origin, move_run
from memory_ui.models import AuditEvent, JobProgress
from memory_ui.sources import generic, registry
from memory_ui.sources.coreapi import CallerAuth, agent_object_id
from memory_ui.sources.coreapi import client as coreapi_client
from memory_ui.sources.coreapi.operations import Actor
from memory_ui.sources.legacy import operations as ops
from portal.metrics import JOB_PEOPLE

HELPDESK = "main.agents.it_helpdesk_memory"
PEOPLE = ("alice@contoso.com", "bob@contoso.com", "carol@contoso.com")
BOB = Identity("b0b00000-0000-4000-8000-000000000002", "t", "bob@contoso.com", "Bob", (), "")


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
def users(tmp_path: Path) -> Path:
    path = tmp_path / "users.txt"
    path.write_text("\n".join(PEOPLE) + "\n", encoding="utf-8")
    return path


def _move(users: Path, *args: str) -> str:
    out = io.StringIO()
    call_command(
        "move_legacy_memory",
        *("--store", HELPDESK, "--users", str(users), *args),
        stdout=out,
        stderr=io.StringIO(),
    )
    return out.getvalue()


def _helpdesk_memory(coreapi_tokens, settings, upn: str) -> str:
    oid = agent_object_id(settings.COREAPI_INSTANCE_ID, "it-helpdesk")
    auth = CallerAuth(coreapi_tokens.delegated(upn))
    return coreapi_client.get_client().get_memory(auth, "agent", oid).content_markdown


def _counted(shard: str, state: str) -> float:
    return JOB_PEOPLE.labels("move_legacy_memory", shard, state)._value.get()


def test_two_shards_of_one_list_share_nobody_and_cover_everyone(legacy, users: Path) -> None:
    _move(users, "--shard", "0/2")
    first = set(JobProgress.objects.values_list("upn", flat=True))
    assert first and set(PEOPLE) - first  # each shard has someone to take
    _move(users, "--shard", "1/2")
    rows = JobProgress.objects.all()

    assert {row.upn for row in rows} == set(PEOPLE)
    assert {row.upn for row in rows if row.shard == "0/2"} == first
    assert {row.upn for row in rows if row.shard == "1/2"} == set(PEOPLE) - first
    assert len({row.job for row in rows}) == 1  # every shard of one run is one job


def test_a_pod_stopped_halfway_resumes_without_a_second_copy(
    legacy, users: Path, settings, coreapi_tokens
) -> None:
    skipped_before = _counted("0/1", "skipped")
    out = _move(users, "--limit", "1")  # the pod stops after its first person

    assert [line.split()[0] for line in out.splitlines()[2:]] == ["alice@contoso.com"]
    alice = JobProgress.objects.get()
    assert (alice.upn, alice.state, alice.moved, alice.already_there) == (
        "alice@contoso.com",
        "done",
        1,
        0,
    )
    # Killed again, this time after bob's move reached CoreAPI but before his row was written.
    bob = Actor(BOB, CallerAuth(coreapi_tokens.delegated("bob@contoso.com")))
    source = registry.source("legacy")
    assert source.backend is not None
    backend = source.backend(bob)
    target = generic.target_of(bob, backend, HELPDESK)
    assert target is not None
    move_run(bob, Origin(source.name, backend, target))
    moves_so_far = AuditEvent.objects.filter(action="move").count()

    out = _move(users)  # the restarted pod

    assert "1 users passed over: done by an earlier run." in out
    table = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:-1]}
    assert set(table) == {"bob@contoso.com", "carol@contoso.com"}  # alice not read again
    assert table["bob@contoso.com"][:3] == ["2", "0", "2"]  # 2 files, both already there
    states = dict(JobProgress.objects.values_list("upn", "state"))
    assert states == {
        "alice@contoso.com": "done",
        "bob@contoso.com": "skipped",  # nothing left to move
        "carol@contoso.com": "skipped",  # no files
    }
    assert AuditEvent.objects.filter(action="move").count() == moves_so_far
    alice_text = _helpdesk_memory(coreapi_tokens, settings, "alice@contoso.com")
    bob_text = _helpdesk_memory(coreapi_tokens, settings, "bob@contoso.com")
    assert alice_text.count("Phone: iPhone 15") == 1
    assert bob_text.count("Surface Laptop 6") == 1 and bob_text.count("Universal Print") == 1

    again = _move(users)  # a second run of the whole job adds nothing

    assert "3 users passed over: done by an earlier run." in again
    assert _helpdesk_memory(coreapi_tokens, settings, "bob@contoso.com") == bob_text
    assert _counted("0/1", "skipped") - skipped_before == (1 + 2) + 3
