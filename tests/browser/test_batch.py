"""Select and delete many in Chromium: from search results to a preview, one confirmation
and one Undo, checked with axe on the selection, the preview and the result."""

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import check_accessibility, sign_in_as

pytestmark = [pytest.mark.browser, pytest.mark.changes_memory]


def test_alice_deletes_two_entries_from_search_results_and_undoes_it(page: Page):
    sign_in_as(page, "Alice Example", "/search?q=prefers")
    page.get_by_role("link", name="Select these to delete…").click()
    expect(page.get_by_role("heading", name="2 matching entries in 2 memories")).to_be_visible()
    check_accessibility(page, "a selection")

    page.get_by_role("button", name="Select all 2 matching…").click()
    heading = page.get_by_role("heading", name="Delete 2 entries from 2 memories?")
    expect(heading).to_be_visible()
    expect(page.get_by_role("row", name="Travel Planner")).to_contain_text("Prefers aisle seats")
    check_accessibility(page, "a selection's preview")

    page.get_by_role("button", name="Delete 2 entries").click()
    expect(page.get_by_role("heading", name="Deleted 2 entries")).to_be_visible()
    check_accessibility(page, "a batch deleted, with Undo")
    page.get_by_role("button", name="Undo").click()
    expect(page.locator(".batch-results li")).to_have_count(2)
    expect(page.locator(".batch-results")).not_to_contain_text("not restored")

    page.goto("/memory/agents/travel-planner")
    expect(page.locator("#memory-content")).to_contain_text("aisle seats")
