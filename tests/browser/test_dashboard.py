"""alice signs in through the IdP picker in Chromium and sees all three agents' memory."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import sign_in_as

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
