"""alice signs in through the IdP picker in Chromium and sees all three agents' memory."""

import re
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import pytest
from django.core.cache import cache
from playwright.sync_api import Locator, Page, Route, expect

from devstack.serve import RunningServer
from memory_ui.sources.legacy import operations as legacy_ops
from tests.browser.conftest import check_accessibility, expect_statuses, sign_in_as
from tests.integration.conftest import _reset_portal_caches

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


def test_a_cold_dashboard_paints_first_and_its_agents_section_fetches_itself(page: Page):
    # Issue 31, item 3: the first paint after sign-in waited for the agent list.
    sign_in_as(page, "Alice Example")  # the first page runs portal.js, which sets its cookie
    cache.clear()  # the agent list not cached, as right after another sign-in
    fragments: list[str] = []  # what the page's script fetched of the dashboard itself
    page.on("request", lambda r: r.headers.get("hx-request") and fragments.append(r.url))
    page.goto("/")
    # The section replaces itself when its fetch lands: wait for that before scrolling to
    # it (scrolling the placeholder races the swap), then the cards load as they show.
    expect(page.locator(".agent-count")).to_have_text("3 agents")
    expect(page.locator("#agents")).not_to_have_attribute("aria-busy", "true")
    page.locator("#agents").scroll_into_view_if_needed()
    expect(page.locator("#card-agent-travel-planner")).to_have_attribute("aria-busy", "false")
    expect(page.locator("#card-agent-travel-planner .card-stats")).to_contain_text("Entries2")
    assert [url for url in fragments if urlsplit(url).path == "/"] == [page.url]


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


def test_the_phone_menu_works_without_javascript(new_page: Callable[..., Page]):
    page = new_page(java_script_enabled=False, viewport={"width": 390, "height": 800})
    sign_in_as(page, "Alice Example")
    sign_out = page.get_by_role("button", name="Sign out")
    expect(sign_out).to_be_hidden()
    page.get_by_text("Menu", exact=True).click()
    expect(sign_out).to_be_visible()
    page.get_by_role("link", name="Activity").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(re.compile("activity", re.I))


@pytest.fixture
def legacy_on(live_portal: str, settings, legacy: RunningServer) -> Iterator[str]:
    """The dashboard with its legacy section (the session's store emulator: read only)."""
    settings.LEGACY_STORES_BASE_URL = legacy.url
    legacy_ops.reset_caches()
    yield live_portal
    legacy_ops.reset_caches()


def held(page: Page, pattern: str) -> list[Route]:
    """Requests to URLs matching `pattern` wait, unanswered, until the test lets each go on."""
    routes: list[Route] = []
    page.route(re.compile(pattern), lambda route: routes.append(route))
    return routes


def wait_for(page: Page, routes: list[Route]) -> Route:
    """The first request `held` keeps, once the page has sent it."""
    for _ in range(300):
        if routes:
            return routes[0]
        page.wait_for_timeout(50)
    raise AssertionError("the page never sent the request")


def tab_to(page: Page, target: Locator, most: int = 40) -> None:
    """Tab from where focus is until `target` has it."""
    for _ in range(most):
        page.keyboard.press("Tab")
        if target.evaluate("element => element === document.activeElement"):
            return
    raise AssertionError(f"{most} Tabs never reached {target}")


def test_tabbing_into_agent_cards_while_they_load_keeps_focus_there(legacy_on: str, page: Page):
    # Tab scrolls the agent cards into view, which starts loading them; the answer replaces
    # the cards the user is tabbing through. It once dropped focus onto the page, and the
    # legacy section loading next took it to its heading: the next Tab skipped the cards.
    page.set_viewport_size({"width": 1280, "height": 900})
    cards, stores = held(page, r"/cards/agents\?"), held(page, r"/memory/sources/legacy/$")
    sign_in_as(page, "Alice Example")
    travel = page.locator("#card-agent-travel-planner")
    title = travel.get_by_role("link", name="Travel Planner", exact=True)
    tab_to(page, title)
    expect(travel).to_have_attribute("aria-busy", "true")

    wait_for(page, cards).continue_()
    expect(travel).to_have_attribute("aria-busy", "false")
    wait_for(page, stores).continue_()
    expect(page.locator("#legacy-stores")).to_have_attribute("aria-busy", "false")
    expect(title).to_be_focused()
    page.keyboard.press("Tab")
    expect(travel.get_by_role("link", name="Open", exact=True)).to_be_focused()


def test_focus_stays_with_agent_cards_that_fail_to_load(legacy_on: str, page: Page, settings):
    # The batch answers an error in place of the cards the user is tabbing through: focus
    # goes to what replaced them, not to the legacy section that loads after it.
    page.set_viewport_size({"width": 1280, "height": 900})
    cards, stores = held(page, r"/cards/agents\?"), held(page, r"/memory/sources/legacy/$")
    sign_in_as(page, "Alice Example")
    tab_to(page, page.locator("#card-agent-travel-planner").get_by_role("link"))
    settings.COREAPI_BASE_URL = "https://127.0.0.1:9"  # nothing listens: the agents fail
    _reset_portal_caches()
    expect_statuses(page, 502, 503, 504)

    wait_for(page, cards).continue_()
    failed = page.locator(".card-batch")
    expect(failed).to_contain_text("We couldn't load these cards.")
    wait_for(page, stores).continue_()
    expect(page.locator("#legacy-stores")).to_have_attribute("aria-busy", "false")
    expect(failed).to_be_focused()
    page.keyboard.press("Tab")
    expect(failed.get_by_role("button", name="Reload")).to_be_focused()
