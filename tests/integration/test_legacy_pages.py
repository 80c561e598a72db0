"""The legacy stores' gaps through the portal's pages, signed in at the devstack IdP, with
the real legacy store emulator (or a port where nothing listens): "Export everything"
without the stores, a read-only store, a store refusing the portal's credentials, and
support's deletion request over every store of the demo data."""

from __future__ import annotations

import io
import json
import re
import socket
import zipfile
from collections.abc import Iterator

import pytest
from django.test import Client
from django.urls import reverse

from devstack import legacy as legacy_module
from devstack.coreapi.faults import Faults
from devstack.legacy import emulator
from devstack.serve import RunningServer
from memory_ui.memory.everything import missing_message
from memory_ui.models import ErasureReceipt
from memory_ui.signatures import verified
from memory_ui.sources import registry
from memory_ui.sources.legacy import operations as legacy_ops
from memory_ui.sources.legacy.adapter import READ_ONLY_REASON
from tests.integration.test_support import _clear, _export, _request
from tests.views.helpers import page_text

TRAVEL = "main.agents.travel_planner_memory"
HELPDESK = "main.agents.it_helpdesk_memory"
BENEFITS = "main.agents.benefits_assistant_memory"
FINANCE = "main.finance.finance_insights_memory"
ALICE = "alice@contoso.com"
ENROLMENT = "/memories/enrolment.md"
REFUSED = "The portal&#x27;s own access to the legacy memory stores was refused; contact support."

pytestmark = pytest.mark.django_db


@pytest.fixture
def stores(settings, fresh_legacy: RunningServer) -> Iterator[RunningServer]:
    settings.LEGACY_STORES_BASE_URL = fresh_legacy.url
    settings.LEGACY_STORES_AGENTS = json.dumps(
        {"travel-planner": TRAVEL, "benefits-assistant": BENEFITS}
    )
    legacy_ops.reset_caches()
    yield fresh_legacy
    legacy_ops.reset_caches()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _archive(response) -> zipfile.ZipFile:
    assert response.status_code == 200
    return zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


def test_export_everything_includes_the_stores_when_they_answer(alice: Client, stores) -> None:
    archive = _archive(alice.get(reverse("export_everything")))

    assert f"legacy/legacy-{TRAVEL}.md" in archive.namelist()
    assert "missing_sources" not in json.loads(archive.read("manifest.json"))


def test_export_everything_without_reachable_stores_exports_coreapi_and_says_so(
    alice: Client, settings
) -> None:
    settings.LEGACY_STORES_BASE_URL = f"http://127.0.0.1:{_closed_port()}"
    settings.LEGACY_STORES_GET_RETRIES = 0
    legacy_ops.reset_caches()

    archive = _archive(alice.get(reverse("export_everything")))

    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["files"]  # CoreAPI's memories are all there
    assert all(name in archive.namelist() for name in (f["path"] for f in manifest["files"]))
    assert not [name for name in archive.namelist() if name.startswith("legacy/")]
    assert manifest["missing_sources"] == [
        {
            "source": "legacy",
            "label": "Legacy memory stores",
            "message": missing_message(registry.source("legacy")),
        }
    ]
    page = alice.get(reverse("dashboard")).content.decode()  # the page the user is on next
    assert "their memories are not in this file" in page
    legacy_ops.reset_caches()


@pytest.mark.parametrize(
    "fault",
    [
        Faults(latency_ms=2500),  # every call outlasts the read timeout below
        Faults(error_rate=1.0, error_status=503),
        Faults(error_rate=1.0, error_status=500),
    ],
    ids=["timing-out", "answering-503", "answering-500"],
)
def test_export_everything_goes_on_without_a_source_that_fails(
    alice: Client, stores: RunningServer, settings, fault: Faults
) -> None:
    """A source that times out or answers 5xx is named as missing, in the manifest and on
    the next page, and the rest of the archive is complete (HTTP 200)."""
    settings.LEGACY_STORES_READ_TIMEOUT = 1.0
    settings.LEGACY_STORES_GET_RETRIES = 0
    legacy_ops.reset_caches()
    emulator = legacy_module.emulator(stores)
    emulator.faults = fault
    try:
        archive = _archive(alice.get(reverse("export_everything")))
    finally:
        emulator.faults = Faults()

    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["files"]
    assert all(name in archive.namelist() for name in (f["path"] for f in manifest["files"]))
    assert not [name for name in archive.namelist() if name.startswith("legacy/")]
    assert [entry["source"] for entry in manifest["missing_sources"]] == ["legacy"]
    page = alice.get(reverse("dashboard")).content.decode()
    assert missing_message(registry.source("legacy")).split(";")[0] in page


def _page(name: str, store: str, item: str = "") -> str:
    """A page of a store's, the generic source pages' (and of one of its files)."""
    url = f"{reverse(name, args=['legacy'])}?target={store}"
    return url + (f"&item={item}" if item else "")


def test_a_read_only_store_offers_no_change_and_refuses_one_with_403(alice: Client, stores) -> None:
    file_url = _page("source_item", BENEFITS, ENROLMENT)
    page = alice.get(file_url).content.decode()

    assert "PPO Plus" in page  # it can be read
    assert READ_ONLY_REASON.replace("'", "&#x27;") in page
    assert "Delete this file" not in page and "Edit the whole file" not in page
    assert reverse("source_edit", args=["legacy"]) not in page
    assert "Clear this store" not in alice.get(_page("source_target", BENEFITS)).content.decode()

    delete = reverse("source_delete", args=["legacy"])
    refused = alice.post(delete, {"target": BENEFITS, "item": ENROLMENT})
    assert refused.status_code == 403
    html = refused.content.decode()
    assert "Nothing was changed." in html and READ_ONLY_REASON.replace("'", "&#x27;") in html
    for name in ("source_edit", "source_clear"):
        assert alice.get(_page(name, BENEFITS, ENROLMENT)).status_code == 403
    assert "PPO Plus" in alice.get(file_url).content.decode()  # still there

    cards = alice.get(reverse("source_section", args=["legacy"])).content.decode()
    assert cards.count("Read only: the portal may not change it.") == 1  # benefits only
    writable = alice.get(_page("source_item", TRAVEL, "/memories/profile.md"))
    assert "Delete this file" in writable.content.decode()


def test_a_store_refusing_the_portals_token_does_not_ask_to_sign_in_again(
    alice: Client, stores, settings
) -> None:
    # A token the IdP issues the portal, for another audience: the store answers 401.
    settings.LEGACY_STORES_TOKEN_SCOPE = settings.COREAPI_APP_SCOPE

    store = alice.get(_page("source_target", TRAVEL))
    html = store.content.decode()
    assert store.status_code == 502
    assert REFUSED in html and "contact support" in html
    assert "Sign in again" not in html

    export = alice.get(reverse("export_everything"))
    manifest = json.loads(_archive(export).read("manifest.json"))
    assert manifest["missing_sources"][0]["message"] == missing_message(registry.source("legacy"))
    assert "Sign in again" not in alice.get(reverse("dashboard")).content.decode()


@pytest.mark.changes_memory
def test_a_deletion_request_shows_every_store_before_and_reports_what_was_left_after(
    carol: Client, settings, fresh_legacy: RunningServer
) -> None:
    # The devstack's own configuration: three agents' stores, and every store of the demo
    # data known with its owner (finance_insights_memory: no grant for the portal).
    settings.LEGACY_STORES_BASE_URL = fresh_legacy.url
    legacy_ops.reset_caches()
    stores = emulator(fresh_legacy).store
    request_url = _request(carol, ALICE, ["all"])

    before = page_text(carol.get(request_url))

    assert f"Legacy memory stores {TRAVEL} to erase 3 —" in before
    assert f"Legacy memory stores {HELPDESK} to erase 1 —" in before
    assert f"{BENEFITS} not possible 1 The portal may not change this store" in before
    assert "ask hr-platform@contoso.com" in before
    no_access = "The portal has no access; ask finance-platform@contoso.com."
    assert f"{FINANCE} not possible — {no_access}" in before
    assert "Ask agents-platform@contoso.com which others exist." in before
    assert stores.entry(TRAVEL, ALICE, "/memories/profile.md") is not None  # nothing done yet

    _export(carol, request_url)
    result = carol.get(_clear(carol, request_url)["Location"])
    after = page_text(result)

    heading = result.content.decode().split("<h1>")[1].split("</h1>")[0]
    assert "all" not in heading.casefold()
    assert "partly cleared" in heading and "4 of 5 files in other systems" in heading
    assert f"{TRAVEL} erased 3 of 3 erased 3 files erased." in after
    assert f"{BENEFITS} not possible 0 of 1 erased None of 1 file erased; 1 left:" in after
    assert f"{FINANCE} not possible — {no_access}" in after
    # Read back from the emulator: what the page says was left is there, the rest is gone.
    assert stores.entries(TRAVEL, ALICE, "", "", 100) == []
    assert stores.entries(HELPDESK, ALICE, "", "", 100) == []
    assert "PPO Plus" in stores.entry(BENEFITS, ALICE, ENROLMENT).contents
    assert "monthly close" in stores.entry(FINANCE, ALICE, "/memories/reports.md").contents
    # The signed receipt says the same per system, in counts only (issue 29).
    receipt = ErasureReceipt.objects.get(subject_upn=ALICE)
    document, _key = verified(receipt.document.encode())
    rows = {row["target"]: row for row in document["targets"]}
    travel = rows[TRAVEL]
    assert travel["system"] == "Legacy memory stores" and travel["read_back_at"]
    assert (travel["outcome"], travel["before"]["items"], travel["after"]["items"]) == (
        "erased",
        3,
        0,
    )
    assert (rows[BENEFITS]["outcome"], rows[BENEFITS]["after"]["items"]) == ("not possible", 1)
    assert rows[FINANCE]["outcome"] == "not possible" and document["outcome"] == "partly"
    assert [r["outcome"] for r in rows.values() if r["system"] == "CoreAPI"] == ["erased"] * 4
    assert "PPO Plus" not in receipt.document and "monthly close" not in receipt.document
    legacy_ops.reset_caches()


def test_search_counts_the_legacy_files_with_coreapi_s_entries(alice: Client, stores) -> None:
    def summary(query: str) -> str:
        html = alice.get(reverse("search"), {"q": query}).content.decode()
        found = re.search(r'<p id="search-summary"[^>]*>([^<]*)</p>', html)
        assert found, "no summary"
        return found[1]

    assert summary("Adlon") == "1 match in 1 memory."  # only the Berlin trip's file
    # Travel Planner's CoreAPI entry and the legacy preferences file.
    assert summary("aisle seats") == "2 matches in 2 memories."


def test_a_move_into_the_shared_memory_says_every_agent_will_read_it(
    alice: Client, stores, settings
) -> None:
    def preview() -> str:
        url = reverse("source_move", args=["legacy"])
        query = {"target": TRAVEL, "item": "/memories/preferences.md"}
        return alice.get(url, query).content.decode()

    assert "not one of your agents" not in preview()  # into Travel Planner's own memory

    settings.LEGACY_STORES_AGENTS = json.dumps({"no-such-agent": TRAVEL})
    legacy_ops.reset_caches()
    html = preview()

    assert "Into <strong>Shared with every agent</strong>" in html
    assert (
        "is not one of your agents in CoreAPI, so it goes to “Shared with every agent”: every "
        "agent you use will read it, not only the one that kept it." in html
    )
