"""Playwright driving Debian's Chromium against the live portal and the real devstack."""

from __future__ import annotations

import os
import re
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from axe_playwright_python.base import AXE_SCRIPT, AxeResults
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Locator,
    Page,
    WebError,
    expect,
    sync_playwright,
)

from tests.integration.conftest import _reset_portal_caches

CHROMIUM = "/usr/bin/chromium"

# Playwright's sync API keeps an asyncio loop running in the test thread, which makes
# Django refuse the test database set-up there; the portal itself runs in the live
# server's own thread, untouched by this.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

# How long an action (click, fill) and an expectation each wait for their condition.
# Playwright's expectations wait 5 s unless told: with other test runs on the same cores, the
# dashboard's legacy section (tokens, then each store, its permissions and entries from the
# emulator) has taken longer than that to load.
DEADLINE_MS = 15_000
expect.set_options(timeout=DEADLINE_MS)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",  # CI runs as root
                "--disable-gpu",
                "--disable-background-networking",  # this machine has no internet
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield chromium
        chromium.close()


@dataclass
class ConsoleWatch:
    """Every console error and warning of one browser context (each of its pages), and
    every script error: what fails the test."""

    problems: list[str] = field(default_factory=list)
    # HTTP statuses a test provokes on purpose (a refused form answers 400); Chromium logs
    # each such answer to an htmx request as a console error.
    expected_statuses: set[int] = field(default_factory=set)

    def on_console(self, message: ConsoleMessage) -> None:
        # CSP violations and script errors are reported as console errors.
        if message.type not in ("error", "warning"):
            return
        failed = _FAILED_RESOURCE.match(message.text)
        if failed and int(failed.group(1)) in self.expected_statuses:
            return
        self.problems.append(f"{message.type}: {message.text} ({message.location.get('url')})")

    def on_web_error(self, error: WebError) -> None:
        self.problems.append(f"pageerror: {error.error}")


# Chromium's console line for a CSP violation names neither the directive nor where in the
# script it happened; the page's own securitypolicyviolation event does (an inline style
# blocked as `style-src-attr` at htmx-2.min.js:1:10373, say). Injected by Playwright before
# any page script, so the page's CSP does not apply to it; it logs a console error, which
# the watch then reports.
_CSP_REPORTER = """
document.addEventListener("securitypolicyviolation", (event) => {
  console.error(`CSP violation: ${event.effectiveDirective} blocked ${event.blockedURI}` +
    ` at ${event.sourceFile || event.documentURI}:${event.lineNumber}:${event.columnNumber}` +
    (event.sample.trim() ? ` (${event.sample.trim()})` : ""));
}, true);
"""


# Chromium's line for a failed resource and htmx's own for an error answer it swaps in.
_FAILED_RESOURCE = re.compile(
    r"(?:Failed to load resource: the server responded with a status of"
    r"|Response Status Error Code) (\d{3})"
)
_WATCHES: weakref.WeakKeyDictionary[Page, ConsoleWatch] = weakref.WeakKeyDictionary()


def expect_statuses(page: Page, *statuses: int) -> None:
    """From now on, answers with these statuses are what the test provokes, not failures.
    Everything else in the console (script errors, CSP violations) still fails it."""
    _WATCHES[page].expected_statuses.update(statuses)


@pytest.fixture
def live_portal(
    live_server, settings, static_from_finders, idp, portal_coreapi, pki, demo, transactional_db
) -> Iterator[str]:
    settings.ENTRA_AUTHORITY = f"{idp.url}/{demo.tenant_id}"
    settings.ENTRA_CLIENT_ID = demo.portal.client_id
    settings.ENTRA_CLIENT_SECRET = demo.portal.client_secret
    settings.ENTRA_INSTANCE_DISCOVERY = False
    settings.ENTRA_REDIRECT_URI = ""  # built from the request: the live server's own URL
    settings.PORTAL_CA_BUNDLE = str(pki.ca_cert)
    settings.COREAPI_BASE_URL = portal_coreapi.url
    settings.COREAPI_CA_BUNDLE = ""
    settings.LEGACY_STORES_BASE_URL = ""  # on only where a test starts an emulator
    settings.MEMORYOS_BASE_URL = ""  # likewise
    _reset_portal_caches()
    yield live_server.url
    _reset_portal_caches()


@pytest.fixture
def new_page(browser: Browser, live_portal: str) -> Iterator[Callable[..., Page]]:
    """Pages in separate browser contexts (separate people); each fails the test on any
    console error or CSP violation, with or without JavaScript (`java_script_enabled=False`
    and other options go to the context: an inline style in a page is a console error there
    too)."""
    contexts: list[tuple[BrowserContext, ConsoleWatch]] = []

    def make(**options: Any) -> Page:
        # The IdP's certificate comes from the devstack's own CA, which Chromium doesn't know.
        context = browser.new_context(ignore_https_errors=True, base_url=live_portal, **options)
        watch = ConsoleWatch()
        context.add_init_script(_CSP_REPORTER)
        context.on("console", watch.on_console)
        context.on("weberror", watch.on_web_error)
        page = context.new_page()
        page.set_default_timeout(DEADLINE_MS)
        _WATCHES[page] = watch
        contexts.append((context, watch))
        return page

    yield make
    for context, _ in contexts:
        context.close()
    problems = [problem for _, watch in contexts for problem in watch.problems]
    assert problems == [], "\n".join(problems)


def expect_clean_console(page: Page) -> None:
    """No console error, warning or script error so far (each fails the test at its end
    anyway): for a test to fail at the step that caused one, reported there only."""
    watch = _WATCHES[page]
    problems, watch.problems = watch.problems, []
    assert problems == [], "\n".join(problems)


@pytest.fixture
def page(new_page: Callable[..., Page]) -> Page:
    return new_page()


def sign_in_as(page: Page, name: str, then: str | None = None) -> None:
    """Signed in as `name` (picked at the IdP), on the dashboard or else at `then`."""
    page.goto("/")
    page.get_by_role("button", name=name).click()
    page.wait_for_url(
        lambda url: "/auth/" not in url and ":8443" not in url and "oauth2" not in url
    )
    if then:
        page.goto(then)


def expect_changed(page: Page, path: str, toast: str) -> Locator:
    """After a change: back on the memory page at `path` (the URL ends there) with a toast
    saying what was done. The memory's content, for the test to check what it now shows."""
    expect(page).to_have_url(re.compile(f"{re.escape(path)}$"))
    expect(page.locator("#toasts")).to_contain_text(toast)
    return page.locator("#memory-content")


def entry_action(page: Page, action: str, entry: str | re.Pattern[str]) -> Locator:
    """The item `action` ("Edit", "Move or copy", "Delete") of the menu that `entry`'s
    Actions button opens, the menu opened by keyboard (focus then on its first item).
    `entry` as the names say it: "entry 2: Upcoming trip", or a pattern of that."""
    if isinstance(entry, str):
        actions, item = f"Actions for {entry}", f"{action} {entry}"
    else:
        actions = re.compile(f"^Actions for {entry.pattern}")
        item = re.compile(f"^{re.escape(action)} {entry.pattern}")
    page.get_by_role("button", name=actions).press("Enter")
    expect(page.get_by_role("menu", name=actions)).to_be_visible()
    return page.get_by_role("menuitem", name=item)


# --- accessibility ---------------------------------------------------------------------

# What the checks hold the portal to: WCAG 2.0, 2.1 and 2.2 A and AA, and axe's best
# practices (one h1, landmarks, allowed ARIA roles).
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
WIDTHS = (1280, 390)
NARROWEST = 320  # the narrowest phone width (WCAG 1.4.10 reflow): nothing may scroll sideways
SCHEMES = ("light", "dark")


def axe_violations(page: Page) -> AxeResults:
    """axe-core (the copy axe-playwright-python ships) on the page as it is now."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE_SCRIPT)
    options = {"runOnly": {"type": "tag", "values": AXE_TAGS}, "resultTypes": ["violations"]}
    return AxeResults(page.evaluate("options => axe.run(document, options)", options))


def sideways_overflow(page: Page) -> int:
    """How many CSS pixels the page is wider than the window (0 when it reflows)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


# Colour transitions and animations run to their end, so axe sees the colours that stay.
# (A spinner's endless one is skipped: it never finishes.)
_SETTLED = """() => Promise.all(document.getAnimations()
  .filter((a) => a.effect && a.effect.getComputedTiming().iterations !== Infinity)
  .map((a) => a.finished.catch(() => null)))"""

# The innermost elements reaching past the window's right edge, to say what to fix.
_TOO_WIDE = """() => {
  const wide = [...document.body.querySelectorAll("*")].filter(
    (e) => e.getBoundingClientRect().left + e.scrollWidth > window.innerWidth + 1);
  return wide.filter((e) => !wide.some((o) => o !== e && e.contains(o))).slice(0, 5).map(
    (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
      (e.className && typeof e.className === "string" ? "." + e.className.split(" ").join(".") : ""));
}"""


def check_accessibility(page: Page, state: str) -> None:
    """Fail unless `page`, as it is now, has no axe violations in light and dark, wide
    (1280 px) and on a phone (390 px), and does not scroll sideways at 390 or 320 px.
    The window's size and colour scheme are put back afterwards."""
    # A click on a link returns once the next page has begun to arrive: wait until it has
    # loaded (its stylesheets applied, its scripts run), else axe and the overflow check
    # could measure a page half-built.
    page.wait_for_load_state()
    viewport = page.viewport_size or {"width": 1280, "height": 720}
    failures: list[str] = []
    try:
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": viewport["height"]})
            for scheme in SCHEMES:
                # Reduced motion: Pico then skips its colour transitions, so axe measures
                # the final colours.
                page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
                page.evaluate(_SETTLED)
                results = axe_violations(page)
                if results.violations_count:
                    failures.append(f"{width}px, {scheme}: {results.generate_report()}")
        for width in (390, NARROWEST):
            page.set_viewport_size({"width": width, "height": viewport["height"]})
            if (extra := sideways_overflow(page)) > 0:
                failures.append(
                    f"{width}px: the page scrolls sideways by {extra}px, past the right edge: "
                    + ", ".join(page.evaluate(_TOO_WIDE))
                )
    finally:
        page.set_viewport_size(viewport)
        page.emulate_media(color_scheme="light", reduced_motion="no-preference")
    assert not failures, f"{state} ({page.url}):\n" + "\n".join(failures)
