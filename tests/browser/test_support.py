"""carol handles alice's deletion request for travel-planner: reason and ticket once, the
export downloaded, then the clear; alice sees it gone and finds it on her Activity page."""

import io
import json
import re
import zipfile
from urllib.parse import unquote

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import check_accessibility, sign_in_as

pytestmark = pytest.mark.browser


@pytest.fixture
def portal_coreapi(fresh_coreapi):
    return fresh_coreapi  # this test clears memory


def test_carol_handles_alices_deletion_request(new_page):
    carol = new_page()
    sign_in_as(carol, "Carol Support")
    # Every address carol's browser asks for (history, logs, Referer): never alice's UPN.
    addresses: list[str] = []
    carol.on("request", lambda request: addresses.append(request.url))
    carol.get_by_role("link", name="Support").click()
    carol.get_by_label("User principal name").fill("alice@contoso.com")
    carol.get_by_role("button", name="Look up").click()
    expect(carol.get_by_role("heading", name="Memory of alice@contoso.com")).to_be_visible()
    expect(carol.get_by_role("row", name="Travel Planner")).to_contain_text("Yes")

    start = carol.locator("form", has=carol.get_by_role("button", name="Start"))
    start.get_by_label("Reason", exact=True).fill("Privacy request from the user")
    start.get_by_label("Ticket reference").fill("PRIV-2041")
    # Nothing is chosen for her: "All memories" or the ones asked for, ticked on purpose.
    for box in start.get_by_role("checkbox").all():
        expect(box).not_to_be_checked()
    start.get_by_role("checkbox", name="All memories").uncheck()
    start.get_by_role("checkbox", name="Travel Planner").check()
    start.get_by_role("button", name="Start").click()
    expect(carol.get_by_role("heading", name="Deletion request PRIV-2041")).to_be_visible()
    expect(carol.locator(".request-summary")).to_contain_text("Only the ticked ones: 1 chosen")
    expect(carol.get_by_role("row", name="Travel Planner")).to_contain_text("not yet")
    check_accessibility(carol, "deletion request")

    with carol.expect_download() as download:
        carol.get_by_role("button", name="Download the export (.zip)").click()
    archive = zipfile.ZipFile(io.BytesIO(download.value.path().read_bytes()))
    assert [f["path"] for f in json.loads(archive.read("manifest.json"))["files"]] == [
        "agent-travel-planner.md"
    ]
    assert "aisle seats" in archive.read("agent-travel-planner.md").decode()
    # The page says the export was handed over as soon as the download began, no reload.
    expect(carol.get_by_role("row", name="Travel Planner")).to_contain_text("yes, as it is now")
    expect(carol.locator("#export-status")).to_have_text(re.compile(r"^Exported just now\."))
    check_accessibility(carol, "deletion request, exported")

    carol.get_by_label("Type alice@contoso.com to confirm").fill("alice@contoso.com")
    carol.get_by_role("button", name="Clear the exported memories").click()
    expect(carol.get_by_role("row", name="Travel Planner")).to_contain_text("cleared")
    expect(carol.locator(".request-summary").first).to_contain_text("PRIV-2041")
    check_accessibility(carol, "deletion request result")
    carol.get_by_role("link", name="Its audit rows").click()
    expect(carol.get_by_role("row", name="Cleared")).to_contain_text("Travel Planner")
    carol.get_by_label("Subject UPN").fill("alice@contoso.com")
    carol.get_by_role("button", name="Filter").click()
    expect(carol.get_by_label("Subject UPN")).to_have_value("alice@contoso.com")
    expect(carol.get_by_role("row", name="Cleared")).to_contain_text("Travel Planner")
    assert len(addresses) > 10
    assert not [a for a in addresses if "alice@contoso.com" in unquote(unquote(a)).casefold()]

    alice = new_page()
    sign_in_as(alice, "Alice Example")
    alice.locator("#agents").scroll_into_view_if_needed()  # agent cards load in view
    expect(alice.locator("#card-agent-travel-planner")).to_contain_text("Nothing remembered yet.")
    expect(alice.locator("#card-agent-benefits-assistant .card-stats")).to_contain_text("Entries2")
    alice.get_by_role("link", name="Activity").click()
    alice.get_by_label("Action").select_option(label="Cleared")
    alice.get_by_role("button", name="Filter").click()
    row = alice.get_by_role("row", name="Cleared")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Support: carol@contoso.com")
    expect(row).to_contain_text("Privacy request from the user · PRIV-2041")
    check_accessibility(alice, "activity with a support action")
    row.get_by_role("link", name="Travel Planner").click()
    expect(alice).to_have_url("/memory/agents/travel-planner")
