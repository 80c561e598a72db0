"""Signing out in Chromium: the sign-out form posts to the portal, which redirects to the
IdP's end-session endpoint. Chromium checks that redirect against the page's CSP
`form-action`; the fixture's console watch fails the test on any CSP violation."""

from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, Request, expect

from tests.browser.conftest import check_accessibility, sign_in_as

pytestmark = pytest.mark.browser


def _end_session(request: Request) -> bool:
    return urlsplit(request.url).path.endswith("/oauth2/v2.0/logout")


def sign_out(page: Page) -> Request:
    """Click "Sign out"; the request that reached the IdP's end-session endpoint."""
    with page.expect_request(_end_session) as end_session:
        page.get_by_role("button", name="Sign out").click()
    page.wait_for_load_state()
    return end_session.value


def test_sign_out_reaches_the_idps_end_session_endpoint(page: Page, live_portal: str, idp, demo):
    sign_in_as(page, "Alice Example")
    request = sign_out(page)

    url = urlsplit(request.url)
    assert request.method == "GET"
    assert f"{url.scheme}://{url.netloc}" == idp.url  # another origin than the portal's
    assert url.path == f"/{demo.tenant_id}/oauth2/v2.0/logout"
    assert parse_qs(url.query)["post_logout_redirect_uri"] == [f"{live_portal}/auth/signed-out"]

    # The portal's session is gone: its pages ask for a sign-in again.
    page.goto("/")
    expect(page.get_by_role("button", name="Alice Example")).to_be_visible()
    assert "/oauth2/v2.0/authorize" in page.url


def test_sign_out_returns_to_the_portals_signed_out_page(page: Page, live_portal: str):
    sign_in_as(page, "Alice Example")
    sign_out(page)
    expect(page).to_have_url(f"{live_portal}/auth/signed-out")
    expect(page.get_by_role("heading", name="You have signed out")).to_be_visible()
    expect(page.get_by_role("button", name="Sign in again")).to_be_visible()
    check_accessibility(page, "signed out")
