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
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests

# Run as a file: the repository's packages (devstack, memory_ui, tests) come from its root.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devstack.config import Fixtures, issuer, load_fixtures
from devstack.coreapi import formats
from devstack.coreapi.faults import Faults
from devstack.pki import ensure_pki
from devstack.tokens import delegated_access_token
from memory_ui.coreapi import CallerAuth, agent_object_id
from memory_ui.coreapi.client import CoreAPIClient
from tests.pages import form_with_button, hidden_fields, submitted
from tests.stack import UPN, sign_in, start_devstack, start_portal

AGENTS = ("benefits-assistant", "it-helpdesk", "travel-planner", "finance-insights")
MEMORIES = (None, *AGENTS)  # None: the shared memory
PER_MEMORY = 40
REASON = "Batch import"
TIMEOUT = 60


def four_agents() -> Fixtures:
    """The demo, with alice also reading finance-insights: five memories of hers."""
    demo = load_fixtures()
    agents = tuple(
        dataclasses.replace(a, readers={**a.readers, UPN: "Reader"})
        if a.name == "finance-insights"
        else a
        for a in demo.agents
    )
    return dataclasses.replace(demo, agents=agents)


@dataclasses.dataclass
class Direct:
    """CoreAPI as alice, straight: to write the entries, check the runs and time the GETs."""

    client: CoreAPIClient
    auth: CallerAuth
    instance_id: str

    def where(self, agent: str | None) -> tuple[str, str | None]:
        if agent is None:
            return "user", None
        return "agent", agent_object_id(self.instance_id, agent)

    def read_all(self) -> dict[str | None, str]:
        return {
            a: self.client.get_memory(self.auth, *self.where(a)).content_markdown for a in MEMORIES
        }

    def add_entries(self) -> None:
        start = datetime(2026, 11, 1, 8, tzinfo=UTC)
        for agent in MEMORIES:
            scope, object_id = self.where(agent)
            text = self.client.get_memory(self.auth, scope, object_id).content_markdown
            for n in range(PER_MEMORY):
                text = formats.append_entry(
                    text, f"- Imported line {n}.", start + timedelta(minutes=n), REASON
                )
            self.client.import_memory(
                self.auth, scope, text, mode="replace", agent_object_id=object_id
            )


def timed(call: Callable[[], requests.Response], into: list[float]) -> str:
    started = time.perf_counter()
    response = call()
    into.append(time.perf_counter() - started)
    response.raise_for_status()
    return response.text


def one_run(
    browser: requests.Session, portal: str, direct: Direct, times: dict[str, list[float]]
) -> None:
    """Preview, delete and Undo once; checks each answer and that every memory is back."""
    before = direct.read_all()
    started = time.perf_counter()
    direct.read_all()
    times["5 GETs"].append(time.perf_counter() - started)

    page = browser.get(f"{portal}/memory/select", params={"reason": REASON}, timeout=TIMEOUT)
    every = form_with_button(page.text, "mode", "all", base_url=page.url)
    fields = submitted(every, ("mode", "all"))
    preview = timed(
        lambda: browser.post(every.action, data=fields, timeout=TIMEOUT), times["preview"]
    )
    assert "Delete 200 entries from 5 memories?" in preview, preview[:2000]

    confirm = hidden_fields(preview)
    done = timed(
        lambda: browser.post(f"{portal}/memory/select/delete", data=confirm, timeout=TIMEOUT),
        times["delete"],
    )
    assert "Deleted 200 entries" in done, done[:2000]

    undo = hidden_fields(done)
    restored = timed(
        lambda: browser.post(f"{portal}/memory/select/undo", data=undo, timeout=TIMEOUT),
        times["undo"],
    )
    assert restored.count(f"restored {PER_MEMORY} entries.") == len(MEMORIES), restored[:2000]
    assert direct.read_all() == before, "Undo did not restore every memory exactly"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--latency-ms", type=int, default=0, help="added to every CoreAPI call")
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no access line per call
    demo = four_agents()
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        home = Path(tmp)
        stack = start_devstack(
            home, demo, Faults(latency_ms=args.latency_ms, path_regex="^/instances/")
        )
        portal = start_portal(stack)
        try:
            user = demo.user(UPN)
            assert user is not None
            token = delegated_access_token(
                ensure_pki(home), demo, issuer(stack.idp.url, demo.tenant_id), user, demo.portal
            )
            direct = Direct(
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
