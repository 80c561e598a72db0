"""The portal against the real devstack: sign-in through the IdP picker, real JWTs,
the emulator's memory. Only the Django test client stands in for the browser."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import msal
import pytest
from django.test import Client

from memory_ui import auth
from tests.integration.conftest import idp_sign_in, sign_in
from tests.pages import assert_sent_to_idp_sign_out, batched_cards, page_html

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_healthz_needs_no_sign_in_and_reveals_nothing(client: Client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}  # the instance only (issue 19)


def test_dashboard_sends_anonymous_users_to_sign_in(client: Client, portal):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/auth/login?next=/"


def test_alice_signs_in_and_sees_her_agents(alice: Client):
    page = alice.get("/")
    html = page_html(page)
    assert "Alice Example" in html and "alice@contoso.com" in html
    for display in [
        "Benefits Assistant",
        "IT Helpdesk",
        "Travel Planner",
    ]:
        assert display in html
    assert batched_cards(html) == [["benefits-assistant", "it-helpdesk", "travel-planner"]]
    assert 'hx-get="/cards/user"' in html
    assert "finance-insights" not in html  # exists, but alice may not read it


def test_sign_in_cycles_the_session_key(client: Client, portal, pki, db):
    client.get("/auth/login", {"next": "/"})
    before = client.session.session_key
    sign_in(client, "alice@contoso.com", str(pki.ca_cert))
    assert client.session.session_key != before
    # The token cache is server-side: the only cookies are the session and CSRF ones.
    assert set(client.cookies) <= {"memory_portal_session", "csrftoken"}
    assert all("eyJ" not in morsel.value for morsel in client.cookies.values())


def test_bob_sees_only_his_agent(bob: Client):
    html = bob.get("/").content.decode()
    assert batched_cards(html) == [["it-helpdesk"]]
    assert "benefits-assistant" not in html and "travel-planner" not in html


def test_cards_show_stats_not_content(alice: Client):
    card = alice.get("/cards/agents/benefits-assistant", **HTMX)
    html = page_html(card)
    assert 'id="card-agent-benefits-assistant"' in html
    assert "<html" not in html
    assert "Entries</dt><dd>2</dd>" in html
    assert "<time datetime=" in html and "ago</time>" in html
    user_card = alice.get("/cards/user", **HTMX).content.decode()
    assert "Entries</dt><dd>3</dd>" in user_card


def test_empty_memory_has_an_empty_state(client: Client, portal, pki, db):
    sign_in(client, "carol@contoso.com", str(pki.ca_cert))
    card = client.get("/cards/user", **HTMX).content.decode()
    assert "Nothing remembered yet." in card
    page = client.get("/memory/user").content.decode()
    assert "No agent remembers anything about you yet." in page


def test_user_memory_page_renders_entries_with_provenance(alice: Client):
    response = alice.get("/memory/user")
    html = page_html(response)
    assert "User stated preference" in html
    assert "<code>op-2291</code>" in html
    assert "<table>" in html  # the working-hours table, rendered
    assert "hx-disable" in html


def test_agent_memory_page_renders_markdown_safely(alice: Client):
    html = alice.get("/memory/agents/benefits-assistant").content.decode()
    assert "<strong>PPO Plus</strong>" in html
    assert 'rel="noopener noreferrer nofollow"' in html
    code = alice.get("/memory/agents/it-helpdesk").content.decode()
    assert '<code class="language-powershell">' in code


def test_raw_markdown_toggle(alice: Client):
    raw = alice.get("/memory/agents/benefits-assistant", {"view": "raw"}).content.decode()
    assert "Enrolled in the **PPO Plus** health plan" in raw
    assert "## Added 2026-10-05T09:30:00Z — Enrolment question" in raw
    fragment = alice.get("/memory/agents/benefits-assistant", {"view": "raw"}, **HTMX)
    assert fragment.status_code == 200
    assert fragment.content.decode().lstrip().startswith('<section id="memory-content"')
    assert "HX-Request" in fragment["Vary"]


def test_combined_view_shows_user_and_agent_memory(alice: Client):
    html = alice.get("/memory/agents/travel-planner/combined").content.decode()
    assert "Prefers concise answers" in html  # user memory
    assert "aisle seats" in html  # travel-planner's own
    shared = html[
        html.index(">Shared with every agent</h2>") : html.index(">Only Travel Planner</h2>")
    ]
    assert "Prefers concise answers" in shared and "aisle seats" not in shared
    assert 'href="/memory/user?entry=0#entry-0"' in shared
    assert 'href="/memory/agents/travel-planner?entry=1#entry-1"' in html


def test_agent_the_user_cannot_read_is_404(alice: Client):
    assert alice.get("/memory/agents/finance-insights").status_code == 404
    assert alice.get("/memory/agents/no-such-agent").status_code == 404
    assert alice.get("/cards/agents/no-such-agent", **HTMX).status_code == 404


def test_bob_cannot_open_alices_agents(bob: Client):
    assert bob.get("/memory/agents/travel-planner").status_code == 404
    assert bob.get("/memory/agents/travel-planner/combined").status_code == 404


def test_tampered_next_goes_to_the_dashboard(client: Client, portal, pki, db):
    for evil in (
        "https://evil.example/",
        "//evil.example/x",
        "/\\evil.example",
        "javascript:alert(1)",
    ):
        start = client.get("/auth/login", {"next": evil})
        back = urlsplit(idp_sign_in(start["Location"], "alice@contoso.com", str(pki.ca_cert)))
        done = client.get(f"{back.path}?{back.query}")
        assert done.status_code == 302
        assert done["Location"] == "/", evil


def test_local_next_is_honoured(client: Client, portal, pki, db):
    sign_in(client, "alice@contoso.com", str(pki.ca_cert), next_url="/memory/user")


def test_stale_callback_is_refused_clearly(client: Client, portal, db):
    response = client.get("/auth/callback", {"code": "made-up", "state": "made-up"})
    assert response.status_code == 400
    assert "not for a sign-in started here" in response.content.decode()


def test_replayed_callback_is_refused(client: Client, portal, pki, db):
    start = client.get("/auth/login", {"next": "/"})
    back = urlsplit(idp_sign_in(start["Location"], "alice@contoso.com", str(pki.ca_cert)))
    assert client.get(f"{back.path}?{back.query}").status_code == 302
    again = client.get(f"{back.path}?{back.query}")
    assert again.status_code == 400
    assert "already used" in again.content.decode()


def test_callback_with_wrong_state_is_refused(client: Client, portal, pki, db):
    start = client.get("/auth/login", {"next": "/"})
    back = urlsplit(idp_sign_in(start["Location"], "alice@contoso.com", str(pki.ca_cert)))
    params = parse_qs(back.query)
    params["state"] = ["forged"]
    forged = "&".join(f"{k}={v[0]}" for k, v in params.items())
    response = client.get(f"{back.path}?{forged}")
    assert response.status_code == 400
    assert "does not match your sign-in" in response.content.decode()


def test_idp_error_in_callback_is_shown(client: Client, portal, db):
    client.get("/auth/login", {"next": "/"})
    response = client.get("/auth/callback", {"error": "access_denied", "state": "x"})
    assert response.status_code == 400
    assert "did not sign you in" in response.content.decode()


def test_expired_session_during_htmx_request_redirects_the_page(client: Client, portal, db):
    response = client.get(
        "/cards/agents/it-helpdesk",
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL="http://testserver/memory/user",
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/auth/login?next=%2Fmemory%2Fuser"
    assert response.content == b""


def test_token_cache_loss_sends_htmx_requests_to_sign_in(alice: Client):
    session = alice.session
    del session[auth.SESSION_CACHE]
    session.save()
    response = alice.get(
        "/cards/user", HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver/"
    )
    assert response["HX-Redirect"] == "/auth/login?next=%2F"
    page = alice.get("/memory/user")
    assert page.status_code == 302 and page["Location"].startswith("/auth/login?next=")


def _cached_access_tokens(client: Client) -> dict:
    return json.loads(client.session[auth.SESSION_CACHE])["AccessToken"]


def test_expired_access_token_is_refreshed_silently(alice: Client):
    """Age the access token in the session's msal cache; the next call must refresh it
    against the IdP with the refresh token and still answer."""
    session = alice.session
    cache = json.loads(session[auth.SESSION_CACHE])
    (old_token,) = cache["AccessToken"].values()
    old_token["expires_on"] = old_token["extended_expires_on"] = "1000"
    session[auth.SESSION_CACHE] = json.dumps(cache)
    session.save()

    card = alice.get("/cards/user", **HTMX)
    assert card.status_code == 200
    assert "Entries</dt><dd>3</dd>" in card.content.decode()
    (new_token,) = _cached_access_tokens(alice).values()
    assert new_token["secret"] != old_token["secret"]
    assert int(new_token["expires_on"]) > 1000


def test_sign_out_clears_the_session_and_ends_the_idp_session(alice: Client, settings):
    response = alice.post("/auth/logout")
    assert_sent_to_idp_sign_out(response, settings.ENTRA_AUTHORITY)
    assert auth.SESSION_CACHE not in alice.session
    assert alice.get("/").status_code == 302


def test_sign_out_needs_post_with_csrf(alice: Client):
    assert alice.get("/auth/logout").status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.cookies = alice.cookies
    assert strict.post("/auth/logout").status_code == 403


def test_msal_is_the_production_client(portal, settings):
    """The portal's msal app is a real ConfidentialClientApplication on the devstack authority."""
    app = auth._msal_app()
    assert isinstance(app, msal.ConfidentialClientApplication)
    assert app.authority.token_endpoint.startswith(settings.ENTRA_AUTHORITY)


def test_signing_in_as_someone_else_keeps_the_new_token_cache(alice: Client, pki):
    """login() flushes the previous user's session; the new tokens must survive it."""
    sign_in(alice, "bob@contoso.com", str(pki.ca_cert))
    card = alice.get("/cards/user", **HTMX)
    assert card.status_code == 200
    assert "HX-Redirect" not in card
    assert "Bob Example" in alice.get("/").content.decode()
