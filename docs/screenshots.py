"""The README's screenshots, taken in Debian's Chromium against the devstack:
docs/dashboard.png (alice's dashboard with its legacy stores, 1200 px wide), docs/phone.png
(a memory page on a 390 px phone), docs/whats-new.png (What's new after a note) and
docs/selection.png (the preview of deleting every entry that matches "prefers").

    .venv/bin/python docs/screenshots.py              # its own devstack and portal, free ports
    .venv/bin/python docs/screenshots.py --url http://127.0.0.1:8000   # a running ./dev run

Its own devstack starts from the demo fixtures in a temporary folder, so the pictures show
the seeded demo, not whatever a developer's .devstack/ holds now.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))

from devstack.config import fixtures  # noqa: E402
from devstack.coreapi.faults import Faults  # noqa: E402
from tests.stack import start_devstack, start_portal  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


@contextmanager
def own_portal() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="screenshots-") as home:
        stack = start_devstack(Path(home), fixtures(), Faults())
        try:
            portal = start_portal(stack, name="screenshots", workers=1, threads=8)
            try:
                yield portal.url
            finally:
                portal.stop()
        finally:
            stack.stop()


def sign_in(page: Page, url: str, name: str) -> None:
    page.goto(f"{url}/")
    page.get_by_role("button", name=name).click()
    page.wait_for_url(f"{url}/")
    # Agent cards load a batch at a time as they come into view: bring them into view.
    page.locator("#agents").scroll_into_view_if_needed()
    expect(page.locator(".memory-card.is-loading")).to_have_count(0)
    page.evaluate("window.scrollTo(0, 0)")


def legacy_stores(page: Page) -> None:
    """The dashboard's legacy section loads as it comes into view: bring it in, so the
    picture shows its stores as people see them."""
    section = page.locator("#legacy-stores")
    section.scroll_into_view_if_needed()
    expect(section).to_have_attribute("aria-busy", "false")
    expect(section.locator(".legacy-card").first).to_be_visible()
    page.evaluate("window.scrollTo(0, 0)")


def whats_new(page: Page, url: str) -> None:
    """Open a memory (a visit), then something new arrives in it: What's new lists it."""
    page.goto(f"{url}/memory/agents/travel-planner")
    # Entry times are whole seconds: the note must come in a second after the visit.
    page.wait_for_function(
        "t => Date.now() >= t", arg=(page.evaluate("Date.now()") // 1000 + 1) * 1000
    )
    page.get_by_role("button", name="Add a note").click()
    page.get_by_role("textbox", name="Note").fill("- Prefers the 07:30 train to London.")
    page.get_by_role("textbox", name="Why").fill("Travel preference")
    page.get_by_role("button", name="Add note").click()
    expect(page.locator("#memory-content")).to_contain_text("07:30 train")
    page.goto(f"{url}/whats-new")
    expect(page.locator(".whats-new-entry")).to_have_count(1)
    page.screenshot(path=DOCS / "whats-new.png", full_page=True)


def selection(page: Page, url: str) -> None:
    page.goto(f"{url}/memory/select?q=prefers")
    page.get_by_role("button", name=re.compile(r"^Select all \d+ matching")).click()
    expect(page.locator(".batch-preview")).to_be_visible()
    page.screenshot(path=DOCS / "selection.png", full_page=True)


def take(url: str) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        desktop = browser.new_context(
            ignore_https_errors=True,  # the devstack IdP's own CA
            viewport={"width": 1200, "height": 900},
            color_scheme="light",
            reduced_motion="reduce",
        )
        page = desktop.new_page()
        sign_in(page, url, "Alice Example")
        legacy_stores(page)
        page.screenshot(path=DOCS / "dashboard.png", full_page=True)
        desktop_page = page

        phone = browser.new_context(
            ignore_https_errors=True,
            viewport={"width": 390, "height": 844},
            device_scale_factor=2,
            is_mobile=True,
            has_touch=True,
            color_scheme="dark",
            reduced_motion="reduce",
        )
        page = phone.new_page()
        sign_in(page, url, "Alice Example")
        page.goto(f"{url}/memory/agents/travel-planner")
        expect(page.locator("#memory-content .entry")).to_have_count(2)
        page.screenshot(path=DOCS / "phone.png")
        # Last: these add a note to Travel Planner.
        whats_new(desktop_page, url)
        selection(desktop_page, url)
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running portal on the devstack (default: start one)")
    args = parser.parse_args()
    if args.url:
        take(args.url.rstrip("/"))
    else:
        with own_portal() as url:
            take(url)
    print(f"wrote dashboard.png, phone.png, whats-new.png and selection.png in {DOCS}")


if __name__ == "__main__":
    main()
