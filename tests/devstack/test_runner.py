"""`manage.py devstack` as a script starts it in the background (SIGINT ignored for it and
everything it starts), stopped with SIGTERM: everything is gone within 2 s. Its
`--memory-api-edition` reaches the memory-api emulator's command line."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from devstack.management.commands import devstack as devstack_command
from devstack.memory_api.__main__ import parser as memory_api_parser
from devstack.memory_api.app import EDITIONS
from devstack.runner import services
from tests.stack import free_port

REPO = Path(__file__).resolve().parents[2]


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def ignore_sigint() -> None:
    # What a non-interactive shell does for `command &`.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_devstack_stops_within_two_seconds_of_sigterm_from_the_background(tmp_path: Path):
    ports = {
        "DEVSTACK_IDP_PORT": free_port(),
        "DEVSTACK_COREAPI_PORT": free_port(),
        "DEVSTACK_LEGACY_PORT": free_port(),
        "DEVSTACK_MEMORYOS_PORT": free_port(),
        "DEVSTACK_MEMORY_API_PORT": free_port(),
    }
    env = {
        **os.environ,
        **{name: str(port) for name, port in ports.items()},
        "DEVSTACK_HOME": str(tmp_path),
    }
    env.pop("PORTAL_DEVSTACK", None)  # manage.py asks for it itself
    process = subprocess.Popen(
        [sys.executable, "manage.py", "devstack", "--no-portal"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=ignore_sigint,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(line) for line in process.stdout], daemon=True
    ).start()
    try:
        deadline = time.monotonic() + 90
        output: list[str] = []
        while not any("Devstack is up" in line for line in output):
            assert time.monotonic() < deadline, "".join(output)
            try:
                output.append(lines.get(timeout=1))
            except queue.Empty:
                assert process.poll() is None, "".join(output)
        assert all(listening(port) for port in ports.values())

        process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        process.wait(timeout=5)
        stopped_after = time.monotonic() - signalled
        assert stopped_after < 2, f"took {stopped_after:.1f} s"
        assert not any(listening(port) for port in ports.values())
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def memory_api_edition(started: list[str]) -> str:
    """The edition the emulator's own command line reads from what the runner starts."""
    assert started[1:3] == ["-m", "devstack.memory_api"]
    return memory_api_parser().parse_args(started[3:]).edition


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_runner_starts_the_memory_api_in_the_edition_asked_for(edition: str) -> None:
    started = next(s for s in services(False, edition) if s.name == "memory-api")

    assert memory_api_edition(list(started.command)) == edition


def test_the_runner_starts_the_enterprise_memory_api_by_default() -> None:
    started = next(s for s in services(False) if s.name == "memory-api")

    assert memory_api_edition(list(started.command)) == "enterprise"


def test_manage_py_devstack_passes_the_memory_api_edition_to_the_runner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The runner itself would start every server; its arguments are what is checked here.
    asked: list[dict[str, Any]] = []
    monkeypatch.setattr(devstack_command, "run", lambda **options: asked.append(options) or 0)

    call_command("devstack", "--no-portal", "--memory-api-edition", "core")
    call_command("devstack", "--no-portal")

    assert [a["memory_api_edition"] for a in asked] == ["core", "enterprise"]
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("devstack", "--memory-api-edition", "team")
