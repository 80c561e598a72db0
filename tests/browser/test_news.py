"""What's new in Chromium: alice opens Travel Planner, its agent adds two entries while she
is away (through CoreAPI, as an agent does), and she finds them on the dashboard, on What's
new and marked on the memory page, then marks them seen."""

from datetime import timedelta

import pytest
from django.db.models import F
from playwright.sync_api import Page, expect

from memory_ui.models import MemoryVisit
from tests.browser.conftest import check_accessibility, sign_in_as
from tests.integration.test_changes import agent  # noqa: F401 (a fixture)

pytestmark = pytest.mark.browser


@pytest.fixture
def portal_coreapi(fresh_coreapi):
    return fresh_coreapi


def test_alice_finds_what_is_new_since_her_last_visit(page: Page, agent):  # noqa: F811
    sign_in_as(page, "Alice Example")
    page.goto("/memory/agents/travel-planner")
    expect(page.locator(".entry-new")).to_have_count(0)
    # She comes back later: her visit was a while ago (entry times are whole seconds).
    assert MemoryVisit.objects.update(seen_at=F("seen_at") - timedelta(minutes=5)) == 1
    agent.append("- Booked the Eurostar, 14 December.", "travel-planner", "Train booked")
    agent.append("- Hotel: the Strand Palace.", "travel-planner", "Hotel booked")

    page.goto("/")
    page.locator("#agents").scroll_into_view_if_needed()  # cards load as they come into view
    expect(page.locator("#card-agent-travel-planner .new-badge")).to_have_text("2 new")

    page.get_by_role("link", name="What's new").click()
    rows = page.locator(".whats-new-entry")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("Hotel: the Strand Palace.")  # newest first
    expect(rows.nth(1)).to_contain_text("because: Train booked")
    check_accessibility(page, "what's new")

    rows.first.get_by_role("link", name="Travel Planner").click()
    expect(page.locator(".entry-new")).to_have_count(2)
    expect(page.locator("#entry-3")).to_be_in_viewport()
    expect(page.locator(".entry-new .new-badge").first).to_have_text("New")
    check_accessibility(page, "a memory with new entries")

    page.get_by_role("button", name="Mark as seen").click()
    expect(page.locator(".entry-new")).to_have_count(0)
    expect(page.locator("#toasts")).to_contain_text("Marked as seen.")
    page.get_by_role("link", name="What's new").click()
    expect(page.get_by_text("Nothing new since you last looked.")).to_be_visible()
    check_accessibility(page, "nothing new")
