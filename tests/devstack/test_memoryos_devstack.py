"""The MemoryOS emulator in the devstack: `manage.py devstack_token --memoryos` gives keys
and ids it accepts, and `python -m devstack.memoryos --port P` serves it alone."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.core.management import call_command

from devstack.serve import RunningServer
from tests.devstack.memoryos_api import Api
from tests.stack import free_port

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("flags", [["--memoryos"], ["--memoryos", "--json"]])
def test_devstack_token_prints_the_keys_and_ids_on_one_line(
    memoryos: RunningServer, capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    call_command("devstack_token", *flags)

    output = capsys.readouterr().out
    assert output.count("\n") == 1
    printed = json.loads(output)
    assert set(printed) == {
        "api_key",
        "other_tenant_api_key",
        "passthrough_api_key",
        "external_user_ids",
        "agent_ids",
    }
    assert set(printed["external_user_ids"]) == {
        "alice@contoso.com",
        "bob@contoso.com",
        "carol@contoso.com",
    }
    assert printed["agent_ids"] == ["travel-planner", "it-helpdesk"]
    alice = printed["external_user_ids"]["alice@contoso.com"]

    for agent in printed["agent_ids"]:
        body = Api(memoryos.url, printed["api_key"]).ok(external_user_id=alice, agent_id=agent)
        assert body["data"], agent
    other = Api(memoryos.url, printed["other_tenant_api_key"]).ok(external_user_id=alice)
    assert other["quota_mode"] == "FULL" and other["data"]
    passthrough = Api(memoryos.url, printed["passthrough_api_key"]).ok(external_user_id=alice)
    assert passthrough["is_passthrough"] is True


def test_python_m_devstack_memoryos_serves_on_the_given_port(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "devstack.memoryos", "--port", str(port), "--home", str(tmp_path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(line) for line in process.stdout or ()], daemon=True
    ).start()
    try:
        banner = lines.get(timeout=30)  # printed once the socket listens
        assert f"http://127.0.0.1:{port}/v1/memories" in banner, banner

        body = Api(f"http://127.0.0.1:{port}").ok()
        assert body["quota_mode"] == "FULL" and len(body["data"]) == 10
        assert (tmp_path / "memoryos.sqlite3").exists()
    finally:
        process.terminate()
        process.wait(timeout=10)
