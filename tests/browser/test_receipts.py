"""carol clears alice's travel-planner memory on a deletion request, opens its signed
erasure receipt (a printable page under the strict CSP) and downloads it, and
`manage.py verify_receipt` accepts the file; alice finds the same receipt on her Activity."""

from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from tests.browser.conftest import check_accessibility, sign_in_as

pytestmark = pytest.mark.browser


@pytest.fixture
def portal_coreapi(fresh_coreapi):
    return fresh_coreapi  # this test clears memory


def test_carol_downloads_a_receipt_that_verify_receipt_accepts(new_page, tmp_path):
    carol = new_page()
    sign_in_as(carol, "Carol Support")
    carol.get_by_role("link", name="Support").click()
    carol.get_by_label("User principal name").fill("alice@contoso.com")
    carol.get_by_role("button", name="Look up").click()
    start = carol.locator("form", has=carol.get_by_role("button", name="Start"))
    start.get_by_label("Reason", exact=True).fill("Privacy request from the user")
    start.get_by_label("Ticket reference").fill("PRIV-2042")
    start.get_by_role("checkbox", name="Travel Planner").check()
    start.get_by_role("button", name="Start").click()
    with carol.expect_download():
        carol.get_by_role("button", name="Download the export (.zip)").click()
    expect(carol.get_by_role("row", name="Travel Planner")).to_contain_text("yes, as it is now")
    carol.get_by_label("Type alice@contoso.com to confirm").fill("alice@contoso.com")
    carol.get_by_role("button", name="Clear the exported memories").click()
    expect(carol.get_by_role("row", name="Travel Planner")).to_contain_text("cleared")

    carol.get_by_role("link", name="The signed erasure receipt").click()
    expect(carol.get_by_role("heading", name="Erasure receipt: erased")).to_be_visible()
    expect(carol.get_by_role("row", name="Travel Planner")).to_contain_text("erased")
    check_accessibility(carol, "erasure receipt")
    with carol.expect_download() as download:
        carol.get_by_role("button", name="Download the signed receipt (JSON)").click()
    receipt = tmp_path / "receipt.json"
    download.value.save_as(receipt)
    out = StringIO()
    call_command("verify_receipt", str(receipt), stdout=out)
    assert "valid, signed by ed25519:" in out.getvalue()
    assert "deletion-request: erased" in out.getvalue()

    alice = new_page()
    sign_in_as(alice, "Alice Example", then="/activity")
    alice.get_by_role("link", name="Deletion request · ticket PRIV-2042").click()
    expect(alice.get_by_role("heading", name="Erasure receipt: erased")).to_be_visible()
    expect(alice.get_by_role("row", name="Travel Planner")).to_contain_text("erased")
