"""Benchmark: the legacy move of a whole tenant, 1, 2 and 4 shards side by side (issue 31,
item 5; bar: 4 shards >= 3x the people per second of 1).

For each shard count, a fresh devstack (IdP, CoreAPI and legacy store emulators, each call to
the two stores delayed by --latency-ms, in this process) with --people generated people: one
file of two list items each in the IT Helpdesk legacy store (written straight into the
emulator's database), each person a reader of the it-helpdesk agent in CoreAPI (the move's
destination). Then N `manage.py move_legacy_memory --shard I/N` processes over one list and
one SQLite database, as N pods of the Indexed Job would run; the clock runs from the first
start to the last exit. Checks every person has a progress row and prints people per second
for each count and the ratios to one shard.

    .venv/bin/python bench/legacy_move.py [--people 10000] [--shards 1,2,4] [--latency-ms 20]
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

# Run as a file: the repository's packages (devstack, tests) come from its root.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devstack import coreapi as coreapi_module
from devstack import idp as idp_module
from devstack import legacy as legacy_module
from devstack.config import Fixtures, load_fixtures
from devstack.coreapi.faults import Faults
from devstack.legacy.store import LegacyStore
from tests.stack import REPO

STORE = "main.agents.it_helpdesk_memory"
AGENT = "it-helpdesk"
TIMEOUT = 3 * 3600


def people(count: int) -> list[str]:
    return [f"person{n:05d}@contoso.com" for n in range(count)]


def with_readers(demo: Fixtures, upns: list[str]) -> Fixtures:
    """Every generated person reads the it-helpdesk agent, so each move goes to its memory."""
    agents = tuple(
        dataclasses.replace(a, readers={**a.readers, **dict.fromkeys(upns, "Reader")})
        if a.name == AGENT
        else a
        for a in demo.agents
    )
    return dataclasses.replace(demo, agents=agents)


def seed_legacy(home: Path, upns: list[str]) -> None:
    """One file of two items per person, in one transaction (10,000 HTTP creates would
    measure the seeding)."""
    store = LegacyStore(home)
    at = datetime(2026, 7, 1, 12, tzinfo=UTC).isoformat()
    with store.db.write() as conn:
        conn.executemany(
            "INSERT INTO entries (store, scope, path, contents, description, create_time,"
            " update_time) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    STORE,
                    upn,
                    "/memories/devices.md",
                    f"- Laptop: asset tag `CT-{n:05d}`.\n- Phone: enrolled in Intune ({n}).\n",
                    "Laptop and phone",
                    at,
                    at,
                )
                for n, upn in enumerate(upns)
            ),
        )


def portal_env(home: Path, demo: Fixtures, idp: str, coreapi: str, legacy: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_DEBUG": "false",
        "PORTAL_DEVSTACK": "true",
        "DJANGO_SECRET_KEY": "benchmark-only-secret-key-0123456789abcdefghijklmnop",
        "PORTAL_HTTPS": "false",
        "DATABASE_URL": f"sqlite:///{home / 'portal.sqlite3'}",
        "ENTRA_AUTHORITY": f"{idp}/{demo.tenant_id}",
        "ENTRA_CLIENT_SECRET": demo.portal.client_secret,
        "ENTRA_INSTANCE_DISCOVERY": "false",
        "PORTAL_CA_BUNDLE": str(home / "ca.pem"),
        "COREAPI_BASE_URL": coreapi,
        "LEGACY_STORES_BASE_URL": legacy,
        "MEMORYOS_BASE_URL": "",
        "PORTAL_LOG_LEVEL": "WARNING",
    }


def one_count(shards: int, upns: list[str], latency_ms: int) -> float:
    """People per second of `shards` processes over `upns`, on a fresh devstack."""
    demo = with_readers(load_fixtures(), upns)
    with tempfile.TemporaryDirectory(prefix="bench-legacy-move-") as tmp:
        home = Path(tmp)
        delay = Faults(latency_ms=latency_ms)
        idp = idp_module.start(home=home, fixtures_=demo)
        coreapi = coreapi_module.start(home=home, idp_url=idp.url, fixtures_=demo, faults=delay)
        legacy = legacy_module.start(
            home=home, idp_url=idp.url, faults=Faults(latency_ms=latency_ms)
        )
        try:
            seed_legacy(home, upns)
            users = home / "users.txt"
            users.write_text("\n".join(upns) + "\n", encoding="utf-8")
            env = portal_env(home, demo, idp.url, coreapi.url, legacy.url)
            manage = [sys.executable, "manage.py"]
            subprocess.run([*manage, "migrate", "-v0"], cwd=REPO, env=env, check=True)
            command = [*manage, "move_legacy_memory", "--store", STORE, "--users", str(users)]
            started = time.monotonic()
            processes = [
                subprocess.Popen(
                    [*command, "--shard", f"{index}/{shards}"],
                    cwd=REPO,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=(home / f"shard-{index}.log").open("w"),
                )
                for index in range(shards)
            ]
            codes = [p.wait(timeout=TIMEOUT) for p in processes]
            seconds = time.monotonic() - started
            assert codes == [0] * shards, (codes, (home / "shard-0.log").read_text()[-2000:])
            with sqlite3.connect(home / "portal.sqlite3") as db:
                rows = db.execute(
                    "SELECT state, count(*) FROM memory_ui_jobprogress GROUP BY state"
                ).fetchall()
            assert dict(rows) == {"done": len(upns)}, rows
        finally:
            legacy.stop()
            coreapi.stop()
            idp.stop()
    return len(upns) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=10_000)
    parser.add_argument("--shards", default="1,2,4", help="shard counts, comma-separated")
    parser.add_argument("--latency-ms", type=int, default=20, help="added to every store call")
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no access line per call
    upns = people(args.people)
    rates = {}
    for count in (int(n) for n in args.shards.split(",")):
        rates[count] = one_count(count, upns, args.latency_ms)
        print(f"{count} shard(s): {rates[count]:.1f} people/s", flush=True)
    one = rates.get(1)
    print(f"{args.people} people, store latency +{args.latency_ms} ms, load {os.getloadavg()}")
    for count, rate in rates.items():
        ratio = f"{rate / one:.2f}x one shard" if one else ""
        print(f"  {count} shard(s): {rate:7.1f} people/s  {ratio}")


if __name__ == "__main__":
    main()
