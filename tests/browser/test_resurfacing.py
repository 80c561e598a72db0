"""Deleted memory that comes back, in Chromium against the real devstack (issue 29, item 2):
alice deletes an entry from its Actions menu, the agent writes the same text again through
CoreAPI, and she finds it flagged in her search results, on What's new, among the entries
to select for deleting and on the memory page; carol finds it on alice's overview and on the memory she reveals; alice follows the
result's "Delete again…" to the entry's own page and deletes it again. axe checks each page
with the flag on it."""

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.db.models import F
from playwright.sync_api import Page, expect

from memory_ui.documents import parse_document
from memory_ui.models import MemoryVisit
from tests.browser.conftest import check_accessibility, entry_action, sign_in_as
from tests.integration.test_changes import agent  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.changes_memory]

PREFERENCES = "entry 1: Trip preferences"  # #entry-0, the one about aisle seats
CAME_BACK = "This came back after you deleted it on"


def test_alice_and_carol_find_what_came_back_and_alice_deletes_it_again(
    page: Page,
    new_page: Callable[..., Page],
    agent,  # noqa: F811
):
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner")
    body = parse_document(agent.text("travel-planner")).entries[0].body
    assert "aisle seats" in body
    entry_action(page, "Delete", PREFERENCES).click()
    expect(page.locator(".change-notice")).to_contain_text("Deleted “Trip preferences”.")
    # She comes back later: her visit was a while ago (entry times are whole seconds).
    MemoryVisit.objects.update(seen_at=F("seen_at") - timedelta(minutes=5))
    agent.append(body, "travel-planner", "Seat choice")

    page.goto("/search?q=aisle+seats")
    hit = page.locator(".search-hit-came-back")
    expect(hit).to_have_count(1)
    expect(hit.locator(".came-back")).to_contain_text(CAME_BACK)
    expect(hit.locator("mark")).to_have_text(["aisle seats"])
    check_accessibility(page, "a search result that came back")

    page.goto("/whats-new")
    expect(page.locator(".whats-new-came-back")).to_have_count(1)
    expect(page.locator(".whats-new-came-back")).to_contain_text(CAME_BACK)
    check_accessibility(page, "what's new, with an entry that came back")

    page.goto("/memory/select?q=aisle+seats")
    expect(page.get_by_role("checkbox", name=CAME_BACK)).to_have_count(1)
    check_accessibility(page, "selecting entries to delete, one came back")

    page.goto("/memory/agents/travel-planner")
    expect(page.locator(".entry-came-back")).to_have_count(1)
    check_accessibility(page, "a memory with an entry that came back")

    carol = new_page()
    sign_in_as(carol, "Carol Support", "/support/")
    carol.get_by_label("User principal name").fill("alice@contoso.com")
    carol.get_by_role("button", name="Look up").click()
    expect(carol.locator(".card-came-back")).to_contain_text("1 came back after")
    expect(carol.locator(".card-came-back")).to_contain_text("1 entry in CoreAPI.")
    other = carol.get_by_role("region", name="Other memory systems")
    expect(other).to_contain_text("Agents' private notes:")  # named, not silently missing
    check_accessibility(carol, "support: an overview with what came back, every system")
    row = carol.get_by_role("row", name="Travel Planner")
    row.get_by_role("textbox").fill("Checking a reported problem")
    row.get_by_role("button", name="Reveal").click()
    expect(carol.get_by_role("note")).to_contain_text("1 entry came back after alice@contoso.com")
    expect(carol.get_by_role("note")).to_contain_text("— Seat choice, deleted on")
    check_accessibility(carol, "support: a revealed memory with an entry that came back")

    page.goto("/search?q=aisle+seats")
    page.get_by_role("link", name="Delete again… this entry of Travel Planner").click()
    expect(page.get_by_role("note")).to_contain_text(CAME_BACK)
    check_accessibility(page, "an entry's own page, come back")
    page.get_by_role("button", name="Delete again entry 2").click()
    expect(page.locator(".change-notice")).to_contain_text("Deleted")
    expect(page.locator("#memory-content")).not_to_contain_text("aisle seats")
    assert "aisle seats" not in agent.text("travel-planner")
