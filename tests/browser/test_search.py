"""Search in Chromium: from the dashboard, then results updating as alice types (htmx),
with the address following and the back button restoring the earlier results."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import sign_in_as

pytestmark = pytest.mark.browser


def test_search_updates_as_alice_types(page: Page):
    sign_in_as(page, "Alice Example")
    page.get_by_role("searchbox", name="Search text").fill("prefers")
    page.get_by_role("searchbox", name="Search text").press("Enter")
    expect(page).to_have_url(re.compile(r"/search\?q=prefers$"))
    summary = page.locator("#search-summary")
    expect(summary).to_have_text("2 matches in 2 memories.")

    # Typing replaces the results, not the page: the field keeps focus and what was typed.
    text = page.get_by_label("Text", exact=True)
    text.fill("aisle seats")
    expect(summary).to_have_text("1 match in 1 memory.")
    expect(page).to_have_url(re.compile(r"q=aisle(\+|%20)seats"))
    expect(text).to_be_focused()
    expect(page.locator("#search-results mark")).to_have_text(["aisle seats"])

    page.get_by_label("Memory", exact=True).select_option("benefits-assistant")
    expect(summary).to_have_text("0 matches in 0 memories.")
    expect(page.locator("#search-results")).to_contain_text("Nothing matches “aisle seats”")

    page.go_back()
    expect(summary).to_have_text("1 match in 1 memory.")

    page.get_by_role("link", name=re.compile(r"^Added 30 Sep 2026")).click()
    expect(page).to_have_url(re.compile(r"/memory/agents/travel-planner\?entry=0#entry-0$"))
    expect(page.locator("#entry-0")).to_contain_text("aisle seats")
