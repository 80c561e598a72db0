"""alice signs in through the IdP picker in Chromium and sees all three agents' memory."""

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import check_accessibility, sign_in_as

pytestmark = pytest.mark.browser


def test_alice_sees_every_agents_memory(page: Page):
    sign_in_as(page, "Alice Example")
    expect(page.get_by_role("heading", name="What agents remember about you")).to_be_visible()
    expect(page.get_by_role("banner")).to_contain_text("alice@contoso.com")

    # The cards in view load at once; the agents' batch loads when it comes into view.
    expect(page.locator("#card-user")).to_have_attribute("aria-busy", "false")
    page.locator("#agents").scroll_into_view_if_needed()
    for card, entries in [
        ("#card-user", "3"),
        ("#card-agent-benefits-assistant", "2"),
        ("#card-agent-it-helpdesk", "1"),
        ("#card-agent-travel-planner", "2"),
    ]:
        expect(page.locator(card)).to_have_attribute("aria-busy", "false")
        expect(page.locator(f"{card} .card-stats")).to_contain_text(f"Entries{entries}")

    for name, remembered in [
        ("Benefits Assistant", "PPO Plus"),
        ("IT Helpdesk", "Remove-VpnConnection"),
        ("Travel Planner", "aisle seats"),
    ]:
        page.get_by_role("link", name=name, exact=True).click()
        expect(page.locator(".markdown-body").first).to_be_visible()
        expect(page.locator("#memory-content")).to_contain_text(remembered)
        page.get_by_role("link", name="Your memory").first.click()
        expect(page).to_have_url(re.compile(r"/$"))


def test_finding_an_agent_updates_the_list_under_the_filter_not_the_filter(page: Page):
    sign_in_as(page, "Alice Example")
    agents = page.locator("#agents")
    agents.scroll_into_view_if_needed()
    # The filter is in the section it filters, under its heading.
    expect(agents.get_by_role("heading", name="Kept by each agent")).to_be_visible()
    find = agents.get_by_label("Find an agent")
    find.press_sequentially("travel")
    expect(page.locator(".agent-count")).to_have_text("1 of 3 agents match")
    expect(page.locator("#card-agent-travel-planner")).to_have_attribute("aria-busy", "false")
    expect(page.locator("#card-agent-it-helpdesk")).to_have_count(0)
    expect(find).to_be_focused()  # typing goes on in the same field
    expect(find).to_have_value("travel")
    expect(page).to_have_url(re.compile(r"\?q=travel"))


def test_raw_toggle_and_combined_view(page: Page):
    sign_in_as(page, "Alice Example")
    page.goto("/memory/agents/travel-planner")
    page.get_by_role("button", name="Markdown", exact=True).click()
    expect(page.locator("pre.raw-markdown")).to_contain_text(
        "## Added 2026-09-30T12:00:00Z — Trip preferences"
    )
    expect(page).to_have_url(re.compile(r"view=raw"))
    page.get_by_role("link", name="What it sees (shared + its own)").click()
    expect(page.locator("#memory-content")).to_contain_text("Prefers concise answers")
    expect(page.locator("#memory-content")).to_contain_text("aisle seats")


def test_keyboard_user_can_skip_to_content(page: Page):
    sign_in_as(page, "Alice Example")
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()


def test_the_header_keeps_who_and_sign_out_together_and_folds_on_a_phone(page: Page):
    sign_in_as(page, "Alice Example")
    name = page.locator(".who-name")
    sign_out = page.get_by_role("button", name="Sign out")
    # Wide: the name right beside "Sign out", the sections beside the brand.
    gap = sign_out.bounding_box()["x"] - (name.bounding_box()["x"] + name.bounding_box()["width"])
    assert 0 < gap < 40
    brand = page.locator(".brand").bounding_box()
    sections = page.locator(".nav-sections").bounding_box()
    assert sections["x"] - (brand["x"] + brand["width"]) < 40

    # A phone: everything but the brand behind "Menu"; Escape folds it again.
    page.set_viewport_size({"width": 390, "height": 800})
    expect(sign_out).to_be_hidden()
    menu = page.get_by_text("Menu", exact=True)
    menu.click()
    expect(sign_out).to_be_visible()
    page.keyboard.press("Escape")
    expect(sign_out).to_be_hidden()
    expect(menu).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("link", name="Search", exact=True)).to_be_visible()
    check_accessibility(page, "the header's menu open")


def test_the_phone_menu_works_without_javascript(browser: Browser, live_portal: str):
    context = browser.new_context(
        java_script_enabled=False,
        ignore_https_errors=True,
        base_url=live_portal,
        viewport={"width": 390, "height": 800},
    )
    try:
        page = context.new_page()
        sign_in_as(page, "Alice Example")
        sign_out = page.get_by_role("button", name="Sign out")
        expect(sign_out).to_be_hidden()
        page.get_by_text("Menu", exact=True).click()
        expect(sign_out).to_be_visible()
        page.get_by_role("link", name="Activity").click()
        expect(page.get_by_role("heading", level=1)).to_have_text(re.compile("activity", re.I))
    finally:
        context.close()
