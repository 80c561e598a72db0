"""The devstack identity provider over real HTTPS: msal flows, refusals and hardening."""

from __future__ import annotations

import base64
import hashlib
import os
import selectors
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

import jwt
import msal
import pytest
import requests

from devstack.config import REPO_ROOT, Fixtures
from devstack.idp import IdentityProvider, provider
from devstack.pki import Pki
from devstack.serve import RunningServer
from tests.stack import interrupt, stops_on_sigint

DATA_READ = "api://FoundationaLLM-Core/Data.Read"
APP_SCOPE = "api://FoundationaLLM-Core/.default"
GRAPH_AUDIENCE = "00000003-0000-0000-c000-000000000000"
# Registered as http://127.0.0.1:8000/auth/callback: another port must match (RFC 8252).
REDIRECT_URI = "http://127.0.0.1:51234/auth/callback"
JSON_ERROR_KEYS = {
    "error",
    "error_description",
    "error_codes",
    "timestamp",
    "trace_id",
    "correlation_id",
}

# Query mode is what most tests exercise; msal nudges towards form_post on every flow.
pytestmark = pytest.mark.filterwarnings("ignore:response_mode=.form_post. is recommended")

TokenVerifier = Callable[[str, str], dict[str, Any]]


# HTML of the IdP's pages, read the way a browser would submit it.


@dataclass
class Button:
    name: str | None
    value: str | None
    autofocus: bool
    text: str = ""


@dataclass
class Form:
    action: str
    fields: dict[str, str] = field(default_factory=dict)
    buttons: list[Button] = field(default_factory=list)


class _PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self.scripts: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "form":
            self.forms.append(Form(action=attr.get("action") or ""))
        elif tag == "input" and attr.get("name"):
            self.forms[-1].fields[str(attr["name"])] = attr.get("value") or ""
        elif tag == "button":
            self.forms[-1].buttons.append(
                Button(attr.get("name"), attr.get("value"), "autofocus" in attr)
            )
            self._in = "button"
        elif tag == "script":
            self.scripts.append("")
            self._in = "script"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("button", "script"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "button":
            self.forms[-1].buttons[-1].text += data
        elif self._in == "script":
            self.scripts[-1] += data


def parse_page(html: str) -> _PageParser:
    parser = _PageParser()
    parser.feed(html)
    return parser


def query_of(response: requests.Response) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(response.headers["Location"]).query))


def csp_hash(source: str) -> str:
    return base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()


# Fixtures


@pytest.fixture
def http(pki: Pki) -> Iterator[requests.Session]:
    """Trusts the dev CA. trust_env=False, because REQUESTS_CA_BUNDLE in the environment
    would override session.verify (and proxies must not see loopback traffic)."""
    session = requests.Session()
    session.trust_env = False
    session.verify = str(pki.ca_cert)
    yield session
    session.close()


@pytest.fixture
def idp_app(idp: RunningServer) -> IdentityProvider:
    return provider(idp)


@pytest.fixture
def authority(idp: RunningServer, demo: Fixtures) -> str:
    return f"{idp.url}/{demo.tenant_id}"


@pytest.fixture
def endpoint(authority: str) -> Callable[[str], str]:
    return lambda path: f"{authority}/{path}"


@pytest.fixture
def portal_app(
    authority: str, demo: Fixtures, http: requests.Session
) -> msal.ConfidentialClientApplication:
    return make_msal(authority, demo, http)


def make_msal(
    authority: str, demo: Fixtures, http: requests.Session, secret: str | None = None
) -> msal.ConfidentialClientApplication:
    # msal's own `verify=` is overridden by REQUESTS_CA_BUNDLE, so it gets our session.
    return msal.ConfidentialClientApplication(
        demo.portal.client_id,
        client_credential=secret or demo.portal.client_secret,
        authority=authority,
        http_client=http,
        instance_discovery=False,
    )


@pytest.fixture
def verify_token(http: requests.Session, authority: str) -> TokenVerifier:
    """Checks signature (against the served JWKS), audience and issuer."""
    discovery = http.get(f"{authority}/v2.0/.well-known/openid-configuration").json()
    keys = jwt.PyJWKSet.from_dict(http.get(discovery["jwks_uri"]).json())

    def verify(token: str, audience: str) -> dict[str, Any]:
        key = keys[jwt.get_unverified_header(token)["kid"]].key
        return jwt.decode(
            token, key, algorithms=["RS256"], audience=audience, issuer=discovery["issuer"]
        )

    return verify


def pick_user(
    http: requests.Session, auth_uri: str, upn: str | None, action: str | None = None
) -> requests.Response:
    """What a browser does on the picker page: submit the form with one button."""
    page = http.get(auth_uri, allow_redirects=False)
    assert page.status_code == 200, page.text
    form = parse_page(page.text).forms[0]
    choice = {"action": action} if action else {"upn": upn}
    return http.post(
        urljoin(auth_uri, form.action), data={**form.fields, **choice}, allow_redirects=False
    )


def sign_in(
    app: msal.ConfidentialClientApplication,
    http: requests.Session,
    upn: str,
    scopes: tuple[str, ...] = (DATA_READ,),
) -> dict[str, Any]:
    flow = app.initiate_auth_code_flow(list(scopes), redirect_uri=REDIRECT_URI)
    answer = pick_user(http, flow["auth_uri"], upn)
    assert answer.status_code == 302, answer.text
    return app.acquire_token_by_auth_code_flow(flow, query_of(answer))


def authorize_url(authority: str, demo: Fixtures, **overrides: str | None) -> str:
    params: dict[str, str | None] = {
        "client_id": demo.portal.client_id,
        "response_type": "code",
        "redirect_uri": REDIRECT_URI,
        "scope": f"openid profile offline_access {DATA_READ}",
        "state": "state-123",
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256",
    }
    params.update(overrides)
    query = urlencode({k: v for k, v in params.items() if v is not None})
    return f"{authority}/oauth2/v2.0/authorize?{query}"


def post_token(
    http: requests.Session, url: str, data: dict[str, str], demo: Fixtures
) -> requests.Response:
    client = {"client_id": demo.portal.client_id, "client_secret": demo.portal.client_secret}
    return http.post(url, data={**client, **data})


def assert_json_error(response: requests.Response, status: int, error: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == error
    assert set(body) == JSON_ERROR_KEYS
    assert response.headers["Cache-Control"] == "no-store"
    return body


# The authorization code flow, driven by the real msal


def test_auth_code_flow_signs_in_with_roles_and_verifiable_tokens(
    portal_app: msal.ConfidentialClientApplication,
    http: requests.Session,
    demo: Fixtures,
    verify_token: TokenVerifier,
) -> None:
    carol = demo.user("carol@contoso.com")
    assert carol is not None

    result = sign_in(portal_app, http, carol.upn)

    assert "error" not in result, result
    claims = result["id_token_claims"]  # msal has already checked the nonce
    assert claims["name"] == "Carol Support"
    assert claims["preferred_username"] == carol.upn
    assert claims["oid"] == carol.oid
    assert claims["tid"] == demo.tenant_id
    assert claims["roles"] == ["Memory.Support"]
    assert verify_token(result["id_token"], demo.portal.client_id)["nonce"] == claims["nonce"]
    access = verify_token(result["access_token"], demo.core_api_audience)
    assert access["scp"] == "Data.Read"
    assert access["upn"] == carol.upn
    assert result["scope"] == DATA_READ
    assert result["token_type"] == "Bearer"
    assert result["refresh_token"]
    [account] = portal_app.get_accounts()
    assert account["home_account_id"] == f"{carol.oid}.{demo.tenant_id}"


def test_query_response_carries_entra_parameters(
    portal_app: msal.ConfidentialClientApplication, http: requests.Session, demo: Fixtures
) -> None:
    flow = portal_app.initiate_auth_code_flow([DATA_READ], redirect_uri=REDIRECT_URI)

    answer = pick_user(http, flow["auth_uri"], "alice@contoso.com")

    assert answer.status_code == 302
    assert answer.headers["Location"].startswith(f"{REDIRECT_URI}?")
    params = query_of(answer)
    assert set(params) == {"code", "state", "client_info", "session_state"}
    assert params["state"] == flow["state"]
    info = base64.urlsafe_b64decode(params["client_info"] + "==")
    alice = demo.user("alice@contoso.com")
    assert alice is not None
    assert info == f'{{"uid":"{alice.oid}","utid":"{demo.tenant_id}"}}'.encode()


def test_form_post_response_mode_posts_the_code_with_a_hashed_script(
    portal_app: msal.ConfidentialClientApplication, http: requests.Session
) -> None:
    flow = portal_app.initiate_auth_code_flow(
        [DATA_READ], redirect_uri=REDIRECT_URI, response_mode="form_post"
    )

    answer = pick_user(http, flow["auth_uri"], "bob@contoso.com")

    assert answer.status_code == 200
    page = parse_page(answer.text)
    [form] = page.forms
    assert form.action == REDIRECT_URI
    assert form.fields["state"] == flow["state"]
    assert [b.text for b in form.buttons] == ["Continue"]  # works without script too
    [script] = page.scripts
    csp = answer.headers["Content-Security-Policy"]
    assert f"script-src 'sha256-{csp_hash(script)}'" in csp
    assert "default-src 'none'" in csp
    assert answer.headers["X-Frame-Options"] == "DENY"
    result = portal_app.acquire_token_by_auth_code_flow(flow, form.fields)
    assert result["id_token_claims"]["preferred_username"] == "bob@contoso.com"


def test_silent_refresh_rotates_the_refresh_token(
    portal_app: msal.ConfidentialClientApplication,
    http: requests.Session,
    idp_app: IdentityProvider,
    endpoint: Callable[[str], str],
    demo: Fixtures,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # msal treats a token expiring within 5 minutes as expired, so 1 s forces a refresh.
    monkeypatch.setattr(idp_app, "access_token_lifetime", 1)
    first = sign_in(portal_app, http, "alice@contoso.com")
    [account] = portal_app.get_accounts()

    refreshed = portal_app.acquire_token_silent([DATA_READ], account)

    assert refreshed is not None
    assert refreshed["token_source"] == "identity_provider"
    assert refreshed["access_token"] != first["access_token"]
    assert refreshed["refresh_token"] != first["refresh_token"]
    # As with Entra, the previous refresh token stays usable until it expires: two
    # requests refreshing at the same moment must not sign the user out.
    again = post_token(
        http,
        endpoint("oauth2/v2.0/token"),
        {"grant_type": "refresh_token", "refresh_token": first["refresh_token"]},
        demo,
    )
    assert again.status_code == 200
    assert again.json()["refresh_token"] not in (first["refresh_token"], refreshed["refresh_token"])


def test_refresh_token_is_bound_to_its_client(
    portal_app: msal.ConfidentialClientApplication,
    http: requests.Session,
    endpoint: Callable[[str], str],
    demo: Fixtures,
) -> None:
    result = sign_in(portal_app, http, "bob@contoso.com")

    response = http.post(
        endpoint("oauth2/v2.0/token"),
        data={"grant_type": "refresh_token", "refresh_token": result["refresh_token"]},
        auth=("not-a-client", "whatever"),
    )

    assert_json_error(response, 401, "invalid_client")


def test_oidc_only_sign_in_gets_a_graph_token_not_a_coreapi_token(
    portal_app: msal.ConfidentialClientApplication,
    http: requests.Session,
    verify_token: TokenVerifier,
) -> None:
    result = sign_in(portal_app, http, "alice@contoso.com", scopes=())

    claims = verify_token(result["access_token"], GRAPH_AUDIENCE)
    assert claims["scp"] == "openid profile"
    assert result["scope"] == "openid profile"


# Client credentials and client authentication


def test_client_credentials_token_has_roles_and_no_scp(
    portal_app: msal.ConfidentialClientApplication, demo: Fixtures, verify_token: TokenVerifier
) -> None:
    result = portal_app.acquire_token_for_client([APP_SCOPE])

    claims = verify_token(result["access_token"], demo.core_api_audience)
    assert claims["roles"] == ["Data.ReadWrite.All"]
    assert "scp" not in claims
    assert claims["oid"] == demo.portal.service_principal_oid
    assert "refresh_token" not in result


def test_client_credentials_refuses_delegated_scopes(
    portal_app: msal.ConfidentialClientApplication,
) -> None:
    result = portal_app.acquire_token_for_client([DATA_READ])

    assert result["error"] == "invalid_scope"


def test_client_secret_basic_is_accepted_and_token_is_not_cached(
    http: requests.Session, endpoint: Callable[[str], str], demo: Fixtures
) -> None:
    response = http.post(
        endpoint("oauth2/v2.0/token"),
        data={"grant_type": "client_credentials", "scope": APP_SCOPE},
        auth=(demo.portal.client_id, demo.portal.client_secret),
    )

    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == body["ext_expires_in"] == 3600


def test_wrong_client_secret_is_invalid_client(
    authority: str, demo: Fixtures, http: requests.Session
) -> None:
    app = make_msal(authority, demo, http, secret="not-the-secret")

    result = app.acquire_token_for_client([APP_SCOPE])

    assert result["error"] == "invalid_client"
    assert result["error_codes"] == [7000215]


@pytest.mark.parametrize(
    ("auth", "data"),
    [
        pytest.param(("6c9d1e2f-4b3a-4c5d-8e7f-0a1b2c3d4e5f", "wrong"), {}, id="basic-wrong"),
        pytest.param(None, {"client_id": "6c9d1e2f-4b3a-4c5d-8e7f-0a1b2c3d4e5f"}, id="no-secret"),
        pytest.param(None, {}, id="no-client"),
        pytest.param(None, {"client_id": "unknown", "client_secret": "x"}, id="unknown-client"),
    ],
)
def test_client_authentication_failures_are_401(
    http: requests.Session,
    endpoint: Callable[[str], str],
    auth: tuple[str, str] | None,
    data: dict[str, str],
) -> None:
    correlation = "0f8fad5b-d9cb-469f-a165-70867728950e"
    response = http.post(
        endpoint("oauth2/v2.0/token"),
        data={"grant_type": "client_credentials", "scope": APP_SCOPE, **data},
        auth=auth,
        headers={"client-request-id": correlation},
    )

    body = assert_json_error(response, 401, "invalid_client")
    assert body["correlation_id"] == correlation
    assert body["error_description"].startswith("AADSTS")
    assert response.headers["WWW-Authenticate"].startswith("Basic")


# Authorization codes: PKCE, single use, lifetime


def test_wrong_pkce_verifier_is_invalid_grant_and_burns_the_code(
    portal_app: msal.ConfidentialClientApplication, http: requests.Session
) -> None:
    flow = portal_app.initiate_auth_code_flow([DATA_READ], redirect_uri=REDIRECT_URI)
    answer = query_of(pick_user(http, flow["auth_uri"], "alice@contoso.com"))
    real_verifier = flow["code_verifier"]

    wrong = portal_app.acquire_token_by_auth_code_flow({**flow, "code_verifier": "A" * 43}, answer)
    retry = portal_app.acquire_token_by_auth_code_flow(
        {**flow, "code_verifier": real_verifier}, answer
    )

    assert wrong["error"] == "invalid_grant"
    assert wrong["error_codes"] == [501481]
    assert retry["error"] == "invalid_grant"


def test_reused_code_is_invalid_grant_and_revokes_its_refresh_token(
    portal_app: msal.ConfidentialClientApplication,
    http: requests.Session,
    endpoint: Callable[[str], str],
    demo: Fixtures,
) -> None:
    flow = portal_app.initiate_auth_code_flow([DATA_READ], redirect_uri=REDIRECT_URI)
    answer = query_of(pick_user(http, flow["auth_uri"], "alice@contoso.com"))
    first = portal_app.acquire_token_by_auth_code_flow(flow, answer)
    token_url = endpoint("oauth2/v2.0/token")

    replay = post_token(
        http,
        token_url,
        {
            "grant_type": "authorization_code",
            "code": answer["code"],
            "redirect_uri": REDIRECT_URI,
            "code_verifier": flow["code_verifier"],
        },
        demo,
    )

    assert assert_json_error(replay, 400, "invalid_grant")["error_codes"] == [54005]
    refresh = post_token(
        http,
        token_url,
        {"grant_type": "refresh_token", "refresh_token": first["refresh_token"]},
        demo,
    )
    assert_json_error(refresh, 400, "invalid_grant")


def test_code_redeemed_with_another_redirect_uri_is_invalid_grant(
    portal_app: msal.ConfidentialClientApplication, http: requests.Session
) -> None:
    flow = portal_app.initiate_auth_code_flow([DATA_READ], redirect_uri=REDIRECT_URI)
    answer = query_of(pick_user(http, flow["auth_uri"], "alice@contoso.com"))

    result = portal_app.acquire_token_by_auth_code_flow(
        {**flow, "redirect_uri": "http://127.0.0.1:8000/auth/callback"}, answer
    )

    assert result["error"] == "invalid_grant"


def test_expired_code_is_invalid_grant(
    portal_app: msal.ConfidentialClientApplication,
    http: requests.Session,
    idp_app: IdentityProvider,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(idp_app, "code_lifetime", 0)

    result = sign_in(portal_app, http, "alice@contoso.com")

    assert result["error"] == "invalid_grant"
    assert result["error_codes"] == [70008]


# The authorize endpoint and the picker


def test_picker_lists_users_highlights_login_hint_and_ignores_select_account(
    portal_app: msal.ConfidentialClientApplication, http: requests.Session
) -> None:
    flow = portal_app.initiate_auth_code_flow(
        [DATA_READ],
        redirect_uri="http://localhost:40123/auth/callback",  # other loopback host, any port
        login_hint="BOB@contoso.com",
        prompt="select_account",
    )

    page = http.get(flow["auth_uri"])

    assert page.status_code == 200
    assert "no passwords" in page.text
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]
    assert page.headers["Cache-Control"] == "no-store"
    [form] = parse_page(page.text).forms
    users = {b.value: b for b in form.buttons if b.name == "upn"}
    assert set(users) == {"alice@contoso.com", "bob@contoso.com", "carol@contoso.com"}
    assert "Memory.Support" in users["carol@contoso.com"].text
    assert [upn for upn, b in users.items() if b.autofocus] == ["bob@contoso.com"]
    assert any(b.value == "cancel" for b in form.buttons)


def test_pending_sign_in_is_single_use(
    http: requests.Session, authority: str, demo: Fixtures
) -> None:
    auth_uri = authorize_url(authority, demo)
    page = http.get(auth_uri)
    form = parse_page(page.text).forms[0]
    choice = {**form.fields, "upn": "alice@contoso.com"}

    first = http.post(urljoin(auth_uri, form.action), data=choice, allow_redirects=False)
    second = http.post(urljoin(auth_uri, form.action), data=choice, allow_redirects=False)

    assert first.status_code == 302
    assert second.status_code == 400
    assert "Location" not in second.headers
    assert "expired or was already used" in second.text


def test_expired_pending_sign_in_is_refused(
    http: requests.Session,
    authority: str,
    demo: Fixtures,
    idp_app: IdentityProvider,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(idp_app, "pending_lifetime", 0)

    response = pick_user(http, authorize_url(authority, demo), "alice@contoso.com")

    assert response.status_code == 400


def test_cancel_returns_access_denied_with_state(
    http: requests.Session, authority: str, demo: Fixtures
) -> None:
    response = pick_user(http, authorize_url(authority, demo), None, action="cancel")

    assert response.status_code == 302
    params = query_of(response)
    assert params["error"] == "access_denied"
    assert params["state"] == "state-123"
    assert "code" not in params


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        pytest.param({"response_type": "token"}, "unsupported_response_type", id="token"),
        pytest.param({"code_challenge": None}, "invalid_request", id="no-pkce"),
        pytest.param({"code_challenge_method": "plain"}, "invalid_request", id="plain-pkce"),
        pytest.param({"code_challenge": "short"}, "invalid_request", id="bad-challenge"),
        pytest.param({"scope": f"profile {DATA_READ}"}, "invalid_scope", id="no-openid"),
        pytest.param({"scope": "openid User.Read"}, "invalid_scope", id="unknown-scope"),
        pytest.param(
            {"scope": "openid api://FoundationaLLM-Core/Data.Write"}, "invalid_scope", id="api"
        ),
        pytest.param({"prompt": "none"}, "login_required", id="prompt-none"),
        pytest.param({"prompt": "bogus"}, "invalid_request", id="prompt-bogus"),
        pytest.param({"response_mode": "fragment"}, "invalid_request", id="fragment"),
    ],
)
def test_bad_authorize_requests_are_redirected_with_error_and_state(
    http: requests.Session,
    authority: str,
    demo: Fixtures,
    overrides: dict[str, str | None],
    error: str,
) -> None:
    response = http.get(authorize_url(authority, demo, **overrides), allow_redirects=False)

    assert response.status_code == 302
    assert response.headers["Location"].startswith(f"{REDIRECT_URI}?")
    params = query_of(response)
    assert params["error"] == error
    assert params["error_description"].startswith("AADSTS")
    assert params["state"] == "state-123"


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({"client_id": "00000000-0000-0000-0000-00000000beef"}, id="unknown-client"),
        pytest.param({"client_id": None}, id="no-client"),
        pytest.param({"redirect_uri": None}, id="no-redirect-uri"),
        pytest.param({"redirect_uri": "https://evil.example/auth/callback"}, id="foreign"),
        pytest.param({"redirect_uri": "http://127.0.0.1:8000/other"}, id="other-path"),
        pytest.param({"redirect_uri": "https://127.0.0.1:8000/auth/callback"}, id="https"),
        pytest.param(
            {"redirect_uri": "http://127.0.0.1:8000@evil.example/auth/callback"}, id="userinfo"
        ),
        pytest.param(
            {"redirect_uri": "http://localhost.evil.example:8000/auth/callback"}, id="host-prefix"
        ),
        pytest.param({"redirect_uri": "http://127.0.0.1:99999/auth/callback"}, id="bad-port"),
        pytest.param({"redirect_uri": f"{REDIRECT_URI}#frag"}, id="fragment"),
        pytest.param(
            {"redirect_uri": REDIRECT_URI, "response_type": "token", "client_id": "x"},
            id="unknown-client-with-other-errors",
        ),
    ],
)
def test_unverified_client_or_redirect_uri_gets_an_error_page_never_a_redirect(
    http: requests.Session, authority: str, demo: Fixtures, overrides: dict[str, str | None]
) -> None:
    response = http.get(authorize_url(authority, demo, **overrides), allow_redirects=False)

    assert response.status_code == 400
    assert "Location" not in response.headers
    assert response.headers["Content-Type"].startswith("text/html")
    assert "Sign-in error" in response.text


def test_error_page_escapes_reflected_input(
    http: requests.Session, authority: str, demo: Fixtures
) -> None:
    response = http.get(authorize_url(authority, demo, client_id="<script>alert(1)</script>"))

    assert response.status_code == 400
    assert "<script>" not in response.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text


def test_authorize_accepts_a_post_form(
    http: requests.Session, authority: str, demo: Fixtures
) -> None:
    url = authorize_url(authority, demo)
    base, query = url.split("?", 1)

    response = http.post(base, data=dict(parse_qsl(query)))

    assert response.status_code == 200
    assert parse_page(response.text).forms[0].fields["request_id"]


# Logout


def test_logout_returns_to_a_registered_loopback_uri_on_any_port(
    http: requests.Session, endpoint: Callable[[str], str]
) -> None:
    response = http.get(
        endpoint("oauth2/v2.0/logout"),
        params={"post_logout_redirect_uri": "http://localhost:43210/", "state": "bye"},
        allow_redirects=False,
    )

    assert response.status_code == 302
    assert response.headers["Location"] == "http://localhost:43210/?state=bye"


@pytest.mark.parametrize(
    ("target", "note"),
    [
        pytest.param("https://evil.example/", True, id="unregistered"),
        pytest.param(None, False, id="none"),
    ],
)
def test_logout_without_a_registered_target_shows_signed_out_page(
    http: requests.Session, endpoint: Callable[[str], str], target: str | None, note: bool
) -> None:
    response = http.get(
        endpoint("oauth2/v2.0/logout"),
        params={"post_logout_redirect_uri": target} if target else {},
        allow_redirects=False,
    )

    assert response.status_code == 200
    assert "Location" not in response.headers
    assert "You have signed out" in response.text
    assert ("not registered" in response.text) is note


# Hardening: bad input gets a clear 4xx, never a 500

HTML_PAGE = None  # the error column for browser endpoints: they answer with an HTML page


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "error"),
    [
        pytest.param(
            "POST",
            "oauth2/v2.0/token",
            {"json": {"grant_type": "x"}},
            400,
            "invalid_request",
            id="json-body",
        ),
        pytest.param("GET", "oauth2/v2.0/token", {}, 405, "invalid_request", id="token-get"),
        pytest.param(
            "POST",
            "oauth2/v2.0/token",
            {"data": {"grant_type": "password"}},
            400,
            "unsupported_grant_type",
            id="password-grant",
        ),
        pytest.param(
            "POST",
            "oauth2/v2.0/token",
            {"data": {"x": "y" * 100_000}},
            413,
            "invalid_request",
            id="huge-body",
        ),
        pytest.param(
            "POST",
            "oauth2/v2.0/token",
            {"data": "grant_type=a&grant_type=b"},
            400,
            "invalid_request",
            id="repeated-param",
        ),
        pytest.param(
            "POST",
            "oauth2/v2.0/token",
            {"data": f"grant_type={'x' * 5000}"},
            400,
            "invalid_request",
            id="long-param",
        ),
        pytest.param(
            "POST",
            "oauth2/v2.0/token",
            {"data": b"grant_type=%FF%FE\xff"},
            400,
            "invalid_request",
            id="bad-utf8",
        ),
        pytest.param(
            "POST",
            "oauth2/v2.0/token",
            {
                "data": b"--x\r\ngarbage",
                "headers": {"Content-Type": "multipart/form-data; boundary=x"},
            },
            400,
            "invalid_request",
            id="bad-multipart",
        ),
        pytest.param(
            "POST",
            "oauth2/v2.0/token",
            {
                "data": {"grant_type": "client_credentials", "scope": APP_SCOPE},
                "headers": {"Authorization": "Basic !!!not-base64"},
            },
            401,
            "invalid_client",
            id="bad-basic",
        ),
        pytest.param(
            "POST",
            "oauth2/v2.0/token",
            {"data": "%%%=&&&=%"},
            400,
            "invalid_request",
            id="bad-urlencoding",
        ),
        pytest.param("GET", "v2.0/.well-known/nope", {}, 404, "invalid_request", id="unknown-path"),
        pytest.param("POST", "discovery/v2.0/keys", {}, 405, "invalid_request", id="keys-post"),
        pytest.param("OPTIONS", "oauth2/v2.0/token", {}, 405, "invalid_request", id="options"),
        pytest.param("POST", "login", {"data": {}}, 400, HTML_PAGE, id="login-empty"),
        pytest.param("GET", "login", {}, 405, HTML_PAGE, id="login-get"),
        pytest.param(
            "POST",
            "oauth2/v2.0/authorize",
            {"data": {"x": "y" * 100_000}},
            413,
            HTML_PAGE,
            id="authorize-huge",
        ),
        pytest.param("DELETE", "oauth2/v2.0/logout", {}, 405, HTML_PAGE, id="logout-delete"),
    ],
)
def test_malformed_requests_get_4xx(
    http: requests.Session,
    endpoint: Callable[[str], str],
    method: str,
    path: str,
    kwargs: dict[str, Any],
    status: int,
    error: str | None,
) -> None:
    """API endpoints answer with an OAuth JSON error, browser endpoints with an HTML page."""
    response = http.request(method, endpoint(path), allow_redirects=False, **kwargs)

    if error is HTML_PAGE:
        assert response.status_code == status
        assert response.headers["Content-Type"].startswith("text/html")
        assert "Content-Security-Policy" in response.headers
    else:
        assert_json_error(response, status, error)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"grant_type": "authorization_code"}, id="no-code"),
        pytest.param({"grant_type": "authorization_code", "code": "forged"}, id="forged-code"),
        pytest.param({"grant_type": "refresh_token", "refresh_token": "forged"}, id="forged-rt"),
        pytest.param({"grant_type": "refresh_token"}, id="no-rt"),
        pytest.param(
            {"grant_type": "refresh_token", "refresh_token": "x", "scope": "openid Mail.Send"},
            id="bad-scope",
        ),
        pytest.param({"grant_type": "client_credentials"}, id="no-scope"),
    ],
)
def test_bad_grants_from_an_authenticated_client_get_400(
    http: requests.Session, endpoint: Callable[[str], str], demo: Fixtures, data: dict[str, str]
) -> None:
    response = post_token(http, endpoint("oauth2/v2.0/token"), data, demo)

    assert response.status_code == 400
    assert response.json()["error"] in {"invalid_request", "invalid_grant", "invalid_scope"}


@pytest.mark.parametrize(
    "path",
    [
        "v2.0/.well-known/openid-configuration",
        "discovery/v2.0/keys",
        "oauth2/v2.0/authorize",
        "oauth2/v2.0/logout",
    ],
)
def test_unknown_tenant_is_404(http: requests.Session, idp: RunningServer, path: str) -> None:
    response = http.get(f"{idp.url}/11111111-2222-3333-4444-555555555555/{path}")

    assert response.status_code == 404
    assert "not found" in response.text


def test_unknown_tenant_token_endpoint_is_404_json(
    http: requests.Session, idp: RunningServer
) -> None:
    response = http.post(f"{idp.url}/common/oauth2/v2.0/token", data={"grant_type": "x"})

    assert assert_json_error(response, 404, "invalid_request")["error_codes"] == [90002]


# The command line


def _idp_command(port: int, home: Path) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ, "DEVSTACK_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    return [sys.executable, "-m", "devstack.idp", "--port", str(port)], env


def _read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """The next stdout line, waiting for it to appear (or the process to end)."""
    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if selector.select(deadline - time.monotonic()):
                return proc.stdout.readline()
    raise AssertionError("no output from the identity provider")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_listening(proc: subprocess.Popen[str], port: int, timeout: float) -> None:
    """The banner is printed just before the bind, so wait until connections are accepted."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except ConnectionRefusedError:
            continue
    raise AssertionError("the identity provider did not start listening")


def test_cli_serves_and_prints_the_discovery_url(
    devstack_home: Path, demo: Fixtures, http: requests.Session
) -> None:
    port = _free_port()
    command, env = _idp_command(port, devstack_home)
    base = f"https://127.0.0.1:{port}/{demo.tenant_id}"
    with subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=stops_on_sigint,
    ) as proc:
        try:
            assert f"{base}/v2.0/.well-known/openid-configuration" in _read_line(proc, timeout=20)
            _wait_listening(proc, port, timeout=20)
            discovery = http.get(f"{base}/v2.0/.well-known/openid-configuration").json()
            assert discovery["issuer"] == f"{base}/v2.0"
        finally:
            assert interrupt(proc, timeout=20) == 0


def test_cli_exits_1_when_the_port_is_taken(devstack_home: Path, idp: RunningServer) -> None:
    command, env = _idp_command(idp.port, devstack_home)

    result = subprocess.run(
        command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=30, check=False
    )

    assert result.returncode == 1
    assert f"Cannot listen on 127.0.0.1:{idp.port}" in result.stderr
    assert "openid-configuration" not in result.stdout
