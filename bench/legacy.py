"""Benchmark: a legacy store page with 500 files vs one entries-list call (issue 18).

Against the legacy store emulator and the devstack IdP over HTTP (both started here, on
free ports, in a temporary folder), with a real service-principal token. A user gets
`--files` files in one store; then, interleaved, `--tries` times each:

- raw: one `GET .../entries?scope=` with requests (a pooled session), the body parsed as
  JSON: the floor any page of this store costs;
- page: the portal's memory layer reading the store's first page (LegacyBackend.read_page,
  what the store's page calls through the stores' backend: one entries-list call, parsed
  into typed items).

The entries list is paged by the store (100 a page, the cap), so a page of a 500-file
store is one call whatever the store's size. Prints the medians and the ratio page / raw
(issue 18's bar: <= 1.5).

    .venv/bin/python bench/legacy.py [--files 500] [--tries 50]
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

# Run as a file: the repository's packages (devstack, memory_ui) come from its root.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from devstack import idp as idp_module
from devstack import legacy as legacy_module
from devstack.config import issuer, load_fixtures
from devstack.coreapi.faults import Faults
from devstack.legacy.store import audience
from devstack.pki import ensure_pki
from devstack.tokens import app_access_token
from memory_ui.sources.legacy.adapter import LegacyBackend
from memory_ui.sources.legacy.client import LegacyStoresClient
from memory_ui.sources.protocol import Subject

STORE = "main.agents.it_helpdesk_memory"
UPN = "bench@contoso.com"
TIMEOUT = 30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--tries", type=int, default=50)
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    with tempfile.TemporaryDirectory(prefix="bench-legacy-") as tmp:
        home = Path(tmp)
        demo = load_fixtures()
        idp = idp_module.start(home=home, fixtures_=demo)
        legacy = legacy_module.start(home=home, idp_url=idp.url, faults=Faults())
        try:
            token = app_access_token(
                ensure_pki(home),
                demo,
                issuer(idp.url, demo.tenant_id),
                demo.portal,
                audience=audience(),
            )
            run(legacy.url, token, args.files, args.tries)
        finally:
            legacy.stop()
            idp.stop()


def run(url: str, token: str, files: int, tries: int) -> None:
    client = LegacyStoresClient(url, lambda: token)
    for n in range(files):
        client.create_entry(
            STORE, UPN, f"/memories/notes/{n:04}.md", f"- Note {n}.\n", f"Note number {n}"
        )
    backend = LegacyBackend(client, {"it-helpdesk": STORE}, "{upn}")
    target = backend.configured_targets()[0]
    subject = Subject(UPN, "")
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    list_url = f"{url}/api/2.1/unity-catalog/memory-stores/{STORE}/entries"

    def raw() -> int:
        response = session.get(list_url, params={"scope": UPN}, timeout=TIMEOUT)
        response.raise_for_status()
        return len(response.json()["memory_entries"])

    def page() -> int:
        return len(backend.read_page(subject, target).items)

    raw_times, page_times = [], []
    for _ in range(tries):
        for step, times in ((raw, raw_times), (page, page_times)):
            started = time.perf_counter()
            shown = step()
            times.append(time.perf_counter() - started)
    raw_ms, page_ms = statistics.median(raw_times) * 1000, statistics.median(page_times) * 1000
    print(f"store with {files} files, a page of {shown} files, {tries} tries each (medians)")
    print(f"one entries-list call (raw): {raw_ms:7.2f} ms")
    print(f"store page (memory layer):   {page_ms:7.2f} ms")
    print(f"ratio page / raw:            {page_ms / raw_ms:7.2f}")
    client.close()
    session.close()


if __name__ == "__main__":
    main()
