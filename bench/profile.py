"""Where a request's time goes: the memory page, the dashboard, a card batch and the
sensitive-data notice under load, sampled by py-spy in the gunicorn workers and broken
down by phase (docs/performance.md).

The stack is bench/portal.py's (devstack in a child with --latency ms per CoreAPI call,
portal under gunicorn with deploy/gunicorn.conf.py). For each scenario, `--concurrency`
clients send its request for `--seconds` while `py-spy record --idle --nonblocking` samples
every worker thread; a sample counts when it is inside a request, and goes to the phase of
its innermost frame that names one:

    py-spy from PyPI (a binary; any directory): pip install --target /tmp/py-spy py-spy
    .venv/bin/python bench/profile.py --py-spy /tmp/py-spy/bin/py-spy

Idle samples (a thread waiting on a socket, a lock, the GIL) are kept, so a phase's share
is of wall time in requests: "CoreAPI call" is mostly waiting for the emulator's answer.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.stack import REPO, start_portal


def _bench_portal() -> ModuleType:
    """bench/portal.py, by path: its name would otherwise be the Django project's."""
    spec = importlib.util.spec_from_file_location(
        "bench_portal", Path(__file__).with_name("portal.py")
    )
    module = sys.modules["bench_portal"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_portal = _bench_portal()

# Phases, innermost first wins: (name, pattern a frame "function (path:line)" matches).
PHASES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        # A fan-out's request thread waits for its pool's CoreAPI calls.
        ("CoreAPI call", r"memory_ui/sources/coreapi/client\.py|\bfan_out \("),
        ("token cache and refresh", r"\bcoreapi_token \(|\bmsal/"),
        ("sensitive scan", r"memory_ui/memory/sensitive"),
        ("parse", r"memory_ui/memory/|memory_ui/sources/coreapi/types\.py|\bjson/"),
        ("render", r"django/template/|memory_ui/web/parts\.py|memory_ui/templatetags/"),
        ("session load", r"django/contrib/sessions/.*\b(load|_get_session) \("),
        ("user load", r"django/contrib/auth/(middleware|__init__)\.py|get_user \("),
        ("session save", r"django/contrib/sessions/middleware\.py.*process_response"),
        ("agents list (cache)", r"\buser_agents \("),
        ("view (other)", r"memory_ui/web/views/"),
        ("middleware", r"django/core/handlers/|django/middleware/|portal/|django_htmx/"),
        ("response (gunicorn)", r"gunicorn/"),
    )
)
HTMX = {"HX-Request": "true"}
IN_REQUEST = re.compile(r"\bhandle_request \(.*gunicorn/workers/gthread\.py")


def phase_of(stack: list[str]) -> str:
    for frame in reversed(stack):
        for name, pattern in PHASES:
            if pattern.search(frame):
                return name
    return "other"


def breakdown(raw: Path) -> tuple[Counter[str], int]:
    """Samples per phase, from py-spy's raw (folded) output: `frame;frame;... count`."""
    phases: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack_text, _, count = line.rpartition(" ")
        stack = stack_text.split(";")
        if not count.isdigit() or not any(IN_REQUEST.search(frame) for frame in stack):
            continue
        phases[phase_of(stack)] += int(count)
        total += int(count)
    return phases, total


def load(call: Callable[[requests.Session], int], concurrency: int, seconds: float) -> int:
    stop = threading.Event()
    done = [0] * concurrency

    def client(index: int) -> None:
        session = requests.Session()
        session.trust_env = False
        while not stop.is_set():
            if call(session) < 400:
                done[index] += 1

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        for index in range(concurrency):
            pool.submit(client, index)
        time.sleep(seconds)  # the sampling window; py-spy runs for the same time
        stop.set()
    return sum(done)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--py-spy", required=True, help="path of the py-spy binary")
    parser.add_argument("--agents", type=int, default=100)
    parser.add_argument("--latency", dest="latency_ms", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=int, default=250, help="samples per second")
    parser.add_argument("--size", type=int, default=1024 * 1024, help="the big document's bytes")
    parser.add_argument("--portal-dir", type=Path, default=REPO)
    parser.add_argument("--out", type=Path, help="keep py-spy's raw files here")
    parser.add_argument(
        "--cpu", action="store_true", help="on-CPU samples only (no --idle): where CPU goes"
    )
    parser.add_argument("--only", default="", help="scenarios whose label contains this")
    args = parser.parse_args()
    # Bench's other options, at bench/portal.py's defaults.
    args.runs = 10

    home = Path(tempfile.mkdtemp(prefix="memory-portal-profile-"))
    out = args.out or home
    out.mkdir(parents=True, exist_ok=True)
    stack = bench_portal.start_child_stack(home, args.agents, args.latency_ms)
    portal = start_portal(stack, portal_dir=args.portal_dir.resolve(), shipped_config=True)
    try:
        bench = bench_portal.Bench(stack, portal, args)
        cookies = bench.browser.cookies
        html = bench.agents_section(bench.page("/").text)
        batches = [
            path.replace("&amp;", "&")
            for path in re.findall(r'hx-get="(/cards/agents\?[^"]+)', html)
        ]
        turn = iter(range(10**9))
        bench.write(bench_portal.BIG_STRUCTURED, bench_portal.structured(args.size))

        def get(path: Callable[[], str], **headers: str) -> Callable[[requests.Session], int]:
            def call(session: requests.Session) -> int:
                session.cookies.update(cookies)
                return session.get(portal.url + path(), headers=headers, timeout=60).status_code

            return call

        def cold_dashboard(session: requests.Session) -> int:
            bench_portal.forget_agents(home)
            return get(lambda: "/")(session)

        scenarios: dict[str, tuple[Callable[[requests.Session], int], int]] = {
            "memory page (/memory/user)": (get(lambda: "/memory/user"), args.concurrency),
            "dashboard, cold (agents listed again)": (cold_dashboard, 1),
            "dashboard, warm": (get(lambda: "/"), args.concurrency),
            "card batch (8 agents)": (
                get(lambda: batches[next(turn) % len(batches)], **HTMX),
                args.concurrency,
            ),
            f"{args.size // 1024} KB document page, repeat view": (
                get(lambda: f"/memory/agents/{bench_portal.BIG_STRUCTURED}"),
                2,
            ),
            "sensitive-data notice": (
                get(lambda: "/memory/sensitive/notice", **HTMX),
                2,
            ),
        }
        for label, (call, concurrency) in scenarios.items():
            if args.only not in label:
                continue
            # One request first: the profile is of the steady state (a first view parses,
            # a first notice scans), as a person sees it on every later load.
            warm = requests.Session()
            warm.trust_env = False
            call(warm)
            raw = out / (re.sub(r"\W+", "-", label).strip("-") + ".txt")
            spy = subprocess.Popen(
                [
                    *(args.py_spy, "record", "--pid", str(portal.process.pid)),
                    *("--subprocesses", "--nonblocking", "--full-filenames"),
                    *(() if args.cpu else ("--idle",)),
                    *("--format", "raw", "--rate", str(args.rate)),
                    *("--duration", str(int(args.seconds)), "--output", str(raw)),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            requests_done = load(call, concurrency, args.seconds)
            spy.wait(timeout=args.seconds + 60)
            phases, total = breakdown(raw)
            rate = requests_done / args.seconds
            # Each client waits for one request at a time: a request lasts concurrency/rate.
            per_request = concurrency / rate * 1000 if rate else 0.0
            print(
                f"\n{label}: {concurrency} client(s), {rate:.1f} req/s, "
                f"{per_request:.1f} ms a request; {total} samples"
            )
            if args.cpu:  # on-CPU samples: shares of the workers' CPU, no durations
                print("| phase | share of request CPU |\n|---|---|")
            else:
                print("| phase | share of request wall time | ms a request |\n|---|---|---|")
            for name, count in phases.most_common():
                share = count / total
                ms = "" if args.cpu else f" {share * per_request:.1f} |"
                print(f"| {name} | {share:.0%} |{ms}")
    finally:
        portal.stop()
        stack.stop()


if __name__ == "__main__":
    main()
