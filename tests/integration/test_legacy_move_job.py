"""`manage.py move_legacy_memory` as a tenant-wide job (issue 31, item 5): shards of one list
and per-person progress, against both emulators over HTTP with real tokens. A pod killed
halfway is a run stopped by `--limit`, or one whose person was moved but not yet recorded;
a pod evicted is a `manage.py` process of its own sent SIGTERM."""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from devstack import legacy as legacy_module
from devstack.coreapi.faults import Faults
from devstack.serve import RunningServer
from memory_ui import auth
from memory_ui.identity import Identity
from memory_ui.memory.source_move import Origin, move_run
from memory_ui.models import AuditEvent, JobProgress
from memory_ui.sources import generic, registry
from memory_ui.sources.coreapi import CallerAuth, agent_object_id
from memory_ui.sources.coreapi import client as coreapi_client
from memory_ui.sources.coreapi.operations import Actor
from memory_ui.sources.legacy import operations as ops
from portal.metrics import JOB_PEOPLE
from tests.stack import REPO

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


def _move(users: Path, *args: str, stderr: io.StringIO | None = None) -> str:
    out = io.StringIO()
    call_command(
        "move_legacy_memory",
        *("--store", HELPDESK, "--users", str(users), *args),
        stdout=out,
        stderr=stderr or io.StringIO(),
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


def test_the_app_token_is_asked_for_each_person(
    legacy, users: Path, monkeypatch, coreapi_tokens
) -> None:
    """A shard of many people outlives one token (60-90 minutes): each person's calls
    carry the token msal gives at their turn, not the one the run started with."""
    issued: list[str] = []

    def app_token() -> str:
        # A token of its own each time (another lifetime), as msal gives once one expires.
        issued.append(coreapi_tokens.app(lifetime=3600 - len(issued)))
        return issued[-1]

    sent: list[tuple[str, str]] = []  # (person, token) of each CoreAPI call
    headers = coreapi_client._headers

    def spied(caller: CallerAuth, correlation_id: str, accept: str) -> dict[str, str]:
        person = caller.user_identity.upn if caller.user_identity else ""
        sent.append((person, caller.access_token))
        return headers(caller, correlation_id, accept)

    monkeypatch.setattr(auth, "app_token", app_token)
    monkeypatch.setattr(coreapi_client, "_headers", spied)

    _move(users)

    assert len(issued) == 1 + len(PEOPLE)  # the store's look-up, then one per person
    assert len(set(issued)) == len(issued)
    for turn, upn in enumerate(PEOPLE, 1):
        assert {token for person, token in sent if person == upn} <= {issued[turn]}
    assert {person for person, _ in sent} >= {"alice@contoso.com", "bob@contoso.com"}
    assert {token for person, token in sent if person == "bob@contoso.com"} == {issued[2]}


def test_no_token_mid_run_ends_it_clearly_and_a_rerun_resumes(
    legacy, users: Path, monkeypatch
) -> None:
    real = auth.app_token
    asked = 0

    def refused_after_alice() -> str:
        nonlocal asked
        asked += 1
        if asked > 2:  # the store's look-up, alice, then bob's turn
            raise auth.SignInFailed("The portal's own CoreAPI credentials were refused.")
        return real()

    monkeypatch.setattr(auth, "app_token", refused_after_alice)
    with pytest.raises(CommandError) as ended:
        _move(users)

    assert str(ended.value) == (
        "The portal got no CoreAPI app token: The portal's own CoreAPI credentials were "
        "refused. 1 of 3 users done; run again to resume."
    )
    assert list(JobProgress.objects.values_list("upn", "state")) == [("alice@contoso.com", "done")]

    monkeypatch.setattr(auth, "app_token", real)
    out = _move(users)

    assert "1 users passed over: done by an earlier run." in out
    assert dict(JobProgress.objects.values_list("upn", "state")) == {
        "alice@contoso.com": "done",
        "bob@contoso.com": "done",
        "carol@contoso.com": "skipped",
    }


def test_a_shards_output_names_nobody_and_a_run_by_hand_names_everyone(legacy, users: Path) -> None:
    """A pod's logs (--shard given) hold counts only; an operator at a terminal sees who."""
    err = io.StringIO()
    out = _move(users, "--shard", "0/1", stderr=err)

    assert out == "3 users: 2 done, 1 skipped, 0 failed.\n"
    assert err.getvalue().splitlines() == [
        f"[{'#' * 10}{'.' * 20}] 1/3 1 done, 0 skipped, 0 failed",
        f"[{'#' * 20}{'.' * 10}] 2/3 2 done, 0 skipped, 0 failed",
        f"[{'#' * 30}] 3/3 2 done, 1 skipped, 0 failed",
    ]
    assert "@" not in out + err.getvalue()

    JobProgress.objects.all().delete()  # the same people again, by hand
    err = io.StringIO()
    out = _move(users, stderr=err)

    assert [line.split()[0] for line in out.splitlines()[2:]] == list(PEOPLE)
    assert [line.split()[-1] for line in err.getvalue().splitlines()] == list(PEOPLE)


def _manage_env(settings, database: Path) -> dict[str, str]:
    """The settings the fixtures gave this process, for a `manage.py` process of its own."""
    return {
        **os.environ,
        "PORTAL_DEVSTACK": "true",
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": "test-only-secret-key-0123456789abcdefghijklmnopqrstuvwxyz",
        "PORTAL_HTTPS": "false",
        "DATABASE_URL": f"sqlite:///{database}",
        "ENTRA_AUTHORITY": settings.ENTRA_AUTHORITY,
        "ENTRA_CLIENT_ID": settings.ENTRA_CLIENT_ID,
        "ENTRA_CLIENT_SECRET": settings.ENTRA_CLIENT_SECRET,
        "ENTRA_INSTANCE_DISCOVERY": "false",
        "PORTAL_CA_BUNDLE": settings.PORTAL_CA_BUNDLE,
        "COREAPI_BASE_URL": settings.COREAPI_BASE_URL,
        "COREAPI_GET_RETRIES": "0",
        "LEGACY_STORES_BASE_URL": settings.LEGACY_STORES_BASE_URL,
        "MEMORYOS_BASE_URL": "",
    }


def _rows(database: Path, query: str) -> list[tuple]:
    with sqlite3.connect(database) as db:
        return db.execute(query).fetchall()


def test_an_evicted_pod_finishes_its_person_exits_non_zero_and_its_rerun_adds_nothing(
    legacy, users: Path, settings, coreapi_tokens, fresh_legacy: RunningServer, tmp_path: Path
) -> None:
    """SIGTERM, as the kubelet sends an evicted pod: the person under way is finished and
    recorded, nobody after is started, and the exit is non-zero so the Job does not count
    the shard complete. The replacement pod then does the rest, each person once."""
    database = tmp_path / "portal.sqlite3"
    env = _manage_env(settings, database)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=REPO, env=env, check=True, timeout=120)
    # Each store call slowed, so the run is still under way when the signal comes.
    legacy_module.emulator(fresh_legacy).faults = Faults(latency_ms=300)
    command = [*manage, "move_legacy_memory", "--store", HELPDESK, "--users", str(users)]
    command += ["--shard", "0/1"]  # as the Job runs it
    progress = "SELECT upn, state FROM memory_ui_jobprogress ORDER BY id"
    moves = "SELECT subject_upn, count(*) FROM memory_ui_auditevent WHERE action = 'move' GROUP BY subject_upn"
    pod = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not _rows(database, progress):
            assert time.monotonic() < deadline, "no progress row within 60 s"
            with pytest.raises(subprocess.TimeoutExpired):  # still running: poll again
                pod.wait(timeout=0.05)
        pod.send_signal(signal.SIGTERM)
        out, err = pod.communicate(timeout=20)  # at most one person's calls
    finally:
        pod.kill()  # nothing once it has exited

    assert pod.returncode == 1, err
    recorded = dict(_rows(database, progress))
    assert 1 <= len(recorded) < len(PEOPLE)
    assert list(recorded) == list(PEOPLE[: len(recorded)])  # in the list's order, none skipped
    assert set(recorded.values()) <= {"done", "skipped"}
    assert set(dict(_rows(database, moves))) <= set(recorded)  # nobody after them started
    assert f"Stopped by SIGTERM after {len(recorded)} of 3 users" in err
    assert "@" not in out + err  # a pod's logs name nobody

    legacy_module.emulator(fresh_legacy).faults = Faults()
    again = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)

    assert again.returncode == 0, again.stderr
    assert f"{len(recorded)} users passed over: done by an earlier run." in again.stdout
    assert _rows(database, progress) == [
        ("alice@contoso.com", "done"),
        ("bob@contoso.com", "done"),
        ("carol@contoso.com", "skipped"),
    ]
    assert dict(_rows(database, moves)) == {"alice@contoso.com": 1, "bob@contoso.com": 2}
    alice_text = _helpdesk_memory(coreapi_tokens, settings, "alice@contoso.com")
    bob_text = _helpdesk_memory(coreapi_tokens, settings, "bob@contoso.com")
    assert alice_text.count("Phone: iPhone 15") == 1
    assert bob_text.count("Surface Laptop 6") == 1 and bob_text.count("Universal Print") == 1
