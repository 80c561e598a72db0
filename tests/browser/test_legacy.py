"""alice's legacy memory stores in Chromium, against the real devstack: the CoreAPI
emulator and a freshly seeded legacy store emulator (seed 003), real tokens throughout."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from devstack.serve import RunningServer
from memory_ui.sources.legacy import operations as legacy_ops
from memory_ui.sources.legacy.adapter import READ_ONLY_REASON
from tests.browser.conftest import check_accessibility, sign_in_as

pytestmark = pytest.mark.browser

TRAVEL = "main.agents.travel_planner_memory"
BENEFITS = "main.agents.benefits_assistant_memory"


@pytest.fixture
def portal_coreapi(fresh_coreapi: RunningServer) -> RunningServer:
    """These tests move memory into CoreAPI: an emulator of their own."""
    return fresh_coreapi


@pytest.fixture
def legacy_on(live_portal: str, settings, fresh_legacy: RunningServer) -> Iterator[str]:
    settings.LEGACY_STORES_BASE_URL = fresh_legacy.url
    legacy_ops.reset_caches()
    yield live_portal
    legacy_ops.reset_caches()


def test_legacy_section_store_file_edit_delete_and_undo(legacy_on: str, page: Page) -> None:
    sign_in_as(page, "Alice Example")
    section = page.locator("#legacy-stores")
    section.scroll_into_view_if_needed()
    expect(section).to_have_attribute("aria-busy", "false")
    expect(section).to_contain_text("Being turned down")
    expect(section.locator(".source-card")).to_have_count(3)  # the ones the portal may read
    check_accessibility(page, "dashboard with the legacy stores")

    # Each store is named by its agent; its full name sits behind Details.
    card = section.locator(".source-card", has_text="Travel Planner")
    expect(card.get_by_text(TRAVEL)).to_be_hidden()
    card.locator("summary").click()
    expect(card.get_by_text(TRAVEL)).to_be_visible()
    section.get_by_role("link", name="Travel Planner", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Travel Planner in the older system")
    expect(page.locator(".turned-down-notice").first).to_contain_text("being turned down")
    # A file's contents load when it is opened in the list.
    page.get_by_text("Show contents of /memories/preferences.md").click()
    expect(page.locator(".item-contents").first).to_contain_text("aisle seats")
    check_accessibility(page, "a legacy store's files")

    page.get_by_role("link", name="/memories/profile.md", exact=True).click()
    expect(page.locator(".markdown-body")).to_contain_text("Pacific Time")
    check_accessibility(page, "a legacy file")

    page.get_by_role("link", name=re.compile(r"^Edit line 1$")).click()
    # The page starts in its field; its note on the version check says one thing.
    line = page.get_by_label("New text of this entry")
    expect(line).to_be_focused()
    note = page.locator(".missing-actions")
    expect(note).to_have_text(re.compile(r"^The legacy memory stores have no version check of"))
    expect(note).to_contain_text("saves only if it is still as you opened it")
    line.fill("- Time zone: Central European Time.")
    page.get_by_role("button", name="Preview").click()
    expect(page.locator(".diff")).to_contain_text("Central European Time")
    check_accessibility(page, "an entry edit's preview")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".markdown-body")).to_contain_text("Central European Time")

    page.get_by_role("button", name="Delete this file").click()
    expect(page.locator(".undo-notice")).to_contain_text("Deleted /memories/profile.md.")
    expect(page.locator(".item-rows")).not_to_contain_text("/memories/profile.md")
    page.get_by_role("button", name="Undo").click()
    page.locator(".item-rows").get_by_role("link", name="/memories/profile.md").click()
    expect(page.locator(".markdown-body")).to_contain_text("Central European Time")


def test_move_a_file_into_coreapi_with_its_preview(legacy_on: str, page: Page) -> None:
    sign_in_as(page, "Alice Example")
    page.goto(f"/memory/legacy/{TRAVEL}/file?path=/memories/preferences.md")
    page.get_by_role("button", name="Move to your current memory").click()

    # The first line is already in alice's CoreAPI travel memory (the demo's overlap).
    expect(page.locator(".move-plan")).to_contain_text("Vegetarian meals")
    expect(page.locator(".move-plan")).to_contain_text("Moved from main.agents")
    check_accessibility(page, "a move's preview")
    page.get_by_label(
        "Delete the copies in the older system once your current memory has them"
    ).check()
    page.get_by_role("button", name="Move to your current memory").click()

    expect(page.get_by_role("heading", name="The move is done")).to_be_visible()
    expect(page.locator(".move-results")).to_contain_text("the copy in the older system is deleted")
    check_accessibility(page, "a move's results")
    page.goto("/memory/agents/travel-planner")
    expect(page.locator("#memory-content")).to_contain_text("Vegetarian meals")


def test_a_read_only_store_offers_no_edit_or_delete_and_says_why(
    legacy_on: str, page: Page
) -> None:
    # The per-store privilege: the portal may only read the benefits store (seed data).
    sign_in_as(page, "Alice Example")
    section = page.locator("#legacy-stores")
    section.scroll_into_view_if_needed()
    card = section.locator(".source-card", has_text="Benefits Assistant")
    expect(card.locator(".target-details")).to_contain_text(BENEFITS)
    expect(card).to_contain_text("Read only: the portal may not change it.")
    expect(section.locator(".read-only-note")).to_have_count(1)  # the benefits store only

    card.get_by_role("link", name="Benefits Assistant", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "Benefits Assistant in the older system"
    )
    expect(page.locator(".missing-actions")).to_contain_text(READ_ONLY_REASON)
    expect(page.get_by_role("button", name="Clear this store")).to_have_count(0)
    page.get_by_text("Show contents of /memories/enrolment.md").click()
    opened = page.locator(".item-contents").first
    expect(opened).to_contain_text("PPO Plus")
    expect(opened.get_by_role("link", name="Open this file", exact=True)).to_be_visible()

    opened.get_by_role("link", name="Open this file", exact=True).click()
    expect(page.locator(".markdown-body")).to_contain_text("PPO Plus")
    expect(page.locator(".missing-actions")).to_contain_text(READ_ONLY_REASON)
    for offer in ("Edit the whole file", "Delete this file", re.compile(r"^Edit line")):
        expect(page.get_by_role("button", name=offer)).to_have_count(0)
        expect(page.get_by_role("link", name=offer)).to_have_count(0)
    expect(page.get_by_role("button", name="Move to your current memory")).to_be_visible()  # a copy
    check_accessibility(page, "a read-only legacy file")

    page.goto("/search?q=PPO")
    hit = page.locator(".source-search .search-hit", has_text="/memories/enrolment.md")
    expect(hit).to_contain_text("Read only: the portal may not change it.")
    expect(hit.get_by_role("button")).to_have_count(0)
    expect(hit.get_by_role("link")).to_have_count(1)  # to the file, where it is read
