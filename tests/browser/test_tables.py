"""Wide tables fit (issue 32, item 3): at 1280 px every column of Activity, the audit trail
and a deletion request's result tables is inside the window and inside its box (nothing
hidden behind a sideways scroll); at 390 px the rows stack, each with its outcome first."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from devstack.serve import RunningServer
from memory_ui.models import AuditEvent
from memory_ui.sources.legacy import operations as legacy_ops
from tests.browser.conftest import check_accessibility, sign_in_as

pytestmark = pytest.mark.browser

ALICE = "alice@contoso.com"
TRAVEL = "main.agents.travel_planner_memory"
WIDTHS = (1280, 390)

# Each cell of each table on the page whose right edge is past the window, or past the
# box the table scrolls in (a column scrolled out of sight is as hidden as one off-screen),
# named by its column's heading.
_BEYOND = """() => {
  const out = [];
  for (const table of document.querySelectorAll("main table")) {
    const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
    const box = table.closest(".table-scroll");
    const edge = Math.min(window.innerWidth, box ? box.getBoundingClientRect().right : Infinity);
    for (const row of table.querySelectorAll("tbody tr")) {
      [...row.children].forEach((cell, i) => {
        const right = cell.getBoundingClientRect().right;
        if (right > edge + 1) out.push(`${heads[i] || i}: ${Math.round(right)} > ${Math.round(edge)}`);
      });
    }
    if (box && box.scrollWidth > box.clientWidth + 1) out.push(`box scrolls: ${box.scrollWidth} > ${box.clientWidth}`);
  }
  return [...new Set(out)];
}"""

# The outcome's cell comes first in each stacked row: nothing of the row above it.
_OUTCOME_FIRST = """() => [...document.querySelectorAll("main table tbody tr")].filter((row) => {
  const outcome = row.querySelector(".outcome");
  if (!outcome) return false;
  const top = outcome.getBoundingClientRect().top;
  return [...row.children].some((cell) => cell !== outcome && cell.getBoundingClientRect().top < top - 1);
}).length"""


def columns_beyond(page: Page) -> dict[int, list[str]]:
    """Per width, the cells no one can see without scrolling sideways (empty: they fit)."""
    viewport = page.viewport_size or {"width": 1280, "height": 800}
    found: dict[int, list[str]] = {}
    try:
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 800})
            if beyond := page.evaluate(_BEYOND):
                found[width] = beyond
    finally:
        page.set_viewport_size(viewport)
    return found


def outcome_not_first_at_390(page: Page) -> int:
    viewport = page.viewport_size or {"width": 1280, "height": 800}
    page.set_viewport_size({"width": 390, "height": 800})
    try:
        return page.evaluate(_OUTCOME_FIRST)
    finally:
        page.set_viewport_size(viewport)


@pytest.fixture
def portal_coreapi(fresh_coreapi: RunningServer) -> RunningServer:
    return fresh_coreapi  # the deletion request clears memory


@pytest.fixture
def legacy_on(live_portal: str, settings, fresh_legacy: RunningServer) -> Iterator[str]:
    settings.LEGACY_STORES_BASE_URL = fresh_legacy.url
    legacy_ops.reset_caches()
    yield live_portal
    legacy_ops.reset_caches()


def _events() -> None:
    """alice's Activity as a busy month leaves it: every column filled, long names."""
    common = {"actor_oid": "x", "subject_upn": ALICE}
    AuditEvent.objects.create(
        **common, actor_upn=ALICE, action="delete-entry", source="legacy", outcome="error",
        agent_name="travel-planner", agent_object_id=TRAVEL, error_status=403,
        error_message="Forbidden",
    )  # fmt: skip
    AuditEvent.objects.create(
        **common, actor_upn="carol.support-desk@contoso.com", actor_is_support=True,
        action="erase", scope="agent", agent_name="travel-planner", outcome="ok",
        reason="Privacy request received by email from the user, forwarded by HR",
        ticket="PRIV-2041/2025-06",
    )  # fmt: skip
    AuditEvent.objects.create(
        **common, actor_upn=ALICE, action="move-entry", scope="agent",
        agent_name="travel-planner", destination_scope="user", outcome="ok",
        reason="Upcoming trip (moved from Travel Planner)",
    )  # fmt: skip


def test_activity_and_the_audit_trail_fit_at_every_width(new_page) -> None:
    _events()
    alice = new_page()
    sign_in_as(alice, "Alice Example", then="/activity")
    expect(alice.get_by_role("row", name="Failed")).to_have_count(1)
    assert columns_beyond(alice) == {}
    assert outcome_not_first_at_390(alice) == 0
    check_accessibility(alice, "activity, every column filled")

    carol = new_page()
    sign_in_as(carol, "Carol Support", then="/support/audit")
    expect(carol.get_by_role("row", name="Failed")).to_have_count(1)
    assert columns_beyond(carol) == {}
    assert outcome_not_first_at_390(carol) == 0
    check_accessibility(carol, "the audit trail, every column filled")


def test_a_deletion_requests_results_fit_at_every_width(legacy_on: str, page: Page) -> None:
    sign_in_as(page, "Carol Support")
    page.get_by_role("link", name="Support").click()
    page.get_by_label("User principal name").fill(ALICE)
    page.get_by_role("button", name="Look up").click()
    start = page.locator("form", has=page.get_by_role("button", name="Start"))
    start.get_by_label("Reason", exact=True).fill("Privacy request from the user")
    start.get_by_label("Ticket reference").fill("PRIV-2041")
    start.get_by_role("checkbox", name="All memories").check()
    start.get_by_role("button", name="Start").click()
    with page.expect_download():
        page.get_by_role("button", name="Download the export (.zip)").click()
    page.get_by_label(f"Type {ALICE} to confirm").fill(ALICE)
    page.get_by_role("button", name="Clear the exported memories").click()
    expect(page.get_by_role("heading", name="Other memory systems")).to_be_visible()

    assert columns_beyond(page) == {}
    assert outcome_not_first_at_390(page) == 0
    check_accessibility(page, "a deletion request's results, with other systems")
