"""The portal under gunicorn, started by deploy/entrypoint.sh as the container does: two
instances side by side on one host, JSON access lines, and SIGTERM draining /readyz
before the workers stop."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from tests.stack import free_port

REPO = Path(__file__).resolve().parents[2]
ENTRYPOINT = ["deploy/entrypoint.sh"]
DRAIN_SECONDS = 2


def status(url: str) -> int | None:
    try:
        return requests.get(url, timeout=2).status_code
    except requests.RequestException:  # not listening yet, or no worker booted yet
        return None


def wait_until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


@dataclass
class Instance:
    url: str
    process: subprocess.Popen
    log: Path

    def access_lines(self) -> list[dict]:
        lines = [json.loads(line) for line in self.log.read_text().splitlines() if line]
        return [line for line in lines if line.get("logger") == "gunicorn.access"]


@pytest.fixture
def instances(tmp_path: Path) -> Iterator[list[Instance]]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GUNICORN_", "PORTAL_D"))},
        "PORTAL_DEVSTACK": "true",
        "DJANGO_DEBUG": "false",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'portal.sqlite3'}",
        "DJANGO_STATIC_ROOT": str(tmp_path / "static"),
        "PORTAL_DRAIN_SECONDS": str(DRAIN_SECONDS),
        "GUNICORN_THREADS": "4",
        "TMPDIR": str(tmp_path),
        # The entry point finds python and gunicorn on PATH, as in the image.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    # No collectstatic: the requests below render no page (the container image has them).
    subprocess.run([*ENTRYPOINT, "migrate"], cwd=REPO, env=env, check=True, capture_output=True)
    started: list[Instance] = []
    for name, workers in (("a", "2"), ("b", "1")):
        port = free_port()
        log = tmp_path / f"{name}.log"
        process = subprocess.Popen(
            [*ENTRYPOINT, "serve"],
            cwd=REPO,
            env={**env, "GUNICORN_BIND": f"127.0.0.1:{port}", "GUNICORN_WORKERS": workers},
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
        )
        started.append(Instance(f"http://127.0.0.1:{port}", process, log))
    try:
        for instance in started:
            wait_until(lambda i=instance: status(f"{i.url}/livez") == 200, 60, "gunicorn up")
        yield started
    finally:
        for instance in started:
            if instance.process.poll() is None:
                instance.process.kill()
            instance.process.wait(timeout=10)


def test_two_instances_serve_side_by_side_and_log_json(instances: list[Instance]):
    first, second = instances
    assert status(f"{second.url}/readyz") == 200
    # HEAD: the callback answers 405 without rendering a page; the line is what matters.
    answer = requests.head(
        f"{first.url}/auth/callback?code=SECRET-CODE&client_info=SECRET-INFO&state=x",
        headers={"X-Request-ID": "lb-1234", "X-Forwarded-For": "203.0.113.7, 10.0.0.4"},
        timeout=10,
    )
    assert answer.status_code == 405
    assert answer.headers["X-Request-ID"] == "lb-1234"

    def callback_lines() -> list[dict]:
        return [entry for entry in first.access_lines() if entry["path"] == "/auth/callback"]

    wait_until(callback_lines, 5, "the access line")
    (line,) = callback_lines()
    assert line["request_id"] == "lb-1234"
    assert line["client_ip"] == "203.0.113.7"
    assert line["status"] == 405
    # A search's words may quote memory: its query string is not logged either.
    requests.head(f"{first.url}/search?q=SECRET-WORDS", timeout=10)
    wait_until(lambda: any(e["path"] == "/search" for e in first.access_lines()), 5, "search line")
    assert "SECRET" not in first.log.read_text()


def test_sign_in_next_probes_and_every_line_are_logged_safely(instances: list[Instance]):
    first = instances[0]
    # A signed-out search is sent to sign in with its words in `next` (issue 19).
    requests.head(
        f"{first.url}/auth/login?next=/search%3Fq%3DSECRET-SEARCH",
        allow_redirects=False,
        timeout=10,
    )
    requests.get(f"{first.url}/livez", headers={"X-Request-ID": "kubelet-1"}, timeout=10)
    requests.get(f"{first.url}/readyz", timeout=10)

    def probe_lines() -> list[dict]:
        return [e for e in first.access_lines() if e["path"] in ("/livez", "/readyz")]

    wait_until(lambda: any(e["path"] == "/auth/login" for e in first.access_lines()), 5, "login")
    wait_until(lambda: len(probe_lines()) >= 2, 5, "probe lines")
    assert "SECRET" not in first.log.read_text()
    # Probe lines carry a request id too: the one sent, or one made for them.
    assert any(e["request_id"] == "kubelet-1" for e in probe_lines())
    assert all(len(e["request_id"]) >= 8 for e in probe_lines())
    # The whole stream is JSON, gunicorn's own lines included.
    for line in first.log.read_text().splitlines():
        json.loads(line)


def test_a_refused_configuration_stops_gunicorn_with_one_line(tmp_path: Path):
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GUNICORN_", "PORTAL_"))},
        "PORTAL_DEVSTACK": "true",
        "DJANGO_DEBUG": "false",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'portal.sqlite3'}",
        "TMPDIR": str(tmp_path),
        "GUNICORN_BIND": f"127.0.0.1:{free_port()}",
        "ENTRA_CLIENT_ASSERTION_FILE": "/var/run/secrets/azure/tokens/azure-identity-token",
        "ENTRA_MANAGED_IDENTITY_CLIENT_ID": "44444444-5555-6666-7777-888888888888",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    result = subprocess.run(
        [*ENTRYPOINT, "serve"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    (line,) = (result.stdout + result.stderr).strip().splitlines()
    entry = json.loads(line)
    assert entry["level"] == "CRITICAL"
    assert "ENTRA_CLIENT_ASSERTION_FILE" in entry["message"]
    assert "ENTRA_MANAGED_IDENTITY_CLIENT_ID" in entry["message"]


def test_sigterm_drains_readyz_before_stopping(instances: list[Instance]):
    portal = instances[0]
    assert status(f"{portal.url}/readyz") == 200
    portal.process.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    wait_until(lambda: status(f"{portal.url}/readyz") == 503, 1, "/readyz 503 after SIGTERM")
    # Still serving everything else while load balancers notice.
    assert status(f"{portal.url}/livez") == 200
    assert time.monotonic() - signalled < DRAIN_SECONDS
    portal.process.wait(timeout=DRAIN_SECONDS + 15)
    assert time.monotonic() - signalled >= DRAIN_SECONDS
    assert portal.process.returncode == 0
    assert status(f"{instances[1].url}/readyz") == 200  # the other instance is untouched
