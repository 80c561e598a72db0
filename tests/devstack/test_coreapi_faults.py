"""CoreAPI emulator under faults, concurrency and bad input; its CLI and its logs."""

from __future__ import annotations

import logging
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from devstack import coreapi
from devstack.config import REPO_ROOT
from devstack.coreapi import Faults
from devstack.coreapi.__main__ import faults_from, parser
from devstack.coreapi.faults import ENV_PREFIX, Fault
from devstack.serve import RunningServer
from tests.devstack.test_coreapi import (
    ALICE,
    Api,
    ad_hoc_upn,
    agent_id,
    assert_problem,
    heading_times,
)
from tests.stack import interrupt, stops_on_sigint


@pytest.fixture
def faults(server: RunningServer) -> Iterator[Faults]:
    """The running server's fault settings, switched off again after the test."""
    app = coreapi.emulator(server)
    app.faults = Faults(rng=random.Random(1))
    yield app.faults
    app.faults = Faults()


@pytest.fixture
def alice(server: RunningServer, coreapi_tokens) -> Api:
    return Api(server.url, coreapi_tokens.delegated(ALICE))


# --- Fault switches on a running server -----------------------------------------------------


def test_latency_fault_delays_responses(faults, alice) -> None:
    faults.latency_ms = 300
    started = time.perf_counter()
    assert alice.read("user").status_code == 200
    assert time.perf_counter() - started >= 0.3


@pytest.mark.parametrize("status", [500, 503])
def test_error_fault_answers_problem_details(faults, alice, status) -> None:
    faults.error_rate = 1.0
    faults.error_status = status
    assert_problem(alice.read("user"), status)
    assert_problem(alice.append("user", "- lost"), status)
    faults.error_rate = 0.0
    assert "- lost" not in alice.content("user")


def test_throttle_fault_answers_429_with_quota_and_retry_after(faults, alice) -> None:
    faults.throttle_rate = 1.0
    faults.retry_after_seconds = 7
    response = alice.read("user")
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "7"
    assert response.headers["Content-Type"] == "application/json"
    body = response.json()
    assert body.keys() == {
        "quota_name",
        "quota_context",
        "quota_exceeded",
        "time_until_retry_seconds",
    }
    assert body["quota_exceeded"] is True
    assert body["time_until_retry_seconds"] == 7
    assert isinstance(body["quota_name"], str) and isinstance(body["quota_context"], str)


def test_drop_fault_closes_the_connection_without_a_response(faults, alice) -> None:
    faults.drop_rate = 1.0
    with pytest.raises(requests.ConnectionError):
        alice.read("user")
    with pytest.raises(requests.ConnectionError):
        alice.append("user", "- dropped")
    faults.drop_rate = 0.0
    assert alice.read("user").status_code == 200  # the server carries on


def test_path_regex_restricts_faults_to_matching_requests(faults, alice) -> None:
    faults.error_rate = 1.0
    faults.path_regex = r"agents/travel-planner"
    assert_problem(alice.read("agent", "travel-planner"), 500)
    assert alice.read("agent", "benefits-assistant").status_code == 200
    assert alice.read("user").status_code == 200
    assert alice.get("completions/agents").status_code == 200


def test_faults_apply_before_authentication(faults, server) -> None:
    faults.error_rate = 1.0
    faults.error_status = 503
    assert_problem(Api(server.url).read("user"), 503)  # no token at all


def test_rates_zero_and_one_are_deterministic() -> None:
    never = Faults(rng=random.Random())
    assert {never.draw() for _ in range(200)} == {None}
    for field, fault in (
        ("drop_rate", Fault.DROP),
        ("throttle_rate", Fault.THROTTLE),
        ("error_rate", Fault.ERROR),
    ):
        always = Faults(**{field: 1.0})
        assert {always.draw() for _ in range(200)} == {fault}


def test_seeded_draws_repeat_and_match_the_rate() -> None:
    first = Faults(error_rate=0.5, rng=random.Random(42))
    second = Faults(error_rate=0.5, rng=random.Random(42))
    draws = [first.draw() for _ in range(400)]
    assert draws == [second.draw() for _ in range(400)]
    assert 120 < draws.count(Fault.ERROR) < 280


@pytest.mark.parametrize(
    "settings",
    [
        {"error_rate": 1.5},
        {"drop_rate": -0.1},
        {"error_rate": 0.6, "throttle_rate": 0.6},
        {"error_status": 502},
        {"latency_ms": -1},
        {"path_regex": "("},
    ],
)
def test_invalid_fault_settings_are_refused(settings) -> None:
    with pytest.raises(ValueError, match=r"must|valid"):
        Faults(**settings)


def test_faults_from_environment() -> None:
    environ = {
        f"{ENV_PREFIX}LATENCY_MS": "250",
        f"{ENV_PREFIX}ERROR_RATE": "0.25",
        f"{ENV_PREFIX}ERROR_STATUS": "503",
        f"{ENV_PREFIX}THROTTLE_RATE": "0.25",
        f"{ENV_PREFIX}RETRY_AFTER": "9",
        f"{ENV_PREFIX}DROP_RATE": "0.5",
        f"{ENV_PREFIX}PATH_REGEX": "it-helpdesk",
        f"{ENV_PREFIX}SEED": "3",
    }
    faults = Faults.from_env(environ)
    assert faults == Faults(
        latency_ms=250,
        error_rate=0.25,
        error_status=503,
        throttle_rate=0.25,
        retry_after_seconds=9,
        drop_rate=0.5,
        path_regex="it-helpdesk",
    )
    again = Faults.from_env(environ)  # same seed, same dice
    assert [faults.draw() for _ in range(20)] == [again.draw() for _ in range(20)]
    assert Faults.from_env({}) == Faults()


def test_fault_flags_override_environment(monkeypatch) -> None:
    monkeypatch.setenv(f"{ENV_PREFIX}ERROR_RATE", "0.5")
    monkeypatch.setenv(f"{ENV_PREFIX}LATENCY_MS", "100")
    args = parser().parse_args(
        ["--fault-error-rate", "1", "--fault-throttle-rate", "0", "--fault-path-regex", "x"]
    )
    faults = faults_from(args)
    assert (faults.error_rate, faults.latency_ms, faults.path_regex) == (1.0, 100, "x")


# --- The command line -----------------------------------------------------------------------


def _cli_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIX)}


def test_cli_serves_with_fault_flags(tmp_path: Path, idp, pki, coreapi_tokens) -> None:
    command = [
        sys.executable,
        "-m",
        "devstack.coreapi",
        "--port",
        "0",
        "--home",
        str(tmp_path),
        "--idp-url",
        idp.url,
        "--ca-file",
        str(pki.ca_cert),
        "--fault-error-rate",
        "1",
        "--fault-error-status",
        "503",
        "--fault-path-regex",
        "/memory",
    ]
    with subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        env=_cli_env(),
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=stops_on_sigint,
    ) as process:
        try:
            assert process.stdout is not None
            banner = process.stdout.readline()  # printed once the socket listens
            assert "listening on http://127.0.0.1:" in banner, banner
            base = banner.split("listening on ")[1].split("/instances/")[0]
            assert requests.get(f"{base}/openapi.json", timeout=10).status_code == 200
            api = Api(base, coreapi_tokens.delegated(ALICE))
            assert api.get("completions/agents").status_code == 200
            assert_problem(api.read("user"), 503)
        finally:
            assert interrupt(process, timeout=10) == 0
    assert (tmp_path / "coreapi.sqlite3").exists()


def test_cli_exits_1_with_a_message_when_the_port_is_taken(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "devstack.coreapi",
                "--port",
                str(port),
                "--home",
                str(tmp_path),
            ],
            cwd=REPO_ROOT,
            env=_cli_env(),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    assert result.returncode == 1
    assert f"Port {port} on 127.0.0.1 is already in use" in result.stderr


# --- Concurrency ----------------------------------------------------------------------------


def test_40_concurrent_appends_lose_none(server, coreapi_tokens) -> None:
    api = Api(server.url, coreapi_tokens.delegated(ad_hoc_upn()))
    markers = [f"- fact number {i:02d}" for i in range(40)]
    with ThreadPoolExecutor(max_workers=40) as pool:
        responses = list(pool.map(lambda m: api.append("user", m, reason="parallel"), markers))
    assert [r.status_code for r in responses] == [200] * 40
    content = api.content("user")
    assert len(heading_times(content)) == 40
    assert sorted(line for line in content.splitlines() if line.startswith("- fact")) == markers


# --- Bad input: always 4xx, never a 500, stored memory untouched ----------------------------

_JSON = {"Content-Type": "application/json"}


# Append bodies sent as JSON that are not a valid AppendMemoryRequest: each one is a 400.
_BAD_APPEND_BODIES = (
    b"{not json",
    b"",
    b"   ",
    b'["scope", "user"]',
    b'"user"',
    b"null",
    b'{"scope": "user", "content_markdown": NaN}',
    b'{"scope": 1, "content_markdown": "x"}',
    b'{"scope": "user", "content_markdown": {"a": 1}}',
    b'{"scope": "user", "content_markdown": "\xff\xfe"}',
    b'{"scope": "user", "content_markdown": "\\ud800"}',
    b'{"scope": "user", "content_markdown": "x", "reason": 5}',
    b"[" * 100_000,
)
_APPEND = b'{"scope": "user", "content_markdown": "x"}'


@pytest.mark.parametrize(
    ("path", "data", "headers", "status"),
    [
        *(("memory/append", body, _JSON, 400) for body in _BAD_APPEND_BODIES),
        ("memory/append", _APPEND, {}, 415),
        ("memory/append", _APPEND, {"Content-Type": "text/plain"}, 415),
        ("memory/append", _APPEND, {"Content-Type": "application/json; charset=latin-1"}, 415),
        ("memory/clear", b'{"scope": "user", "confirm": "true"}', _JSON, 400),
        ("memory/clear", b"{}", _JSON, 400),
        (
            "memory/import",
            b'{"scope": "user", "content_markdown": 1, "mode": "replace"}',
            _JSON,
            400,
        ),
        ("memory/import", b'{"scope": "user", "content_markdown": "x", "mode": 2}', _JSON, 400),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 20 else None,
)
def test_bad_input_is_4xx_and_keeps_memory(alice, path, data, headers, status) -> None:
    before = alice.read("user").json()
    response = alice.post_raw(path, data, headers)
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == "application/problem+json"
    assert alice.read("user").json() == before


def test_oversized_body_is_413_and_keeps_memory(alice) -> None:
    before = alice.read("user").json()
    huge = b'{"scope": "user", "content_markdown": "' + b"x" * (3 * 1024 * 1024) + b'"}'
    assert_problem(alice.post_raw("memory/import", huge, _JSON), 413)
    assert alice.read("user").json() == before


def test_body_just_under_the_limit_is_accepted(server, coreapi_tokens) -> None:
    api = Api(server.url, coreapi_tokens.delegated(ad_hoc_upn()))
    body = "x" * (2 * 1024 * 1024 - 100)
    response = api.imported("user", body, mode="replace")
    assert response.status_code == 200
    assert api.get("memory/export", {"scope": "user"}).text == body


def test_bad_query_input_is_4xx(alice) -> None:
    def raw_get(query: str, token: str | None) -> int:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.get(alice.url(f"memory?{query}"), headers=headers, timeout=10).status_code

    # Invalid UTF-8 and NUL bytes, percent-encoded as a client might send them.
    assert raw_get("scope=agent&agentObjectId=%ff%fe", alice.token) == 400
    assert raw_get("scope=%ff", alice.token) == 400
    assert raw_get("scope=agent&agentObjectId=%00", alice.token) == 400
    assert raw_get("scope=%ff&agentObjectId=%00", None) == 401  # unauthenticated comes first


# --- Logs ------------------------------------------------------------------------------------


def test_requests_are_logged_without_tokens_or_content(alice, caplog) -> None:
    secret = f"- private fact {ad_hoc_upn()}"
    with caplog.at_level(logging.INFO, logger="devstack.coreapi"):
        assert alice.append("agent", secret, "it-helpdesk").status_code == 200
    lines = [r.getMessage() for r in caplog.records if r.name == "devstack.coreapi"]
    assert any(
        line.startswith(f"POST /instances/{agent_id('x').split('/')[2]}/memory/append 200 ")
        and "ms" in line
        for line in lines
    ), lines
    assert alice.token and alice.token not in caplog.text
    assert secret not in caplog.text
