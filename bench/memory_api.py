"""Benchmark: a memory-api agent page vs one direct list call of the same memories (issue 28).

The devstack (IdP, CoreAPI and legacy emulators) and the workspace memory-api emulator run
in this process, on free ports in a temporary folder; the portal runs under gunicorn in a
child (tests/stack.py), configured for the memory-api as an operator would (the projected
token file, the workspace UID, the hmac-sha256 rule); alice signs in through the IdP. Her
agent `it-helpdesk` gets `--memories` memories in all; then, interleaved, `--tries` times
each:

- raw: one `GET /api/v1/memories?workspace&virtual_user_id&agent` with the portal's own
  token (a pooled session), the body parsed as JSON: the floor of any page of them;
- page: the agent's page in the portal, `GET /memory/sources/memory_api/target?target=
  it-helpdesk`, the whole HTML as a browser gets it (signed-in session).

`--latency` adds that many milliseconds to every memory-api answer (the emulator behind a
delay), as a workspace service across the network would have. Prints the medians and the
ratio page / raw (issue 28's bar: <= 1.3).

    .venv/bin/python bench/memory_api.py [--memories 50] [--tries 50] [--latency 0]
    .venv/bin/python bench/memory_api.py --portal-dir /tmp/before   # another checkout's portal
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import requests

# Run as a file: the repository's packages (devstack, tests) come from its root.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devstack.config import load_fixtures
from devstack.coreapi.faults import Faults
from devstack.memory_api.app import build
from devstack.memory_api.identity import (
    load_settings,
    write_projected_token,
    write_pseudonym_key,
)
from devstack.pki import ensure_pki
from devstack.serve import start_in_thread
from tests.stack import REPO, UPN, sign_in, start_devstack, start_portal

AGENT = "it-helpdesk"
TIMEOUT = 30
SOURCES = "memory_ui.sources.coreapi,memory_ui.sources.memory_api"


class Delayed:
    """The emulator's WSGI app answering `seconds` later, as across a network."""

    def __init__(self, app: Callable[..., Iterable[bytes]], seconds: float) -> None:
        self.app, self.seconds = app, seconds

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        time.sleep(self.seconds)
        return self.app(environ, start_response)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=50)
    parser.add_argument("--tries", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.0, help="ms added to each answer")
    parser.add_argument("--portal-dir", type=Path, default=REPO, help="the portal to measure")
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    logging.getLogger("devstack").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="bench-memory-api-") as tmp:
        home = Path(tmp)
        stack = start_devstack(home, load_fixtures(), Faults())
        memory_api = start_in_thread(Delayed(build(home=home), args.latency / 1000))
        settings = load_settings()
        token_file = write_projected_token(home, ensure_pki(home), settings)
        portal = start_portal(
            stack,
            portal_dir=args.portal_dir.resolve(),
            extra_env={
                "PORTAL_MEMORY_SOURCES": SOURCES,
                "MEMORY_API_BASE_URL": memory_api.url,
                "MEMORY_API_WORKSPACE_UID": settings.workspace.uid,
                "MEMORY_API_TOKEN_FILE": str(token_file),
                "MEMORY_API_SUBJECT_RULE": "hmac-sha256",
                "MEMORY_API_PSEUDONYM_KEY_FILE": str(write_pseudonym_key(home, settings)),
            },
        )
        try:
            run(portal.url, stack.ca, memory_api.url, token_file.read_text(), args)
        finally:
            portal.stop()
            memory_api.stop()
            stack.stop()


def run(portal: str, ca: str, api: str, token: str, args: argparse.Namespace) -> None:
    settings = load_settings()
    user = settings.virtual_user_id(UPN)
    session = requests.Session()
    session.trust_env = False
    session.headers["Authorization"] = f"Bearer {token}"
    existing = session.get(
        f"{api}/api/v1/memories",
        params={"workspace": settings.workspace.uid, "virtual_user_id": user, "agent": AGENT},
        timeout=TIMEOUT,
    ).json()["memories"]
    for n in range(args.memories - len(existing)):
        created = session.post(
            f"{api}/api/v1/memories",
            json={
                "workspace_id": settings.workspace.uid,
                "scope": {"virtual_user_id": user, "agent": AGENT},
                "type": "fact",
                "about": f"bench-{n:04}",
                "content": f"Bench memory {n}: prefers the {n}th floor meeting room.",
            },
            timeout=TIMEOUT,
        )
        created.raise_for_status()
    browser = sign_in(portal, ca)
    page_url = f"{portal}/memory/sources/memory_api/target?target={AGENT}"
    list_params = {"workspace": settings.workspace.uid, "virtual_user_id": user, "agent": AGENT}

    def raw() -> int:
        response = session.get(f"{api}/api/v1/memories", params=list_params, timeout=TIMEOUT)
        response.raise_for_status()
        return len(response.json()["memories"])

    def page() -> int:
        response = browser.get(page_url, timeout=TIMEOUT)
        response.raise_for_status()
        return response.text.count("Bench memory")

    for step in (raw, page):  # warm: connections, the agents list, the first page's imports
        step()
    raw_times, page_times = [], []
    for _ in range(args.tries):
        for step, times in ((raw, raw_times), (page, page_times)):
            started = time.perf_counter()
            shown = step()
            times.append(time.perf_counter() - started)
    raw_ms, page_ms = statistics.median(raw_times) * 1000, statistics.median(page_times) * 1000
    print(
        f"{args.memories} memories of {AGENT}, {shown} bench memories on the page, "
        f"+{args.latency:g} ms a memory-api answer, {args.tries} tries each (medians)"
    )
    print(f"one list call (raw):       {raw_ms:7.2f} ms")
    print(f"agent page (portal HTML):  {page_ms:7.2f} ms")
    print(f"ratio page / raw:          {page_ms / raw_ms:7.2f}")
    print(f"portal: {args.portal_dir.resolve()}")
    session.close()
    browser.close()


if __name__ == "__main__":
    main()
