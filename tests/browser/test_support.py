"""carol clears alice's travel-planner memory with a reason and a ticket; alice sees it gone
and sees the activity entry."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import check_accessibility, sign_in_as

pytestmark = pytest.mark.browser


@pytest.fixture
def portal_coreapi(fresh_coreapi):
    return fresh_coreapi  # this test clears memory


def test_carol_clears_alices_travel_planner_on_request(new_page):
    carol = new_page()
    sign_in_as(carol, "Carol Support")
    carol.get_by_role("link", name="Support").click()
    carol.get_by_label("User principal name").fill("alice@contoso.com")
    carol.get_by_role("button", name="Look up").click()
    expect(carol.get_by_role("heading", name="Memory of alice@contoso.com")).to_be_visible()
    expect(carol.get_by_role("row", name="Travel Planner")).to_contain_text("Yes")

    clear = carol.locator("form", has=carol.get_by_role("button", name="Clear the chosen memory"))
    clear.get_by_label("Reason", exact=True).fill("Privacy request from the user")
    clear.get_by_label("Ticket reference").fill("PRIV-2041")
    clear.get_by_role("checkbox", name="Travel Planner").check()
    clear.get_by_label("Type alice@contoso.com to confirm").fill("alice@contoso.com")
    clear.get_by_role("button", name="Clear the chosen memory").click()
    expect(carol.locator(".results")).to_contain_text("Travel Planner: cleared")
    check_accessibility(carol, "support: cleared on the user's behalf")

    alice = new_page()
    sign_in_as(alice, "Alice Example")
    expect(alice.locator("#card-agent-travel-planner")).to_contain_text("Nothing remembered yet.")
    expect(alice.locator("#card-agent-benefits-assistant .card-stats")).to_contain_text("Entries2")
    alice.get_by_role("link", name="Activity").click()
    row = alice.get_by_role("row", name="Cleared")
    expect(row).to_contain_text("Support: carol@contoso.com")
    expect(row).to_contain_text("travel-planner")
    expect(row).to_contain_text("Privacy request from the user · PRIV-2041")
    check_accessibility(alice, "activity with a support action")
