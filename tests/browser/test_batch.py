"""Select and delete many in Chromium: from search results or a memory page's own entries
to a preview, one confirmation and one Undo, checked with axe on the selection, the
preview and the result; the live "N selected" count; and all of it without JavaScript."""

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import check_accessibility, expect_statuses, sign_in_as

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


def test_the_preview_shows_why_each_entry_goes_and_can_take_only_the_matching_items(
    page: Page,
):
    # Issue 32, item 4: the shared entry was shown by its first line, "Name: Alice
    # Example…", and could only go whole.
    sign_in_as(page, "Alice Example", "/search?q=prefers")
    page.get_by_role("button", name="Select all 2 matching…").click()
    shared = page.get_by_role("row", name=re.compile("^Shared with every agent"))
    expect(shared.locator("mark")).to_have_text("Prefers")
    expect(shared).to_contain_text("Prefers concise answers with a short summary first.")
    expect(shared).to_contain_text(
        "The entry also holds 1 more line, kept if you delete only the matching list items: "
        "“Name: Alice Example, Senior Analyst in Finance (Seattle office).”"
    )
    expect(page.get_by_role("row", name=re.compile("^Travel Planner"))).to_contain_text(
        "“Hotel within walking distance of the office; no red-eyes.”"
    )
    check_accessibility(page, "a preview offering only the matching list items")

    page.get_by_role("button", name="Delete only the 2 matching list items").click()
    expect(page.get_by_role("heading", name="Deleted 2 list items")).to_be_visible()
    memory = page.context.new_page()
    memory.goto("/memory/user")
    expect(memory.locator("#memory-content")).to_contain_text("Name: Alice Example")
    expect(memory.locator("#memory-content")).not_to_contain_text("Prefers concise answers")

    page.get_by_role("button", name="Undo").click()
    expect(page.locator(".batch-results")).to_contain_text("restored 1 list item.")
    memory.reload()
    expect(memory.locator("#memory-content")).to_contain_text("Prefers concise answers")


def test_alice_ticks_entries_on_a_memory_page_and_sees_the_count(page: Page):
    sign_in_as(page, "Alice Example")
    page.goto("/memory/agents/travel-planner")
    review = page.get_by_role("button", name="Review selected…")
    count = page.locator("[data-selection-count='entry-select']")
    expect(review).to_be_disabled()  # nothing ticked yet
    expect(count).to_have_attribute("aria-live", "polite")

    # By keyboard: Tab to the first checkbox, named after its entry, and Space.
    first = page.get_by_role("checkbox", name="Select entry 2: Upcoming trip")
    first.focus()
    page.keyboard.press("Space")
    expect(count).to_have_text("1 entry selected")
    page.get_by_role("checkbox", name="Select entry 1: Trip preferences").check()
    expect(count).to_have_text("2 entries selected")
    expect(review).to_be_enabled()
    check_accessibility(page, "a memory page with entries selected")

    review.click()
    expect(page.get_by_role("heading", name="Delete 2 entries from 1 memory?")).to_be_visible()
    page.get_by_role("button", name="Cancel").click()  # back to the memory page
    expect(page).to_have_url(re.compile(r"/memory/agents/travel-planner$"))
    first.check()
    expect(count).to_have_text("1 entry selected")
    first.uncheck()
    expect(review).to_be_disabled()


def test_alice_ticks_a_search_result_then_takes_every_match(page: Page):
    sign_in_as(page, "Alice Example")
    page.goto("/search?q=prefers")
    count = page.locator("[data-selection-count='search-select']")
    page.get_by_role("checkbox", name=re.compile("Select this entry of Travel Planner")).check()
    expect(count).to_have_text("1 entry selected")
    check_accessibility(page, "search results with a selection")

    # Typing a new search replaces the results (htmx): the count starts again.
    page.get_by_role("searchbox", name="Text").fill("aisle")
    expect(page.get_by_role("button", name="Select all 1 matching…")).to_be_visible()
    expect(count).to_have_text("Tick results to delete several at once.")
    expect(page.get_by_role("button", name="Review selected…")).to_be_disabled()
    page.get_by_role("button", name="Select all 1 matching…").click()
    expect(page.get_by_role("heading", name="Delete 1 entry from 1 memory?")).to_be_visible()


def test_cancel_on_a_preview_from_search_goes_back_to_the_results(page: Page):
    sign_in_as(page, "Alice Example", "/search?q=prefers")
    page.get_by_role("checkbox", name=re.compile("Select this entry of Travel Planner")).check()
    page.get_by_role("button", name="Review selected…").click()
    expect(page.get_by_role("heading", name="Delete 1 entry from 1 memory?")).to_be_visible()
    page.get_by_role("button", name="Cancel").click()
    expect(page).to_have_url(re.compile(r"/search\?q=prefers$"))
    expect(page.locator("#search-summary")).to_have_text("2 matches in 2 memories.")

    # Results the typing brought (htmx): Cancel goes back to those.
    page.get_by_role("searchbox", name="Text").fill("aisle")
    page.get_by_role("button", name="Select all 1 matching…").click()
    expect(page.get_by_role("heading", name="Delete 1 entry from 1 memory?")).to_be_visible()
    page.get_by_role("button", name="Cancel").click()
    expect(page).to_have_url(re.compile(r"/search\?q=aisle(&|$)"))
    expect(page.locator("#search-summary")).to_have_text("1 match in 1 memory.")


def test_ticking_deleting_and_undoing_work_without_javascript(new_page: Callable[..., Page]):
    page = new_page(java_script_enabled=False)
    sign_in_as(page, "Alice Example")
    page.goto("/memory/user")
    page.get_by_role("checkbox", name="Select entry 1: User introduced herself").check()
    page.get_by_role("button", name="Review selected…").click()
    expect(page.get_by_role("heading", name="Delete 1 entry from 1 memory?")).to_be_visible()
    page.get_by_role("button", name="Delete 1 entry").click()
    expect(page.get_by_role("heading", name="Deleted 1 entry")).to_be_visible()
    page.get_by_role("button", name="Undo").click()
    expect(page.locator(".batch-results")).to_contain_text("restored 1 entry.")

    page.goto("/search?q=prefers")
    page.get_by_role("button", name="Select all 2 matching…").click()
    expect(page.get_by_role("heading", name="Delete 2 entries from 2 memories?")).to_be_visible()
    page.goto("/search?q=prefers")
    expect_statuses(page, 400)  # nothing ticked: the selection page again, refused
    page.get_by_role("button", name="Review selected…").click()
    expect(page.locator("#toasts")).to_contain_text("Nothing is chosen")
