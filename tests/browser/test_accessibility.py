"""Every page state a person reaches, checked with axe-core (WCAG 2.2 AA and best practice)
in light and dark, at 1280 and 390 px wide, and for sideways scrolling at 390 and 320 px
(`check_accessibility`); plus the keyboard: focus after each swap, Escape, Space on
link-buttons, toasts that go away.

alice walks her own memory (an emulator of her own: the walk changes memory); carol walks
the support pages. Refused forms answer 400 and are expected (`expect_statuses`).
"""

from __future__ import annotations

import re

import pytest
from django.template.loader import render_to_string
from playwright.sync_api import Page, expect

from tests.browser.conftest import (
    NARROWEST,
    check_accessibility,
    entry_action,
    expect_statuses,
    sideways_overflow,
    sign_in_as,
)

pytestmark = [pytest.mark.browser, pytest.mark.changes_memory]


def dashboard_loaded(page: Page) -> None:
    # Agent cards load a batch at a time as they come into view: bring them into view.
    page.locator("#agents").scroll_into_view_if_needed()
    expect(page.locator(".memory-card.is-loading")).to_have_count(0)


def test_alice_reads_her_memory(page: Page):
    sign_in_as(page, "Alice Example")
    dashboard_loaded(page)
    check_accessibility(page, "dashboard")

    page.goto("/memory/user")
    check_accessibility(page, "shared memory")
    page.get_by_role("button", name="Markdown", exact=True).click()
    expect(page.locator("pre.raw-markdown")).to_be_visible()
    check_accessibility(page, "shared memory as markdown")

    page.goto("/memory/agents/travel-planner")
    check_accessibility(page, "an agent's memory")
    page.goto("/memory/agents/travel-planner/combined")
    check_accessibility(page, "what an agent sees")

    page.goto("/memory/agents/it-helpdesk")
    items = page.locator("details.list-items")
    if items.count():
        items.locator("summary").click()
    check_accessibility(page, "a memory without dated entries")

    page.goto("/activity")
    check_accessibility(page, "activity")


def test_alice_changes_her_memory(page: Page):
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner")

    page.get_by_role("button", name="Add a note").click()
    expect(page.get_by_role("textbox", name="Note")).to_be_focused()
    check_accessibility(page, "add a note")
    expect_statuses(page, 400)
    page.get_by_role("button", name="Add note").click()
    expect(page.locator("#change-panel .field-error")).to_be_visible()
    expect(page.get_by_role("heading", name="Add a note to")).to_be_visible()
    check_accessibility(page, "an empty note refused")
    page.keyboard.press("Escape")
    expect(page.locator("#change-panel")).to_be_empty()
    expect(page.get_by_role("button", name="Add a note")).to_be_focused()

    delete = entry_action(page, "Delete", "entry 2: Upcoming trip")
    check_accessibility(page, "an entry's Actions menu")
    delete.click()
    notice = page.locator(".change-notice")
    expect(notice).to_be_focused()
    expect(notice).to_contain_text("Deleted “Upcoming trip”.")
    check_accessibility(page, "deleted, with Undo")
    page.get_by_role("button", name="Undo").click()
    expect(page.locator("#memory-content .entry")).to_have_count(2)
    expect(page.locator("#memory-content")).to_be_focused()
    check_accessibility(page, "after Undo")

    page.get_by_role("button", name="Clear…").click()
    heading = page.get_by_role("heading", name="Clear Travel Planner's memory?")
    expect(heading).to_be_focused()
    check_accessibility(page, "clear confirmation")
    page.keyboard.press("Escape")
    expect(heading).to_have_count(0)
    expect(page.get_by_role("button", name="Clear…")).to_be_focused()
    page.get_by_role("button", name="Clear…").click()
    page.get_by_role("button", name="Clear Travel Planner's memory").click()
    expect(page.locator("#memory-content")).to_be_focused()
    expect(page.locator("#memory-content")).to_contain_text("remembers nothing")
    check_accessibility(page, "an empty memory")
    # Nothing to clear or download in an empty memory; adding and importing still apply.
    expect(page.get_by_role("button", name="Clear…")).to_have_count(0)
    expect(page.get_by_role("button", name="Download (.md)")).to_have_count(0)
    expect(page.get_by_role("button", name="Add a note")).to_be_visible()

    page.goto("/memory/edit?scope=user")
    expect(page.locator("#edit-preview")).to_contain_text("Prefers concise answers")
    check_accessibility(page, "edit")


def test_alice_imports_and_clears_everything(page: Page):
    sign_in_as(page, "Alice Example", "/import")
    check_accessibility(page, "import home")

    page.goto("/memory/user/import")
    check_accessibility(page, "import form")
    page.get_by_label("Paste markdown").fill("# Tea\n\n- Likes **green** tea\n- Dislikes coffee")
    page.get_by_role("button", name="Preview import").click()
    heading = page.get_by_role("heading", name="Check before importing")
    expect(heading).to_be_focused()
    for summary in page.locator(".import-preview details:not([open]) summary").all():
        summary.click()
    expect(page.locator(".diff-added").first).to_be_visible()
    check_accessibility(page, "import preview with diffs")

    page.goto("/memory/clear-everything")
    check_accessibility(page, "clear everything")
    expect_statuses(page, 400)
    page.get_by_label("Type clear everything to confirm").fill("clear some things")
    page.get_by_role("button", name="Clear everything").click()
    phrase = page.get_by_label("Type clear everything to confirm")
    expect(phrase).to_have_attribute("aria-invalid", "true")
    expect(phrase).to_be_focused()
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "Clear everything agents remember about you"
    )
    check_accessibility(page, "clear everything, wrong phrase")
    phrase.fill("clear everything")
    page.get_by_role("button", name="Clear everything").click()
    expect(page.get_by_role("heading", name="Everything is cleared")).to_be_focused()
    check_accessibility(page, "everything cleared")

    page.goto("/")
    dashboard_loaded(page)
    check_accessibility(page, "dashboard with nothing remembered")


def test_error_pages(page: Page, live_portal: str):
    sign_in_as(page, "Alice Example")
    expect_statuses(page, 400, 403, 404)
    page.goto("/memory/agents/no-such-agent")
    check_accessibility(page, "unknown agent")
    page.goto("/support/")
    expect(page.get_by_role("heading", name="You can't open this page")).to_be_visible()
    check_accessibility(page, "403")
    page.goto("/nothing-here")
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    check_accessibility(page, "404")

    # 400: a clear-everything retry naming a memory that isn't hers.
    page.goto("/memory/clear-everything")
    page.evaluate(
        """() => {
          const form = document.querySelector("form[action='/memory/clear-everything']");
          form.removeAttribute("hx-post");
          htmx.process(form);
          const scope = document.createElement("input");
          Object.assign(scope, {type: "hidden", name: "scopes", value: "agent:someone-else"});
          form.append(scope);
          form.querySelector("input[name=phrase]").value = "clear everything";
          HTMLFormElement.prototype.submit.call(form);
        }"""
    )
    expect(
        page.get_by_role("heading", name="The portal could not accept that request")
    ).to_be_visible()
    check_accessibility(page, "400")

    # 500 has no request behind it (Django renders it bare): its HTML as the server sends it.
    page.set_content(render_to_string("500.html"))
    page.wait_for_load_state()
    check_accessibility(page, "500")


def test_carol_walks_the_support_pages(page: Page):
    sign_in_as(page, "Carol Support")
    dashboard_loaded(page)
    check_accessibility(page, "carol's dashboard")
    page.get_by_role("link", name="Support").click()
    check_accessibility(page, "support home")
    expect_statuses(page, 400)
    page.get_by_role("button", name="Look up").click()
    expect(page.locator("#upn-error")).to_be_visible()
    check_accessibility(page, "look-up refused")

    page.get_by_label("User principal name").fill("alice@contoso.com")
    page.get_by_role("button", name="Look up").click()
    expect(page.get_by_role("heading", name="Memory of alice@contoso.com")).to_be_visible()
    check_accessibility(page, "support: a user's memory")

    row = page.get_by_role("row", name="Travel Planner")
    row.get_by_role("textbox").fill("Checking a reported problem")
    row.get_by_role("button", name="Reveal").click()
    expect(page.locator("pre.raw-markdown")).to_contain_text("aisle seats")
    check_accessibility(page, "support: revealed memory")

    page.goto("/support/audit")
    check_accessibility(page, "audit trail")
    page.get_by_label("From").fill("2026-05-02")
    page.get_by_label("To", exact=True).fill("2026-05-01")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#audit-date_to-error")).to_have_text(
        "The end date is before the start date."
    )
    check_accessibility(page, "audit trail: a wrong filter")
    page.goto("/activity")
    check_accessibility(page, "carol's activity")


def test_nothing_scrolls_sideways_at_320px(page: Page):
    """The narrowest phone: every signed-in page reflows (WCAG 1.4.10)."""
    sign_in_as(page, "Alice Example")
    page.set_viewport_size({"width": NARROWEST, "height": 640})
    for url in [
        "/",
        "/memory/user",
        "/memory/user?view=raw",
        "/memory/agents/travel-planner",
        "/memory/edit?scope=agent&agent=travel-planner",
        "/memory/user/import",
        "/import",
        "/memory/clear-everything",
        "/activity",
    ]:
        page.goto(url)
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        assert sideways_overflow(page) <= 0, url
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), url


def test_keyboard_buttons_and_toasts(page: Page):
    sign_in_as(page, "Alice Example", "/memory/agents/it-helpdesk")
    # Progress texts show only while their request runs. The panel must be open first: else
    # the check passes on nothing, and Escape comes before there is a panel to close.
    page.get_by_role("button", name="Add a note").click()
    expect(page.get_by_role("textbox", name="Note")).to_be_focused()
    expect(page.locator("#append-progress")).to_be_hidden()
    page.keyboard.press("Escape")
    expect(page.locator("#change-panel")).to_be_empty()
    # Space activates a link that looks like a button, as it does a button.
    page.get_by_role("button", name="Add a note").focus()
    page.keyboard.press("Space")
    expect(page.get_by_role("textbox", name="Note")).to_be_focused()
    page.keyboard.type("- Uses a standing desk.")
    page.get_by_role("button", name="Add note").click()
    toast = page.locator("#toasts .toast")
    expect(toast).to_have_count(1)
    expect(toast).to_contain_text("Added your note")
    # A success message goes away by itself; its close button works before that.
    expect(toast).to_have_count(0, timeout=15_000)

    page.get_by_role("button", name="Advanced: edit as markdown").press("Enter")
    expect(page).to_have_url(re.compile(r"/memory/edit"))
    expect(page.locator("#edit-progress")).to_be_hidden()
    # A link reached with Tab shows a solid ring, not Pico's faint halo.
    page.get_by_role("button", name="Preview", exact=True).focus()
    page.keyboard.press("Tab")
    cancel = page.get_by_role("button", name="Cancel")
    expect(cancel).to_be_focused()
    ring = cancel.evaluate(
        "e => [getComputedStyle(e).outlineStyle, parseFloat(getComputedStyle(e).outlineWidth)]"
    )
    assert ring[0] == "solid" and ring[1] >= 2

    page.goto("/import")
    expect(page.locator(".transfer-busy")).to_be_hidden()
