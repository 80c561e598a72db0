"""The workspace memory-api (seed 001) in Chromium, registered by the default
PORTAL_MEMORY_SOURCES with its emulator beside the real devstack: alice corrects a memory
(the earlier version shown as kept), resolves her conflict and deletes one (a soft delete,
whose Undo writes it again as a new memory, the deleted one kept soft-deleted); carol's deletion request erases alice's memory-api memories with a read-back row
per agent, and bob's stay (read back from the emulator as the portal)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Page, expect

from devstack import memory_api as emulator_module
from devstack.memory_api.identity import (
    load_settings,
    service_account_token,
    write_projected_token,
    write_pseudonym_key,
)
from devstack.pki import ensure_pki
from devstack.serve import RunningServer
from memory_ui.sources.memory_api import backend_for
from memory_ui.sources.memory_api.adapter import DELETE_NOTE, EDIT_NOTE, RESTORE_NOTE
from tests.browser.conftest import check_accessibility, sign_in_as

pytestmark = pytest.mark.browser

SETTINGS = load_settings()
LAPTOP = "0a1ce001-0000-4000-8000-000000000003"
VPN = "0a1ce001-0000-4000-8000-000000000004"
CONTACT = "0a1ce001-0000-4000-8000-000000000001"
CONTACT_TEXT = "Prefers email over phone for benefits updates."
LAPTOP_TEXT = "Laptop: ThinkPad X1 Carbon, Windows 11, asset tag CT-48213."
VPN_NEW = "Uses the Contoso VPN client 6.0 (WireGuard)."


@pytest.fixture
def portal_coreapi(fresh_coreapi):
    return fresh_coreapi  # carol's request clears alice's CoreAPI memory too


@pytest.fixture
def memory_api(tmp_path: Path) -> Iterator[RunningServer]:
    server = emulator_module.start(home=tmp_path / "memory-api")
    yield server
    server.stop()


@pytest.fixture
def memory_api_portal(
    live_portal: str, settings, memory_api: RunningServer, idp: RunningServer, tmp_path: Path
) -> Iterator[str]:
    home = tmp_path / "memory-api"
    settings.MEMORY_API_BASE_URL = memory_api.url  # the default sources name the memory-api
    settings.MEMORY_API_WORKSPACE_UID = SETTINGS.workspace.uid
    settings.MEMORY_API_TOKEN_FILE = str(write_projected_token(home, ensure_pki(home), SETTINGS))
    settings.MEMORY_API_SUBJECT_RULE = "hmac-sha256"
    settings.MEMORY_API_PSEUDONYM_KEY_FILE = str(write_pseudonym_key(home, SETTINGS))
    settings.GRAPH_BASE_URL = idp.url  # carol acts by UPN: Graph gives alice's object id
    backend_for.cache_clear()
    yield live_portal
    backend_for.cache_clear()


def item_url(target: str, item: str) -> str:
    return f"/memory/sources/memory_api/item?target={target}&item={item}"


def exported(server: RunningServer, home: Path, upn: str) -> list[dict]:
    """What the memory-api keeps about `upn`, read as the portal."""
    token = service_account_token(ensure_pki(home), SETTINGS, SETTINGS.accounts["portal"])
    response = requests.get(
        f"{server.url}/api/v1/memories/export",
        params={
            "workspace": SETTINGS.workspace.uid,
            "virtual_user_id": SETTINGS.virtual_user_id(upn),
        },
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    response.raise_for_status()
    return response.json()["memories"]


def test_alice_corrects_resolves_deletes_and_undoes(
    memory_api_portal: str, page: Page, memory_api: RunningServer, tmp_path: Path
) -> None:
    sign_in_as(page, "Alice Example")
    section = page.locator("#memory_api-stores")
    section.scroll_into_view_if_needed()
    section.get_by_role("link", name="IT Helpdesk", exact=True).click()
    expect(page.locator("main")).to_contain_text(LAPTOP_TEXT)
    check_accessibility(page, "a memory-api agent's page")

    page.goto(item_url("it-helpdesk", LAPTOP))
    expect(page.locator("main")).to_contain_text(DELETE_NOTE)
    page.get_by_role("button", name="Edit the whole memory").click()
    expect(page.locator("main")).to_contain_text(EDIT_NOTE)
    page.get_by_label("Text").fill("Laptop: Surface Laptop 6.")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("main")).to_contain_text("Laptop: Surface Laptop 6.")
    page.goto(item_url("it-helpdesk", LAPTOP))
    history = page.locator("section", has=page.get_by_role("heading", name=re.compile("Earlier")))
    expect(history).to_contain_text(LAPTOP_TEXT)
    check_accessibility(page, "a corrected memory with its earlier version")

    page.goto(item_url("it-helpdesk", VPN))
    expect(
        page.get_by_role("heading", level=2, name="Two versions of this are held")
    ).to_be_visible()
    check_accessibility(page, "a memory holding two versions")
    page.get_by_role("button", name="Keep this one (version 2)").click()
    expect(page.get_by_text("Kept the version you chose")).to_be_visible()
    expect(page.get_by_role("heading", name="Two versions of this are held")).to_have_count(0)
    expect(page.locator(".markdown-body").first).to_have_text(VPN_NEW)

    page.goto(item_url("benefits-assistant", CONTACT))
    page.get_by_role("button", name="Delete this memory").click()
    expect(page.get_by_text(f"Deleted {CONTACT}.", exact=True)).to_be_visible()
    expect(page.locator("main")).not_to_contain_text("Prefers email over phone")
    undo = page.locator(".undo-notice")
    expect(undo).to_contain_text(RESTORE_NOTE)
    check_accessibility(page, "a deleted memory-api memory with its Undo")
    undo.get_by_role("button", name="Undo").click()
    expect(page.locator("#toasts")).to_contain_text(f"Restored {CONTACT} as ")
    expect(page.locator("main")).to_contain_text(CONTACT_TEXT)
    kept = exported(memory_api, tmp_path / "memory-api", "alice@contoso.com")
    again = [m for m in kept if m["content"] == CONTACT_TEXT]
    assert [(m["id"] == CONTACT, bool(m["deleted_at"])) for m in again] == [
        (True, True),  # the deleted one stays soft-deleted with the service
        (False, False),  # written again as a new memory, for the same agent
    ]
    assert again[1]["agent"] == "benefits-assistant"


def test_carols_deletion_request_erases_alices_and_leaves_bobs(
    memory_api_portal: str, new_page, memory_api: RunningServer, tmp_path: Path
) -> None:
    carol = new_page()
    sign_in_as(carol, "Carol Support")
    carol.get_by_role("link", name="Support").click()
    carol.get_by_label("User principal name").fill("alice@contoso.com")
    carol.get_by_role("button", name="Look up").click()
    start = carol.locator("form", has=carol.get_by_role("button", name="Start"))
    start.get_by_label("Reason", exact=True).fill("Privacy request from the user")
    start.get_by_label("Ticket reference").fill("PRIV-2801")
    start.get_by_role("checkbox", name="All memories").check()
    start.get_by_role("button", name="Start").click()
    expect(carol.get_by_role("heading", name="Deletion request PRIV-2801")).to_be_visible()
    for agent in ("benefits-assistant", "it-helpdesk"):
        row = carol.locator("tr", has_text=f"What {agent} remembers")
        expect(row).to_contain_text("to erase")

    with carol.expect_download():
        carol.get_by_role("button", name="Download the export (.zip)").click()
    carol.get_by_label("Type alice@contoso.com to confirm").fill("alice@contoso.com")
    carol.get_by_role("button", name="Clear the exported memories").click()

    for agent in ("benefits-assistant", "it-helpdesk"):
        row = carol.locator("tr", has_text=f"What {agent} remembers")
        expect(row).to_contain_text("erased")
        expect(row).to_contain_text("0 left when read back")
    check_accessibility(carol, "a deletion request with the memory-api's read-back rows")
    home = tmp_path / "memory-api"
    assert exported(memory_api, home, "alice@contoso.com") == []
    assert len(exported(memory_api, home, "bob@contoso.com")) == 2
