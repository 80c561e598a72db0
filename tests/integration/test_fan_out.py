"""Search, "Export everything" and support's overview ask every memory system at once, each within its own
deadline (PORTAL_SOURCE_DEADLINE_SECONDS): with the real legacy store emulator answering
long after that deadline and a team notebook (tests/fake_source) answering at once, the
page comes back within the deadline, names the legacy stores as not answering and shows
the notebook's hits; the export is a 200 whose manifest names the legacy stores as missing,
with CoreAPI's and the notebook's files complete, and their audit rows saved; support's
overview of a person names the legacy stores as not read and counts the notebook."""

from __future__ import annotations

import io
import json
import time
import zipfile
from collections.abc import Iterator

import pytest
from django.test import Client
from django.urls import reverse

from devstack import legacy as legacy_module
from devstack.coreapi.faults import Faults
from devstack.serve import RunningServer
from memory_ui.models import AuditEvent
from memory_ui.sources.legacy import operations as legacy_ops
from tests.fake_source import NOTEBOOK
from tests.integration.test_support import look_up
from tests.pages import table_rows
from tests.views.helpers import page_text

pytestmark = pytest.mark.django_db

ALICE = "alice@contoso.com"
DEADLINE = 1.0
LEGACY_LATENCY_MS = 6000  # every legacy call answers long after the deadline
# The request over every system takes about its deadline; the legacy stores alone take
# LEGACY_LATENCY_MS for each call, so a request that waited for them could not be this quick.
WITHIN = DEADLINE + 2.0


@pytest.fixture
def slow_legacy(settings, fresh_legacy: RunningServer) -> Iterator[None]:
    settings.PORTAL_MEMORY_SOURCES = [
        "memory_ui.sources.coreapi",
        "memory_ui.sources.legacy",
        "tests.fake_source",
    ]
    settings.PORTAL_SOURCE_DEADLINE_SECONDS = DEADLINE
    settings.LEGACY_STORES_BASE_URL = fresh_legacy.url
    settings.LEGACY_STORES_AGENTS = json.dumps(
        {
            "travel-planner": "main.agents.travel_planner_memory",
            "benefits-assistant": "main.agents.benefits_assistant_memory",
        }
    )
    settings.NOTEBOOK_WITHOUT = []
    NOTEBOOK.pages = {ALICE: {"weekly": {"coffee": "Alice takes her coffee black."}}}
    NOTEBOOK.down = False
    legacy_ops.reset_caches()
    emulator = legacy_module.emulator(fresh_legacy)
    emulator.faults = Faults(latency_ms=LEGACY_LATENCY_MS)
    yield
    emulator.faults = Faults()
    NOTEBOOK.pages = {}
    legacy_ops.reset_caches()


def _timed(call):
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def test_search_answers_within_the_deadline_naming_the_slow_system(
    alice: Client, slow_legacy
) -> None:
    response, took = _timed(lambda: alice.get(reverse("search"), {"q": "coffee"}))

    assert response.status_code == 200
    assert took < WITHIN, f"search took {took:.1f} s"
    html = response.content.decode()
    assert '<h3 id="search-source-legacy">' in html
    legacy = html[html.index('<h3 id="search-source-legacy">') :]
    assert "This memory system could not be searched." in legacy.split("</section>")[0]
    assert '<h3 id="search-source-notebook">' in html
    assert "Alice takes her coffee black." in page_text(response)


def test_export_everything_answers_within_the_deadline_naming_the_slow_system(
    alice: Client, slow_legacy
) -> None:
    response, took = _timed(lambda: alice.get(reverse("export_everything")))

    assert response.status_code == 200
    assert took < WITHIN, f"the export's files took {took:.1f} s"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    manifest = json.loads(archive.read("manifest.json"))
    assert [entry["source"] for entry in manifest["missing_sources"]] == ["legacy"]
    assert manifest["files"]  # CoreAPI's memories are all there
    assert all(name in archive.namelist() for name in (f["path"] for f in manifest["files"]))
    assert "Alice takes her coffee black." in archive.read("notebook/weekly.md").decode()
    assert not [name for name in archive.namelist() if name.startswith("legacy/")]
    # Audited from the worker threads, saved with the request's own connection.
    exported = AuditEvent.objects.filter(action=AuditEvent.Action.EXPORT)
    assert exported.filter(source="notebook").count() == 1
    assert exported.filter(source="coreapi").exists()


def test_supports_overview_answers_within_the_deadline_naming_the_slow_system(
    carol: Client, slow_legacy
) -> None:
    response, took = _timed(lambda: look_up(carol, ALICE))

    assert response.status_code == 200
    assert took < WITHIN, f"the overview took {took:.1f} s"
    text = page_text(response)
    assert "Legacy memory stores: It could not be read just now:" in text
    assert ["Notebook page weekly", "1", "0"] in table_rows(response.content.decode())
    assert any(row[0] == "Travel Planner" for row in table_rows(response.content.decode()))
