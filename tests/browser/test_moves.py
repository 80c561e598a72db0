"""Move or copy an entry in Chromium, by keyboard only: the panel opened in the entry's
place from "Move or copy" in its Actions menu, Escape putting the entry back, the preview,
one confirmation and one Undo; axe on the chooser, the move preview and the result."""

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import (
    NARROWEST,
    check_accessibility,
    entry_action,
    sideways_overflow,
    sign_in_as,
)

pytestmark = [pytest.mark.browser, pytest.mark.changes_memory]

ACTIONS = "Actions for entry 2: Upcoming trip"
MOVE_LINK = "Move or copy entry 2: Upcoming trip"


def open_panel(page: Page) -> None:
    page.get_by_role("button", name=ACTIONS).focus()
    page.keyboard.press("Enter")  # the menu, on its first item (Edit)
    page.keyboard.press("ArrowDown")
    expect(page.get_by_role("menuitem", name=MOVE_LINK)).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Move or copy entry 2")).to_be_visible()
    # Focus moves into the panel, to its first choice.
    expect(page.get_by_role("radio", name="Shared with every agent")).to_be_focused()


def test_alice_moves_an_entry_to_the_shared_memory_and_undoes_it(page: Page):
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner")
    open_panel(page)
    check_accessibility(page, "move or copy: the chooser")

    page.keyboard.press("Escape")  # the entry comes back, focus on the Actions that opened it
    expect(page.get_by_role("button", name=ACTIONS)).to_be_focused()
    expect(page.locator("#memory-content .entry")).to_have_count(2)

    open_panel(page)
    page.keyboard.press("Enter")  # Shared with every agent, Move: the preview
    heading = "Preview: move “Upcoming trip” to Shared with every agent"
    expect(page.get_by_role("heading", name=heading)).to_be_visible()
    expect(page.get_by_role("button", name="Move it")).to_be_focused()
    expect(page.locator(".move-landed")).to_contain_text("moved from Travel Planner")
    check_accessibility(page, "move preview")

    page.keyboard.press("Enter")
    done = page.get_by_role("heading", name="Moved “Upcoming trip” from Travel Planner")
    expect(done).to_be_focused()
    # The memory as the move left it: one entry, counted so.
    content = page.locator("#memory-content")
    expect(content.locator(".entry")).to_have_count(1)
    expect(content).not_to_contain_text("Trip to London")
    expect(content.locator(".memory-stats")).to_contain_text("Entries1")
    check_accessibility(page, "moved, with Undo")
    page.get_by_role("button", name="Undo").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Undo", exact=True)).to_be_focused()
    expect(page.locator(".batch-results li")).to_have_count(2)
    expect(page.locator(".batch-results")).not_to_contain_text("not restored")
    # Restored, and shown so without a reload: the entry back in the list and the counts.
    expect(content.locator(".entry")).to_have_count(2)
    expect(content.locator("#entry-1")).to_contain_text("Trip to London")
    expect(content.locator(".memory-stats")).to_contain_text("Entries2")
    check_accessibility(page, "a move undone")

    page.goto("/memory/agents/travel-planner")
    expect(page.locator("#memory-content")).to_contain_text("Trip to London")
    page.goto("/memory/user")
    expect(page.locator("#memory-content")).not_to_contain_text("Trip to London")


def test_alice_copies_an_entry_to_another_agent(page: Page):
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner")
    open_panel(page)
    page.get_by_role("radio", name="Benefits Assistant").focus()
    page.keyboard.press("Space")
    page.get_by_role("radio", name="Copy").focus()
    page.keyboard.press("Space")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Preview: copy “Upcoming trip”")).to_be_visible()
    expect(page.get_by_role("button", name="Copy it")).to_be_focused()
    expect(page.get_by_text("keeps it as it is")).to_be_visible()
    check_accessibility(page, "copy preview")

    page.keyboard.press("Enter")
    copied = "Copied “Upcoming trip” from Travel Planner to Benefits Assistant"
    expect(page.get_by_role("heading", name=copied)).to_be_focused()
    page.get_by_role("button", name="Go to Benefits Assistant").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#memory-content")).to_contain_text("copied from Travel Planner")
    page.goto("/memory/agents/travel-planner")
    expect(page.locator("#memory-content")).to_contain_text("Trip to London")


def test_entry_controls_keep_their_labels_on_one_line_on_a_phone(page: Page):
    # "Move or copy" squeezed beside Edit and Delete once broke into three lines at 390 px;
    # the Actions button and each item of its menu stay one line high.
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner")
    entry_action(page, "Edit", "entry 2: Upcoming trip")
    for width in (390, NARROWEST):
        page.set_viewport_size({"width": width, "height": 800})
        heights = page.evaluate(
            """() => [...document.querySelectorAll(
                '#entry-1 .entry-actions, #entry-1 .entry-actions-menu > *')].map(e => {
              const line = parseFloat(getComputedStyle(e).lineHeight);
              return [e.textContent.trim(), e.getBoundingClientRect().height, line];
            })"""
        )
        labels = [label for label, _, _ in heights]
        assert labels == ["Actions", "Edit", "Move or copy", "Delete"]
        assert [label for label, height, line in heights if height >= 2 * line] == [], width
        assert sideways_overflow(page) <= 0, width
