"""Benchmark: search across every memory system vs the slowest system's own search (issue 31).

The devstack IdP, the CoreAPI emulator (--coreapi-ms added to every call), the legacy store
emulator (--legacy-ms) and the MemoryOS emulator (--memoryos-ms) run here on free ports in a
temporary folder, over real HTTP; the portal runs under gunicorn (tests.stack.start_portal)
with all three systems configured, and alice signs in at the IdP. Then, interleaved,
--tries times each (after --warm untimed rounds):

- page: GET /search?q=TEXT, the whole page: CoreAPI's memories read and searched, the
  legacy stores and MemoryOS searched;
- each other system's own search, from this process with the portal's own adapter (the
  calls the portal makes to it, and no more): the legacy stores' one search call per
  configured store (LegacyBackend.search), MemoryOS's one retrieval per configured agent
  (MemoryOsBackend.search).

Prints the medians and the ratio page / the slowest system's own search (issue 31's bar:
<= 1.3). A page that asks the systems one after the other costs about their sum.

    .venv/bin/python bench/search.py                            # this tree
    .venv/bin/python bench/search.py --portal-dir /tmp/before   # another checkout's portal
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# Run as a file: the repository's packages (devstack, memory_ui, tests) come from its root.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devstack import legacy as legacy_module
from devstack import memoryos as memoryos_module
from devstack.config import issuer, load_fixtures
from devstack.coreapi.faults import Faults
from devstack.legacy.store import audience
from devstack.pki import ensure_pki
from devstack.tokens import app_access_token
from memory_ui.sources.legacy.adapter import LegacyBackend
from memory_ui.sources.legacy.client import LegacyStoresClient
from memory_ui.sources.memoryos.adapter import MemoryOsBackend
from memory_ui.sources.memoryos.client import MemoryOsClient
from memory_ui.sources.protocol import Subject
from tests.stack import UPN, sign_in, start_devstack, start_portal

# The devstack's mappings, given to the portal and to this process's adapters alike.
LEGACY_AGENTS = {
    "travel-planner": "main.agents.travel_planner_memory",
    "it-helpdesk": "main.agents.it_helpdesk_memory",
    "benefits-assistant": "main.agents.benefits_assistant_memory",
}
MEMORYOS_AGENTS = {"travel-planner": "Travel Planner", "it-helpdesk": "IT Helpdesk"}
MEMORYOS_KEY = "mem_live_devstack_contoso_4f7c2a9e61b84d03"
TIMEOUT = 30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--portal-dir", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--text", default="seat")
    parser.add_argument("--coreapi-ms", type=int, default=20)
    parser.add_argument("--legacy-ms", type=int, default=150)
    parser.add_argument("--memoryos-ms", type=int, default=100)
    parser.add_argument("--tries", type=int, default=30)
    parser.add_argument("--warm", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        home = Path(tmp)
        demo = load_fixtures()
        stack = start_devstack(home, demo, Faults(latency_ms=args.coreapi_ms))
        assert stack.legacy is not None
        legacy_module.emulator(stack.legacy).faults = Faults(latency_ms=args.legacy_ms)
        memoryos = memoryos_module.start(
            home=home, faults=Faults(latency_ms=args.memoryos_ms, path_regex="^/v1/")
        )
        portal = None
        try:
            portal = start_portal(
                stack,
                portal_dir=args.portal_dir,
                extra_env={
                    "MEMORYOS_BASE_URL": memoryos.url,
                    "MEMORYOS_AGENTS": json.dumps(MEMORYOS_AGENTS),
                    "LEGACY_STORES_AGENTS": json.dumps(LEGACY_AGENTS),
                },
            )
            browser = sign_in(portal.url, stack.ca)
            token = app_access_token(
                ensure_pki(home),
                demo,
                issuer(stack.idp.url, demo.tenant_id),
                demo.portal,
                audience=audience(),
            )
            user = demo.user(UPN)
            assert user is not None
            subject = Subject(UPN, user.oid)
            legacy = LegacyBackend(
                LegacyStoresClient(stack.legacy.url, lambda: token), LEGACY_AGENTS, "{upn}"
            )
            memoryos_backend = MemoryOsBackend(
                MemoryOsClient(memoryos.url, lambda: MEMORYOS_KEY, retries=0),
                MEMORYOS_AGENTS,
                "{oid}",
            )

            def page() -> None:
                response = browser.get(
                    f"{portal.url}/search", params={"q": args.text}, timeout=TIMEOUT
                )
                assert response.status_code == 200, response.status_code
                assert "could not be searched" not in response.text

            steps: dict[str, Callable[[], object]] = {
                "page": page,
                "legacy": lambda: legacy.search(subject, args.text),
                "memoryos": lambda: memoryos_backend.search(subject, args.text),
            }
            run(steps, args)
        finally:
            if portal is not None:
                portal.stop()
            memoryos.stop()
            stack.stop()


def run(steps: dict[str, Callable[[], object]], args: argparse.Namespace) -> None:
    times: dict[str, list[float]] = {name: [] for name in steps}
    for attempt in range(args.warm + args.tries):
        for name, step in steps.items():
            started = time.perf_counter()
            step()
            if attempt >= args.warm:
                times[name].append(time.perf_counter() - started)
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    slowest = max((name for name in steps if name != "page"), key=medians.__getitem__)
    print(
        f"latency per call: CoreAPI {args.coreapi_ms} ms, legacy {args.legacy_ms} ms,"
        f" MemoryOS {args.memoryos_ms} ms; q={args.text!r}; {args.tries} tries (medians)"
    )
    for name, value in medians.items():
        print(f"{name:>10}: {value:8.1f} ms")
    print(f"ratio page / {slowest}'s own search: {medians['page'] / medians[slowest]:.2f}")


if __name__ == "__main__":
    main()
