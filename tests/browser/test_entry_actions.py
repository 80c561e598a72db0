"""An entry's one control, Actions, in Chromium by keyboard only: a menu button opening the
page's one menu filled for that entry (Edit, Move or copy, Delete), its keys (arrows, Home,
End, Escape, Tab), one menu at a time, and each action chosen from it; axe with it open.
Without JavaScript the same link is the entry's own page (tests/views/test_entry.py)."""

import re
from datetime import datetime

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import check_accessibility, sign_in_as

pytestmark = [pytest.mark.browser, pytest.mark.changes_memory]

TRIP = "entry 2: Upcoming trip"  # #entry-1, listed first (newest first)
PREFERENCES = "entry 1: Trip preferences"  # #entry-0


def item(page: Page, action: str, entry: str = TRIP):
    return page.get_by_role("menuitem", name=f"{action} {entry}")


def test_the_actions_menu_opens_moves_and_closes_by_keyboard(page: Page):
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner")
    actions = page.get_by_role("button", name=f"Actions for {TRIP}")
    menu = page.get_by_role("menu", name=f"Actions for {TRIP}")
    expect(actions).to_have_attribute("aria-haspopup", "menu")
    expect(actions).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_role("menu")).to_have_count(0)
    # The entry's exact time on hover: portal.js writes it from the <time>'s datetime (the
    # page sends none, to be lighter), as the server writes every other time's.
    when = page.locator("#entry-1 header time")
    expect(when).to_have_attribute("title", re.compile(r" UTC$"))
    at = datetime.fromisoformat(when.get_attribute("datetime") or "")
    expect(when).to_have_attribute("title", f"{at.day} {at:%B %Y, %H:%M:%S} UTC")

    # Enter opens it on its first item; the arrows go round, Home and End to either end.
    actions.focus()
    page.keyboard.press("Enter")
    expect(actions).to_have_attribute("aria-expanded", "true")
    expect(actions).to_have_attribute("aria-controls", "entry-actions-menu")
    expect(menu).to_have_attribute("id", "entry-actions-menu")
    expect(item(page, "Edit")).to_be_focused()
    for key, action in [
        ("ArrowDown", "Move or copy"),
        ("ArrowDown", "Delete"),
        ("ArrowDown", "Edit"),
        ("ArrowUp", "Delete"),
        ("Home", "Edit"),
        ("End", "Delete"),
    ]:
        page.keyboard.press(key)
        expect(item(page, action)).to_be_focused()
    check_accessibility(page, "an entry's Actions menu, open")

    # Escape closes it, back on Actions.
    page.keyboard.press("Escape")
    expect(page.get_by_role("menu")).to_have_count(0)
    expect(actions).to_be_focused()
    expect(actions).to_have_attribute("aria-expanded", "false")

    # Space opens it too; Tab closes it and goes on from Actions (the next entry's checkbox).
    page.keyboard.press("Space")
    expect(item(page, "Edit")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("menu")).to_have_count(0)
    expect(page.get_by_role("checkbox", name=f"Select {PREFERENCES}")).to_be_focused()
    page.keyboard.press("Shift+Tab")
    expect(actions).to_be_focused()

    # Up opens it on its last item. One menu at a time: another entry's Actions moves it.
    page.keyboard.press("ArrowUp")
    expect(item(page, "Delete")).to_be_focused()
    other = page.get_by_role("button", name=f"Actions for {PREFERENCES}")
    other.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("menu")).to_have_count(1)
    expect(item(page, "Edit", PREFERENCES)).to_be_focused()
    expect(actions).to_have_attribute("aria-expanded", "false")
    # A click elsewhere closes it, leaving the focus where it is.
    page.locator("h1").click()
    expect(page.get_by_role("menu")).to_have_count(0)
    expect(other).to_have_attribute("aria-expanded", "false")


def test_each_action_is_chosen_from_the_menu_by_keyboard(page: Page):
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner")
    actions = page.get_by_role("button", name=f"Actions for {TRIP}")
    entries = page.locator("#memory-content .entry")

    # Edit: the editor in the entry's place; Escape puts the entry back, focus on Actions.
    actions.focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    text = page.get_by_role("textbox", name="Text")
    expect(text).to_be_focused()
    page.keyboard.press("Escape")
    expect(text).to_have_count(0)
    expect(actions).to_be_focused()
    expect(actions).to_have_attribute("aria-expanded", "false")

    # Move or copy: its panel in the entry's place; Escape, back on Actions.
    page.keyboard.press("Enter")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Space")
    expect(page.get_by_role("heading", name="Move or copy entry 2")).to_be_visible()
    page.keyboard.press("Escape")
    expect(actions).to_be_focused()
    expect(page.get_by_role("menu")).to_have_count(0)

    # Delete: the entry goes, the notice with Undo takes the focus.
    page.keyboard.press("ArrowUp")
    expect(item(page, "Delete")).to_be_focused()
    page.keyboard.press("Enter")
    expect(entries).to_have_count(1)
    notice = page.locator(".change-notice")
    expect(notice).to_be_focused()
    expect(notice).to_contain_text("Deleted “Upcoming trip”.")
    page.get_by_role("button", name="Undo").focus()
    page.keyboard.press("Enter")
    expect(entries).to_have_count(2)
    # The entries swapped back in are menu buttons again.
    expect(actions).to_have_attribute("aria-haspopup", "menu")
