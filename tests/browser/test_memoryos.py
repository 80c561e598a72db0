"""MemoryOS (seed 002) in Chromium, registered by the default PORTAL_MEMORY_SOURCES with its
emulator beside the real devstack: alice asks what Travel Planner is told about her, sees
the exact context, reports one memory as wrong, and the feedback reaches the emulator with
her correction (read back through its devstack-only feedback route, S16)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from devstack.serve import RunningServer
from memory_ui.sources.memoryos.adapter import NO_LIST
from tests.browser.conftest import check_accessibility, sign_in_as
from tests.devstack.memoryos_api import ALICE, Api

pytestmark = pytest.mark.browser

QUESTION = "Which seat does Alice prefer?"
CORRECTION = "I prefer window seats on every flight now."


@pytest.fixture
def memoryos_portal(live_portal: str, settings, fresh_memoryos: RunningServer) -> str:
    settings.MEMORYOS_BASE_URL = fresh_memoryos.url  # the default sources name MemoryOS
    return live_portal


def test_alice_sees_what_travel_planner_is_told_and_reports_a_memory_as_wrong(
    memoryos_portal: str, page: Page, fresh_memoryos: RunningServer
) -> None:
    emulator = Api(fresh_memoryos.url)
    sign_in_as(page, "Alice Example")
    section = page.locator("#memoryos-stores")
    section.scroll_into_view_if_needed()
    expect(section).to_contain_text(NO_LIST)
    section.get_by_role("link", name="What Travel Planner is told about you").click()

    expect(page.get_by_role("heading", level=1)).to_have_text("What an agent is told about you")
    expect(page.get_by_label("Agent")).to_have_value("travel-planner")
    check_accessibility(page, "what an agent is told: the form")
    page.get_by_label("Question").fill(QUESTION)
    page.get_by_role("button", name="Show what it is told").click()

    expect(page.get_by_role("heading", level=1)).to_have_text(
        "What Travel Planner is told about you"
    )
    expect(page.get_by_role("heading", level=2, name="For this question")).to_have_text(
        "For this question, the top 10 memories"
    )
    served = emulator.ok(external_user_id=ALICE, query=QUESTION, agent_id="travel-planner")
    assert page.locator(".told-context").text_content() == served["system_prompt_addition"]
    expect(page.locator(".told-clarification")).to_contain_text(
        "An agent will ask you about this in a conversation"
    )
    first = page.locator(".told-items > li").first
    expect(first.locator(".item-text")).to_have_text(served["data"][0]["content"])
    check_accessibility(page, "what Travel Planner is told")

    first.get_by_text("This is wrong").click()
    first.get_by_label("What is true").fill(CORRECTION)
    first.get_by_role("button", name="Send for correction").click()

    expect(page.get_by_role("heading", level=1)).to_have_text("Sent for correction")
    expect(page.locator("main")).to_contain_text(CORRECTION)
    check_accessibility(page, "a memory sent for correction")
    (arrived,) = emulator.received(external_user_id=ALICE)
    assert (arrived["outcome"], arrived["correction"]) == ("user_corrected", CORRECTION)
    assert arrived["used_memory_ids"] == [served["data"][0]["id"]]
    assert arrived["correction_job_id"]
