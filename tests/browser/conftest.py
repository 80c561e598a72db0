"""Playwright driving Debian's Chromium against the live portal and the real devstack."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, sync_playwright

from tests.integration.conftest import _reset_portal_caches

CHROMIUM = "/usr/bin/chromium"

# Playwright's sync API keeps an asyncio loop running in the test thread, which makes
# Django refuse the test database set-up there; the portal itself runs in the live
# server's own thread, untouched by this.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


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
    problems: list[str] = field(default_factory=list)

    def on_console(self, message: ConsoleMessage) -> None:
        # CSP violations and script errors are reported as console errors.
        if message.type in ("error", "warning"):
            self.problems.append(f"{message.type}: {message.text} ({message.location.get('url')})")


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
    _reset_portal_caches()
    yield live_server.url
    _reset_portal_caches()


@pytest.fixture
def new_page(browser: Browser, live_portal: str) -> Iterator[Callable[[], Page]]:
    """Pages in separate browser contexts (separate people); each fails the test on any
    console error or CSP violation."""
    contexts: list[tuple[BrowserContext, ConsoleWatch]] = []

    def make() -> Page:
        # The IdP's certificate comes from the devstack's own CA, which Chromium doesn't know.
        context = browser.new_context(ignore_https_errors=True, base_url=live_portal)
        watch = ConsoleWatch()
        page = context.new_page()
        page.on("console", watch.on_console)
        page.on("pageerror", lambda error: watch.problems.append(f"pageerror: {error}"))
        page.set_default_timeout(15_000)
        contexts.append((context, watch))
        return page

    yield make
    for context, _ in contexts:
        context.close()
    problems = [problem for _, watch in contexts for problem in watch.problems]
    assert problems == [], "\n".join(problems)


@pytest.fixture
def page(new_page: Callable[[], Page]) -> Page:
    return new_page()


def sign_in_as(page: Page, name: str) -> None:
    page.goto("/")
    page.get_by_role("button", name=name).click()
    page.wait_for_url(
        lambda url: "/auth/" not in url and ":8443" not in url and "oauth2" not in url
    )
