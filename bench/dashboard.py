"""Benchmark: the dashboard with many agents and a slow CoreAPI.

Measures what docs/architecture.md, Scale, promises: the first paint needs one CoreAPI
round trip (the agent list), and the cards, loaded in parallel as a browser does, cost
about one more round trip of latency rather than one per agent. Also times "Export everything" at that size.

    .venv/bin/python bench/dashboard.py [--agents 40] [--latency-ms 100] [--parallel 6] [--runs 5]

Everything runs on loopback on free ports with its own temporary state: the devstack IdP
and CoreAPI emulator in this process, the portal under gunicorn in a child.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urljoin

import requests

# Run as a file: the repository's packages (devstack, tests) come from its root.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devstack.config import Agent, load_fixtures
from devstack.coreapi.faults import Faults
from tests.pages import forms
from tests.stack import UPN, sign_in, start_devstack, start_portal


def many_agents_fixtures(count: int):
    demo = load_fixtures()
    agents = tuple(
        Agent(
            name=f"agent-{i:03d}",
            display_name=f"Agent {i:03d}",
            description="A benchmark agent.",
            readers={UPN: "Reader"},
        )
        for i in range(count)
    )
    memory = tuple(
        {
            "upn": UPN,
            "scope": "agent",
            "agent": agent.name,
            "at": "2026-11-01T10:00:00Z",
            "reason": "Benchmark",
            "content": f"- Fact {n} remembered by {agent.display_name}.\n",
        }
        for agent in agents
        for n in range(3)
    )
    user_memory = tuple(m for m in demo.memory if m["upn"] == UPN and m["scope"] == "user")
    return dataclasses.replace(demo, agents=agents, memory=user_memory + memory)


def timed(call) -> tuple[float, requests.Response]:
    start = time.perf_counter()
    response = call()
    return time.perf_counter() - start, response


def load_card(browser: requests.Session, portal: str, path: str) -> float:
    took, response = timed(
        lambda: browser.get(portal + path, headers={"HX-Request": "true"}, timeout=60)
    )
    response.raise_for_status()
    return took


def export_everything(
    browser: requests.Session, portal: str, page: str
) -> tuple[float, int] | None:
    """Submit the dashboard's "Export everything" form, if there is one."""
    form = next((f for f in forms(page, portal) if "export" in f.action), None)
    if form is None:
        return None
    took, response = timed(
        lambda: browser.request(
            form.method.upper(),
            urljoin(portal, form.action),
            data=form.fields if form.method == "post" else None,
            params=form.fields if form.method == "get" else None,
            timeout=120,
        )
    )
    response.raise_for_status()
    return took, len(response.content)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=40)
    parser.add_argument("--latency-ms", type=int, default=100)
    parser.add_argument("--parallel", type=int, default=6, help="a browser's connections per host")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="memory-portal-bench-"))
    stack = start_devstack(
        home,
        many_agents_fixtures(args.agents),
        Faults(latency_ms=args.latency_ms, path_regex="^/instances/"),
    )
    portal_server = start_portal(stack, workers=args.workers)
    portal = portal_server.url
    print(f"portal log: {portal_server.log}")
    try:
        browser = sign_in(portal, stack.ca)
        first_paints, cards_walls, sequential_sums, exports = [], [], [], []
        for _ in range(args.runs):
            first_paint, page = timed(lambda: browser.get(f"{portal}/", timeout=60))
            cards = re.findall(r'hx-get="(/cards/[^"]+)"', page.text)
            assert len(cards) == args.agents + 1, (page.status_code, page.text[-1500:])
            start = time.perf_counter()
            with ThreadPoolExecutor(max_workers=args.parallel) as pool:
                per_card = list(pool.map(lambda path: load_card(browser, portal, path), cards))
            cards_walls.append(time.perf_counter() - start)
            first_paints.append(first_paint)
            sequential_sums.append(sum(per_card))
            export = export_everything(browser, portal, page.text)
            if export is not None:
                exports.append(export)

        def ms(values: list[float]) -> str:
            return f"median {statistics.median(values) * 1000:7.0f} ms  (min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f})"

        print(
            f"agents={args.agents} CoreAPI latency={args.latency_ms} ms parallel={args.parallel} runs={args.runs}"
        )
        print(f"first paint, cold (lists agents)   {first_paints[0] * 1000:7.0f} ms")
        print(f"first paint, agent list cached     {ms(first_paints[1:] or first_paints)}")
        print(f"all {args.agents + 1} cards, {args.parallel} at a time    {ms(cards_walls)}")
        print(f"the same cards one after another   {ms(sequential_sums)}")
        if exports:
            sizes = {size for _, size in exports}
            print(f"export everything (.zip, {max(sizes)} bytes) {ms([t for t, _ in exports])}")
        else:
            print("export everything: no export form found on the dashboard")
    finally:
        portal_server.stop()
        stack.stop()


if __name__ == "__main__":
    main()
