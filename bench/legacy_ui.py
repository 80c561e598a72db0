"""Benchmark: the legacy memory stores in the portal's pages (issue 18), over HTTP.

The devstack (IdP, CoreAPI emulator, legacy store emulator) and two portals under gunicorn
start here in a temporary folder: one with the legacy source on, one with it off
(LEGACY_STORES_BASE_URL empty), both signed in as alice through the IdP. Interleaved,
`--tries` times each, in a new random order each round (medians):

- dashboard: the dashboard's first paint (GET /, the HTML the browser paints first) with
  the legacy source on vs off. The legacy section loads after it, when it scrolls into
  view, so the bar is <= 1.1x;
- store page: a store holding `--files` files of alice's, its page in the portal
  (GET /memory/sources/legacy/target?target=<store>: one entries-list call, the page
  rendered) vs one entries-list call made directly with requests and the portal's own
  token. Bar <= 1.5x.

    .venv/bin/python bench/legacy_ui.py [--files 500] [--tries 30]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import requests

# Run as a file: the repository's packages (devstack, memory_ui, tests) come from its root.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devstack.config import issuer, load_fixtures
from devstack.coreapi.faults import Faults
from devstack.legacy.store import audience
from devstack.pki import ensure_pki
from devstack.tokens import app_access_token
from memory_ui.sources.legacy.client import LegacyStoresClient
from tests.stack import UPN, sign_in, start_devstack, start_portal

STORE = "main.agents.it_helpdesk_memory"
TIMEOUT = 30


def timed(call: Callable[[], requests.Response], times: list[float]) -> None:
    started = time.perf_counter()
    response = call()
    times.append(time.perf_counter() - started)
    response.raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--tries", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-legacy-ui-") as tmp:
        home = Path(tmp)
        demo = load_fixtures()
        stack = start_devstack(home, demo, Faults())
        assert stack.legacy is not None
        on = start_portal(stack, name="on")
        off = start_portal(stack, name="off", extra_env={"LEGACY_STORES_BASE_URL": ""})
        try:
            token = app_access_token(
                ensure_pki(home),
                demo,
                issuer(stack.idp.url, demo.tenant_id),
                demo.portal,
                audience=audience(),
            )
            client = LegacyStoresClient(stack.legacy.url, lambda: token)
            for n in range(args.files):
                client.create_entry(STORE, UPN, f"/memories/bench/{n:04}.md", f"- Note {n}.\n")
            client.close()
            run(stack.legacy.url, token, on.url, off.url, stack.ca, args.tries)
        finally:
            on.stop()
            off.stop()
            stack.stop()


def run(legacy_url: str, token: str, on: str, off: str, ca: str, tries: int) -> None:
    browser_on, browser_off = sign_in(on, ca), sign_in(off, ca)
    direct = requests.Session()
    direct.headers["Authorization"] = f"Bearer {token}"
    list_url = f"{legacy_url}/api/2.1/unity-catalog/memory-stores/{STORE}/entries"
    store_page = f"{on}/memory/sources/legacy/target?target={STORE}"
    steps: dict[str, tuple[Callable[[], requests.Response], list[float]]] = {
        "dashboard on": (lambda: browser_on.get(f"{on}/", timeout=TIMEOUT), []),
        "dashboard off": (lambda: browser_off.get(f"{off}/", timeout=TIMEOUT), []),
        "entries list": (lambda: direct.get(list_url, params={"scope": UPN}, timeout=TIMEOUT), []),
        "store page": (lambda: browser_on.get(store_page, timeout=TIMEOUT), []),
    }
    for call, _ in steps.values():  # warm: sign-in token caches, connections, templates
        for _ in range(3):
            call().raise_for_status()
    order = list(steps.values())
    for _ in range(tries):
        # A new order each round: no step always follows the same one (the store page's
        # work would otherwise land on whichever request comes next on that portal).
        random.shuffle(order)
        for call, times in order:
            timed(call, times)
    ms = {name: statistics.median(times) * 1000 for name, (_, times) in steps.items()}
    print(f"{tries} tries each, medians")
    for name, value in ms.items():
        print(f"{name:<14} {value:8.2f} ms")
    print(
        f"dashboard first paint, legacy on / off:  {ms['dashboard on'] / ms['dashboard off']:.2f}"
    )
    print(f"store page / one entries-list call:      {ms['store page'] / ms['entries list']:.2f}")
    for session in (browser_on, browser_off, direct):
        session.close()


if __name__ == "__main__":
    main()
