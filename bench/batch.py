"""Benchmark: select and delete many (issue 22) on the devstack, over HTTP: 200 entries
across five memories (the shared one and four agents'), chosen by a filter.

The devstack (IdP, CoreAPI emulator, adding --latency-ms to every CoreAPI call) runs in this
process and the portal under gunicorn, as production runs it, signed in as alice through
the IdP. The entries are written once; each run then times, as a browser sends them:

- preview   "Select all 200 matching" (POST /memory/select/preview): the five memories
            read, matched and summed up;
- delete    the confirmation (POST /memory/select/delete): five rewrites, each with its
            version check;
- undo      the one Undo (POST /memory/select/undo): five rewrites back;

and, for scale, `5 GETs`: the five memories read straight from CoreAPI with the same token,
one after the other. Each run ends where it began (Undo restores every memory), which the
benchmark checks. Medians (and min / max) of --runs runs, after one run to warm up.

    .venv/bin/python bench/batch.py [--runs 15] [--latency-ms 0]
    .venv/bin/python bench/batch.py --portal-dir /tmp/before   # another checkout's portal
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

import requests

# Run as a file: the repository's packages (devstack, memory_ui, tests) come from its root.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devstack.config import issuer, load_fixtures
from devstack.coreapi.faults import Faults
from devstack.pki import ensure_pki
from devstack.tokens import delegated_access_token
from memory_ui.sources.coreapi import CallerAuth
from memory_ui.sources.coreapi.client import CoreAPIClient
from tests.batch_memories import MEMORIES, PER_MEMORY, REASON, AsAlice, with_four_agents
from tests.pages import form_with_button, hidden_fields, submitted
from tests.stack import REPO, UPN, sign_in, start_devstack, start_portal

TIMEOUT = 60


def posted(browser: requests.Session, url: str, data: dict, into: list[float]) -> str:
    """The page a POST answers with; how long it took goes `into` the list."""
    started = time.perf_counter()
    response = browser.post(url, data=data, timeout=TIMEOUT)
    into.append(time.perf_counter() - started)
    response.raise_for_status()
    return response.text


def one_run(
    browser: requests.Session, portal: str, direct: AsAlice, times: dict[str, list[float]]
) -> None:
    """Preview, delete and Undo once; checks each answer and that every memory is back."""
    before = direct.documents()
    started = time.perf_counter()
    direct.documents()
    times["5 GETs"].append(time.perf_counter() - started)

    page = browser.get(f"{portal}/memory/select", params={"reason": REASON}, timeout=TIMEOUT)
    every = form_with_button(page.text, "mode", "all", base_url=page.url)
    fields = submitted(every, ("mode", "all"))
    preview = posted(browser, every.action, fields, times["preview"])
    assert "Delete 200 entries from 5 memories?" in preview, preview[:2000]

    confirm = hidden_fields(preview)
    done = posted(browser, f"{portal}/memory/select/delete", confirm, times["delete"])
    assert "Deleted 200 entries" in done, done[:2000]

    undo = hidden_fields(done)
    restored = posted(browser, f"{portal}/memory/select/undo", undo, times["undo"])
    assert restored.count(f"restored {PER_MEMORY} entries.") == len(MEMORIES), restored[:2000]
    assert direct.documents() == before, "Undo did not restore every memory exactly"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--latency-ms", type=int, default=0, help="added to every CoreAPI call")
    parser.add_argument("--portal-dir", type=Path, default=REPO, help="the portal to measure")
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no access line per call
    demo = with_four_agents(load_fixtures())
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        home = Path(tmp)
        stack = start_devstack(
            home, demo, Faults(latency_ms=args.latency_ms, path_regex="^/instances/")
        )
        portal = start_portal(stack, portal_dir=args.portal_dir)
        try:
            user = demo.user(UPN)
            assert user is not None
            token = delegated_access_token(
                ensure_pki(home), demo, issuer(stack.idp.url, demo.tenant_id), user, demo.portal
            )
            direct = AsAlice(
                CoreAPIClient(stack.coreapi.url, demo.instance_id),
                CallerAuth(token),
                demo.instance_id,
            )
            direct.add_entries()
            browser = sign_in(portal.url, stack.ca)
            warm: dict[str, list[float]] = {
                name: [] for name in ("5 GETs", "preview", "delete", "undo")
            }
            one_run(browser, portal.url, direct, warm)
            times: dict[str, list[float]] = {name: [] for name in warm}
            for _ in range(args.runs):
                one_run(browser, portal.url, direct, times)
            report(times, args)
            browser.close()
            direct.client.close()
        finally:
            portal.stop()
            stack.stop()


def report(times: dict[str, list[float]], args: argparse.Namespace) -> None:
    print(
        f"{PER_MEMORY * len(MEMORIES)} entries across {len(MEMORIES)} memories, "
        f"CoreAPI latency +{args.latency_ms} ms, {args.runs} runs (ms)"
    )
    print(f"{'step':<10} {'median':>8} {'min':>8} {'max':>8}")
    for name, values in times.items():
        ms = [v * 1000 for v in values]
        print(f"{name:<10} {statistics.median(ms):8.1f} {min(ms):8.1f} {max(ms):8.1f}")


if __name__ == "__main__":
    main()
