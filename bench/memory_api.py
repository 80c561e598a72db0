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

`--py-spy PATH` then requests the page alone, one after another, for `--profile-seconds`
while py-spy samples the gunicorn workers (idle samples kept: a thread waiting on the
memory-api counts), and prints where a page's time in the worker goes, by phase: a sample
goes to the phase of its innermost frame that names one (bench/profile.py's method).

    py-spy from PyPI (a binary; any directory): pip install --target /tmp/py-spy py-spy

    .venv/bin/python bench/memory_api.py [--memories 50] [--tries 50] [--latency 0]
    .venv/bin/python bench/memory_api.py --portal-dir /tmp/before   # another checkout's portal
    .venv/bin/python bench/memory_api.py --py-spy /tmp/py-spy/bin/py-spy
"""

from __future__ import annotations

import argparse
import logging
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
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
SAMPLES_A_SECOND = 250
# Phases of a page in the worker, innermost first wins: (name, pattern a frame matches).
PHASES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("JSON and items (item_of)", r"\bjson/|memory_ui/sources/memory_api/adapter\.py"),
        ("memory-api call (connect, send, wait)", r"memory_ui/sources/memory_api/client\.py"),
        ("rows (item_rows)", r"memory_ui/web/item_rows\.py"),
        ("came-back check (one query)", r"\bitems_shown \("),
        ("template", r"django/template/|memory_ui/templatetags/|\brender_(page|fragment) \("),
        ("session and user", r"django/contrib/(sessions|auth)/"),
        ("agents list (cache)", r"\b(user|listed)_agents \("),
        ("view (other)", r"memory_ui/web/(views|source_pages)|memory_ui/sources/"),
        (
            "middleware",
            r"django/(core/handlers|middleware|contrib/messages)/|portal/|django_htmx/"
            r"|whitenoise/|memory_ui/",
        ),
        ("response write (gunicorn)", r"gunicorn/"),
    )
)
IN_REQUEST = re.compile(r"\bhandle_request \(.*gunicorn/workers/gthread\.py")


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
    parser.add_argument("--py-spy", help="path of the py-spy binary: profile the page after")
    parser.add_argument("--profile-seconds", type=int, default=15)
    parser.add_argument("--profile-out", type=Path, help="keep py-spy's raw file here")
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
            page = run(portal.url, stack.ca, memory_api.url, token_file.read_text(), args)
            if args.py_spy:
                raw = args.profile_out or home / "py-spy.txt"
                profile(page, portal.process.pid, raw, args)
        finally:
            portal.stop()
            memory_api.stop()
            stack.stop()


def run(portal: str, ca: str, api: str, token: str, args: argparse.Namespace) -> Callable[[], int]:
    """The measured tries; the page's request, for a profile after."""
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
    return page


def phase_of(stack: list[str]) -> str:
    for frame in reversed(stack):
        for name, pattern in PHASES:
            if pattern.search(frame):
                return name
    return "other"


def profile(page: Callable[[], int], pid: int, raw: Path, args: argparse.Namespace) -> None:
    spy = subprocess.Popen(
        [
            *(args.py_spy, "record", "--pid", str(pid), "--subprocesses", "--nonblocking"),
            *("--full-filenames", "--idle", "--format", "raw", "--rate", str(SAMPLES_A_SECOND)),
            *("--duration", str(args.profile_seconds), "--output", str(raw)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pages = 0
    while spy.poll() is None:  # one page after another for as long as py-spy samples
        page()
        pages += 1
    phases: Counter[str] = Counter()
    for line in raw.read_text().splitlines():
        stack_text, _, count = line.rpartition(" ")
        stack = stack_text.split(";")
        if count.isdigit() and any(IN_REQUEST.search(frame) for frame in stack):
            phases[phase_of(stack)] += int(count)
    total = sum(phases.values())
    # A page's mean time in the worker (not the medians above), from the samples in
    # requests; py-spy may miss some on a busy machine, so it is a floor.
    page_ms = total / SAMPLES_A_SECOND / pages * 1000
    print(
        f"\nprofile: {pages} pages in {args.profile_seconds} s, {page_ms:.1f} ms in the worker each"
    )
    print("| phase | share of the page's time in the worker | ms a page |\n|---|---|---|")
    for name, count in phases.most_common():
        print(f"| {name} | {count / total:.0%} | {count / total * page_ms:.1f} |")


if __name__ == "__main__":
    main()
