"""Search in Chromium: from the dashboard, then results updating as alice types (htmx),
with the address following and the back button restoring the earlier results."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import (
    NARROWEST,
    check_accessibility,
    expect_statuses,
    sideways_overflow,
    sign_in_as,
)

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


# Every state of the search page a person meets: results, none, and dates the wrong way round
# (refused with 400 and the form kept).
SEARCH_STATES = {
    "results": "/search?q=trip",
    "no results": "/search?q=nothing+like+this",
    "dates reversed": "/search?q=trip&date_from=2026-10-01&date_to=2026-09-01",
}
CONTROLS = ".search-form :is(input:not([type=hidden]), select, button, [role=button])"
USABLE_PX = 160


def control_widths(page: Page) -> dict[str, int]:
    return page.evaluate(
        """selector => Object.fromEntries([...document.querySelectorAll(selector)].map(
          e => [e.name || e.textContent.trim(), Math.round(e.getBoundingClientRect().width)]))""",
        CONTROLS,
    )


def test_the_search_form_fits_at_every_width(page: Page):
    sign_in_as(page, "Alice Example")
    expect_statuses(page, 400)
    for state, url in SEARCH_STATES.items():
        page.set_viewport_size({"width": 1280, "height": 800})
        page.goto(url)
        expect(page.locator("#search-summary")).not_to_be_empty()
        widths = control_widths(page)
        assert len(widths) == 7, widths  # text, four filters, Search, Clear filters
        assert {name: px for name, px in widths.items() if px < USABLE_PX} == {}, state
        # The text box takes the whole width; the filters sit under it.
        text, memory = (
            page.get_by_label("Text", exact=True),
            page.get_by_label("Memory", exact=True),
        )
        assert text.bounding_box()["width"] >= 1000
        assert memory.bounding_box()["y"] > text.bounding_box()["y"]
        check_accessibility(page, f"search, {state}")

        page.set_viewport_size({"width": NARROWEST, "height": 640})
        filters = page.locator("details.search-filters")
        if state == "dates reversed":
            expect(filters).to_have_attribute("open", "")  # a filter to fix is shown
        else:
            # On a phone the filters fold into a disclosure; opening it shows them.
            expect(memory).to_be_hidden()
            page.get_by_text("Filters", exact=True).click()
        expect(memory).to_be_visible()
        assert sideways_overflow(page) <= 0, state
        assert min(control_widths(page).values()) >= 120, state
