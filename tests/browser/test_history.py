"""alice deletes an entry, an agent appends meanwhile, and alice finds the memory's History,
sees her delete there and restores the version before it: the entry is back and the
agent's entry is kept (read back from the CoreAPI emulator)."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import check_accessibility, entry_action, sign_in_as
from tests.integration.test_changes import agent  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.changes_memory]

TRIP = "entry 2: Upcoming trip"


def test_alice_finds_the_history_and_restores_a_version(page: Page, agent):  # noqa: F811
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner")
    entry_action(page, "Delete", TRIP).click()
    expect(page.locator("#memory-content .entry")).to_have_count(1)
    assert "Trip to London" not in agent.text("travel-planner")
    agent.append("- Books trains for trips under 4 hours.", "travel-planner")

    page.get_by_role("button", name="History", exact=True).click()
    expect(page.get_by_role("heading", name=re.compile("^History of"))).to_be_visible()
    mine = page.locator(".history-line", has_text="Deleted an entry")
    expect(mine).to_contain_text("You")
    mine.get_by_text("What changed").click()
    expect(mine.locator(".diff-removed", has_text="Trip to London")).to_be_visible()
    check_accessibility(page, "a memory's history")

    mine.get_by_role("button", name="Restore this version").click()

    expect(page.locator("#toasts")).to_contain_text("Restored")
    restored = agent.text("travel-planner")
    assert "Trip to London" in restored
    assert restored.rstrip().endswith("- Books trains for trips under 4 hours.")
