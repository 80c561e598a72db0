"""An item's History on the generic source pages in Chromium (issue 29, item 3), against the
real devstack with a freshly seeded legacy store emulator: alice edits a legacy file, reads
the change on its History and restores the earlier version; she deletes it, finds it again
under "Deleted by you" on its store's page and brings it back."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import check_accessibility, sign_in_as
from tests.browser.test_legacy import legacy_on  # noqa: F401 (the fixture)

pytestmark = pytest.mark.browser

TRAVEL = "main.agents.travel_planner_memory"
PROFILE = "/memories/profile.md"


def test_alice_restores_an_edit_then_brings_a_deleted_file_back(legacy_on: str, page: Page) -> None:  # noqa: F811
    sign_in_as(
        page, "Alice Example", then=f"/memory/sources/legacy/item?target={TRAVEL}&item={PROFILE}"
    )
    page.get_by_role("button", name="Edit the whole file").click()
    page.get_by_label("Text").fill("- Time zone: Central European Time.")
    page.get_by_role("button", name="Save").click()

    page.goto(f"/memory/sources/legacy/item?target={TRAVEL}&item={PROFILE}")
    page.get_by_role("button", name="History").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"History of {PROFILE}")
    history = page.locator("#history")
    expect(history).to_contain_text("You · Edited")
    history.get_by_text("What changed").click()
    expect(history.locator(".diff")).to_contain_text("Central European Time")
    check_accessibility(page, "a legacy file's History")
    history.get_by_role("button", name="Restore this version").click()
    expect(page.locator("#history")).to_contain_text("You · Restored an earlier version")

    page.goto(f"/memory/sources/legacy/item?target={TRAVEL}&item={PROFILE}")
    expect(page.locator(".markdown-body")).to_contain_text("Pacific Time")
    page.get_by_role("button", name="Delete this file").click()
    deleted = page.locator(".deleted-items")
    expect(deleted).to_contain_text("Deleted by you in the last 30 days")
    check_accessibility(page, "a legacy store with a deleted file")
    deleted.get_by_role("link", name=PROFILE).click()
    expect(page.locator("#history")).to_contain_text("You deleted this file")
    check_accessibility(page, "a deleted legacy file's History")
    page.locator("#history").get_by_role("button", name="Restore this version").first.click()

    expect(page.locator("#history")).not_to_contain_text("You deleted this file")
    expect(page.locator("#history")).to_contain_text("You · Restored an earlier version")
    page.goto(f"/memory/sources/legacy/item?target={TRAVEL}&item={PROFILE}")
    expect(page.locator(".markdown-body")).to_contain_text("Pacific Time")
