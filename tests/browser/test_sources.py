"""The generic source pages in Chromium, for a source registered through settings alone
(tests/fake_source: a team notebook kept in this process, beside the real devstack): its
dashboard section loads when scrolled to, its target's page works by keyboard only (Tab
reaches every action, a delete's Undo notice takes the focus), and every page passes axe
and reflows on a phone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import (
    check_accessibility,
    expect_statuses,
    sideways_overflow,
    sign_in_as,
)
from tests.fake_source import NOTEBOOK, TITLE
from tests.views.test_fake_source import ALICE, PAGE, SOURCES

pytestmark = pytest.mark.browser

# A note holding one long word (a link): what a page must wrap, not scroll sideways for.
LINK = "https://wiki.contoso.com/teams/people-operations/onboarding/checklists/alice-example-2026"


@pytest.fixture
def notebook(live_portal: str, settings) -> Iterator[str]:
    settings.PORTAL_MEMORY_SOURCES = SOURCES
    settings.NOTEBOOK_WITHOUT = []
    NOTEBOOK.pages = {
        ALICE: {
            PAGE: {
                "coffee": "Alice takes her coffee black.",
                "desk": "Desk 4B",
                "onboarding": f"Her checklist: {LINK}",
            }
        }
    }
    NOTEBOOK.down = False
    yield live_portal
    NOTEBOOK.pages = {}


def tab_to(page: Page, target: Locator, most: int = 40) -> None:
    """Tab from where focus is until `target` has it, and it shows a solid focus ring."""
    for _ in range(most):
        page.keyboard.press("Tab")
        if target.evaluate("element => element === document.activeElement"):
            ring = target.evaluate(
                "e => [getComputedStyle(e).outlineStyle,"
                " parseFloat(getComputedStyle(e).outlineWidth)]"
            )
            assert ring[0] == "solid" and ring[1] >= 2, ring
            return
    raise AssertionError(f"{most} Tabs never reached {target}")


def test_from_the_dashboard_to_a_notebook_page_and_back_by_keyboard(
    notebook: str, page: Page
) -> None:
    sign_in_as(page, "Alice Example")
    section = page.locator("#notebook-stores")
    section.scroll_into_view_if_needed()
    expect(section).to_have_attribute("aria-busy", "false")
    expect(section.get_by_role("heading", level=2)).to_have_text(TITLE)
    expect(section.locator(".source-card")).to_have_count(1)
    expect(section.locator(".card-stats")).to_contain_text("Notes3")
    page.locator("#agents").scroll_into_view_if_needed()
    expect(page.locator(".memory-card.is-loading")).to_have_count(0)
    check_accessibility(page, "dashboard with the team notebook")

    section.get_by_role("link", name="Notebook page weekly", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Notebook page weekly")
    items = page.locator(".source-items")
    expect(items).to_contain_text("Alice takes her coffee black.")
    check_accessibility(page, "a notebook page")
    page.set_viewport_size({"width": 390, "height": 800})
    assert sideways_overflow(page) <= 0
    page.set_viewport_size({"width": 1280, "height": 720})

    # Keyboard only, from the top of the page: every action (each a button to a screen
    # reader, link or not) in reading order.
    page.locator("body").focus()
    for name in (
        "Download as .md",
        "Clear this memory",
        "Edit coffee",
        "Delete coffee",
        "Edit desk",
        "Delete desk",
    ):
        tab_to(page, page.get_by_role("button", name=name, exact=True))
    page.keyboard.press("Enter")

    notice = page.locator(".undo-notice")
    expect(notice).to_be_focused()
    expect(notice).to_contain_text("Deleted desk.")
    expect(items).not_to_contain_text("Desk 4B")
    check_accessibility(page, "a note deleted, with Undo")
    tab_to(page, notice.get_by_role("button", name="Undo"))
    page.keyboard.press("Enter")
    expect(page.locator("#toasts")).to_contain_text("Restored desk.")
    expect(items).to_contain_text("Desk 4B")
    assert NOTEBOOK.pages[ALICE][PAGE]["desk"] == "Desk 4B"

    page.locator("body").focus()
    tab_to(page, page.get_by_role("button", name="Edit desk", exact=True))
    page.keyboard.press("Enter")
    field = page.get_by_label("Text")
    expect(field).to_be_focused()  # the page starts in its field, as the legacy edit does
    expect(field).to_have_value("Desk 4B")
    check_accessibility(page, "a note's edit page")
    page.keyboard.press("Control+End")
    page.keyboard.type(", by the window")
    tab_to(page, page.get_by_role("button", name="Save"))
    page.keyboard.press("Enter")
    expect(page.locator("#toasts")).to_contain_text("Saved desk.")
    expect(items).to_contain_text("Desk 4B, by the window")

    page.locator("body").focus()
    tab_to(page, page.get_by_role("button", name="Clear this memory", exact=True))
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_have_text("Clear Notebook page weekly")
    check_accessibility(page, "a notebook page's clear confirmation")
    page.get_by_label("Type clear to confirm").focus()
    page.keyboard.type("clear")
    page.keyboard.press("Enter")
    result = page.get_by_role("heading", name="3 of 3 deleted")
    expect(result).to_be_focused()
    check_accessibility(page, "a notebook page cleared")
    assert NOTEBOOK.pages[ALICE][PAGE] == {}


# A page and a note named by one long word each, as a system's keys may be.
LONG_PAGE = "people-operations-onboarding-checklist-for-the-travel-team-2026-q4"
LONG_NOTE = "first-week-equipment-and-building-access-requests-alice-example"


def test_long_names_wrap_and_refusals_take_the_focus(notebook: str, page: Page) -> None:
    NOTEBOOK.pages[ALICE][LONG_PAGE] = {LONG_NOTE: f"See {LINK}"}
    sign_in_as(page, "Alice Example")
    section = page.locator("#notebook-stores")
    section.scroll_into_view_if_needed()
    expect(section.locator(".source-card")).to_have_count(2)
    page.set_viewport_size({"width": 320, "height": 640})
    assert sideways_overflow(page) <= 0

    page.goto(f"/memory/sources/notebook/target?target={LONG_PAGE}")
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Notebook page {LONG_PAGE}")
    check_accessibility(page, "a notebook page with long names")
    page.get_by_role("button", name=f"Edit {LONG_NOTE}", exact=True).click()
    expect(page.get_by_label("Text")).to_be_focused()
    check_accessibility(page, "a long-named note's edit page")
    # Its breadcrumb leads back to the page the note is on.
    crumbs = page.get_by_role("navigation", name="breadcrumb")
    crumbs.get_by_role("link", name=f"Notebook page {LONG_PAGE}").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Notebook page {LONG_PAGE}")

    page.goto(f"/memory/sources/notebook/clear?target={LONG_PAGE}")
    check_accessibility(page, "a long-named page's clear confirmation")
    expect_statuses(page, 400, 503)
    phrase = page.get_by_label("Type clear to confirm")
    phrase.fill("clean")
    page.get_by_role("button", name="Delete everything").click()
    expect(phrase).to_have_attribute("aria-invalid", "true")
    expect(phrase).to_be_focused()
    check_accessibility(page, "a clear refused")
    assert NOTEBOOK.pages[ALICE][LONG_PAGE] == {LONG_NOTE: f"See {LINK}"}

    NOTEBOOK.down = True
    page.goto(f"/memory/sources/notebook/target?target={PAGE}")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("The team notebook is unavailable")
    expect(alert).to_be_focused()
    check_accessibility(page, "the notebook unreachable")
