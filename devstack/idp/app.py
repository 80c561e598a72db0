"""The IdP's WSGI app: Entra v2 URL layout under /{tenantId}/."""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import HTTPException, MethodNotAllowed
from werkzeug.routing import Map, MapAdapter, Rule
from werkzeug.utils import redirect
from werkzeug.wrappers import Request, Response

from devstack.config import IDP_HOST, Client, Fixtures, User, fixtures, issuer, state_dir
from devstack.idp import graph, pages
from devstack.idp.oauth import (
    GRAPH_AUDIENCE,
    GRAPH_SCOPES,
    MAX_PARAM_LENGTH,
    OAuthError,
    Scopes,
    client_info,
    invalid_request,
    parse_scopes,
    pkce_challenge_valid,
    pkce_verified,
    redirect_uri_registered,
    required,
    secrets_equal,
    single,
    with_query,
)
from devstack.idp.store import (
    Grant,
    IssuedCode,
    Outcome,
    PendingAuthorization,
    Redemption,
    Store,
)
from devstack.legacy.store import audience as legacy_audience
from devstack.pki import Pki, ensure_pki
from devstack.serve import RunningServer, server_ssl_context, start_in_thread
from devstack.tokens import (
    ACCESS_TOKEN_LIFETIME,
    app_access_token,
    delegated_access_token,
    id_token,
    jwks,
)

log = logging.getLogger("devstack.idp")

MAX_BODY = 64 * 1024
RESPONSE_MODES = ("query", "form_post")
PROMPTS = frozenset({"login", "select_account", "consent", "create"})
# Endpoints a browser visits: their errors are HTML pages, everything else answers JSON.
BROWSER_ENDPOINTS = frozenset({"authorize", "login", "logout"})
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


class IdpRequest(Request):
    # Every legitimate request is a few KiB; refuse more before parsing it.
    max_content_length = MAX_BODY
    max_form_memory_size = MAX_BODY


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        json.dumps(body), status=status, mimetype="application/json", headers=headers or {}
    )


def _params(request: Request) -> MultiDict[str, str]:
    """OAuth browser endpoints take their parameters from the query (GET) or the form (POST)."""
    return request.args if request.method == "GET" else request.form


def _lenient_state(params: MultiDict[str, str]) -> str | None:
    """The state to echo in an error, even when the request is otherwise broken."""
    state = params.get("state")
    return state if state and len(state) <= MAX_PARAM_LENGTH else None


class IdentityProvider:
    """WSGI app. `base_url` (https://host:port) is set once the socket is bound.

    Test knobs, in seconds (0 makes the item expire at once): `access_token_lifetime`,
    `code_lifetime`, `pending_lifetime`, `refresh_token_lifetime`.
    """

    def __init__(self, pki: Pki, fixtures: Fixtures, base_url: str = "") -> None:
        self.pki = pki
        self.fixtures = fixtures
        self.base_url = base_url
        self.access_token_lifetime = ACCESS_TOKEN_LIFETIME
        self.code_lifetime = 300
        self.pending_lifetime = 600
        self.refresh_token_lifetime = 24 * 3600
        self.store = Store()
        self.url_map = Map(
            [
                Rule(
                    "/<tenant>/v2.0/.well-known/openid-configuration",
                    endpoint="discovery",
                    methods=["GET"],
                ),
                Rule("/<tenant>/discovery/v2.0/keys", endpoint="keys", methods=["GET"]),
                Rule(
                    "/<tenant>/oauth2/v2.0/authorize",
                    endpoint="authorize",
                    methods=["GET", "POST"],
                ),
                Rule("/<tenant>/login", endpoint="login", methods=["POST"]),
                Rule("/<tenant>/oauth2/v2.0/token", endpoint="token", methods=["POST"]),
                Rule("/<tenant>/oauth2/v2.0/logout", endpoint="logout", methods=["GET", "POST"]),
                Rule("/v1.0/users/<key>", endpoint="graph_user", methods=["GET"]),
            ],
            # Never answer with a redirect to a "corrected" path: a client bug should show.
            strict_slashes=False,
            merge_slashes=False,
        )

    @property
    def issuer(self) -> str:
        return issuer(self.base_url, self.fixtures.tenant_id)

    def authority_url(self, path: str) -> str:
        return f"{self.base_url}/{self.fixtures.tenant_id}/{path}"

    # Discovery

    def on_discovery(self, request: Request) -> Response:
        return json_response(
            {
                "issuer": self.issuer,
                "authorization_endpoint": self.authority_url("oauth2/v2.0/authorize"),
                "token_endpoint": self.authority_url("oauth2/v2.0/token"),
                "end_session_endpoint": self.authority_url("oauth2/v2.0/logout"),
                "jwks_uri": self.authority_url("discovery/v2.0/keys"),
                "response_types_supported": ["code"],
                "response_modes_supported": list(RESPONSE_MODES),
                "subject_types_supported": ["pairwise"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "scopes_supported": ["openid", "profile", "email", "offline_access"],
                "token_endpoint_auth_methods_supported": [
                    "client_secret_post",
                    "client_secret_basic",
                ],
                "code_challenge_methods_supported": ["S256"],
                "grant_types_supported": [
                    "authorization_code",
                    "refresh_token",
                    "client_credentials",
                ],
                "claims_supported": [
                    "sub",
                    "iss",
                    "aud",
                    "exp",
                    "iat",
                    "nbf",
                    "name",
                    "preferred_username",
                    "upn",
                    "oid",
                    "tid",
                    "roles",
                    "nonce",
                ],
                "tenant_region_scope": "NA",
            }
        )

    def on_keys(self, request: Request) -> Response:
        return json_response(jwks(self.pki))

    # Authorize: validate, show the user picker, then answer the client

    def on_authorize(self, request: Request) -> Response:
        params = _params(request)
        try:
            client = self._authorize_client(params)
            redirect_uri = self._authorize_redirect_uri(params, client)
        except OAuthError as exc:
            # RFC 6749 4.1.2.1: never redirect to an unverified client or redirect URI.
            return pages.error(exc.description, exc.status, exc.aadsts)
        mode = params.get("response_mode")
        mode = mode if mode in RESPONSE_MODES else "query"
        try:
            pending = self._pending_authorization(params, client, redirect_uri)
        except OAuthError as exc:
            log.info("authorize refused: %s", exc.full_description)
            return self._answer_client(
                redirect_uri, mode, exc.redirect_params(_lenient_state(params))
            )
        request_id = self.store.pending.issue(pending, self.pending_lifetime)
        return pages.picker(
            client.name,
            f"/{self.fixtures.tenant_id}/login",
            request_id,
            self.fixtures.users,
            pending.login_hint,
        )

    def _authorize_client(self, params: MultiDict[str, str]) -> Client:
        client_id = single(params, "client_id")
        client = self.fixtures.client(client_id) if client_id else None
        if client is None:
            raise OAuthError(
                "unauthorized_client",
                f"Application with identifier '{client_id or ''}' was not found in the tenant.",
                700016,
            )
        return client

    def _authorize_redirect_uri(self, params: MultiDict[str, str], client: Client) -> str:
        # Entra falls back to a registered URI when none is sent; msal always sends one,
        # and requiring it keeps the code bound to an explicit URI.
        redirect_uri = single(params, "redirect_uri")
        if redirect_uri is None or not redirect_uri_registered(redirect_uri, client.redirect_uris):
            raise OAuthError(
                "invalid_request",
                f"The redirect URI '{redirect_uri or ''}' specified in the request does not "
                f"match the redirect URIs configured for the application '{client.client_id}'.",
                50011,
            )
        return redirect_uri

    def _pending_authorization(
        self, params: MultiDict[str, str], client: Client, redirect_uri: str
    ) -> PendingAuthorization:
        mode = single(params, "response_mode") or "query"
        if mode not in RESPONSE_MODES:
            raise invalid_request(f"The response_mode '{mode}' is not supported.", 9002313)
        response_type = required(params, "response_type")
        if response_type != "code":
            raise OAuthError(
                "unsupported_response_type",
                f"The response_type '{response_type}' is not supported; use 'code'.",
                9002313,
            )
        scopes = parse_scopes(
            required(params, "scope"),
            self.fixtures.core_api_audience,
            self.fixtures.core_api_scopes,
        )
        if not scopes.openid:
            raise OAuthError("invalid_scope", "The scope must include 'openid'.", 70011)
        self._check_prompt(single(params, "prompt"))
        return PendingAuthorization(
            client_id=client.client_id,
            redirect_uri=redirect_uri,
            response_mode=mode,
            scopes=scopes,
            state=single(params, "state"),
            nonce=single(params, "nonce"),
            code_challenge=self._code_challenge(params),
            login_hint=single(params, "login_hint"),
        )

    @staticmethod
    def _code_challenge(params: MultiDict[str, str]) -> str:
        challenge = single(params, "code_challenge")
        if challenge is None:
            raise invalid_request("PKCE is required: send code_challenge.", 9002313)
        if single(params, "code_challenge_method") != "S256":
            raise invalid_request("code_challenge_method must be 'S256'.", 9002313)
        if not pkce_challenge_valid(challenge):
            raise invalid_request("The code_challenge is malformed.", 9002313)
        return challenge

    @staticmethod
    def _check_prompt(prompt: str | None) -> None:
        values = set(prompt.split()) if prompt else set()
        if values == {"none"}:
            # There is no IdP session to reuse: every sign-in goes through the picker.
            raise OAuthError(
                "login_required", "The user must sign in; prompt=none cannot be honoured.", 50058
            )
        if not values <= PROMPTS:
            raise invalid_request(f"The prompt value '{prompt}' is not supported.", 9002313)

    def on_login(self, request: Request) -> Response:
        redemption = self.store.pending.redeem(request.form.get("request_id", ""))
        pending = redemption.value
        if redemption.outcome is not Outcome.VALID or pending is None:
            return pages.error("This sign-in request has expired or was already used.", 400)
        if request.form.get("action") == "cancel":
            error = OAuthError("access_denied", "The user cancelled the sign-in.", 65004)
            return self._answer_client(
                pending.redirect_uri, pending.response_mode, error.redirect_params(pending.state)
            )
        user = self.fixtures.user(request.form.get("upn", ""))
        if user is None:
            return pages.error("The chosen user does not exist in this tenant.", 400, 50034)
        grant = Grant(pending.client_id, user.upn, pending.scopes, family=uuid.uuid4().hex)
        code = self.store.codes.issue(
            IssuedCode(grant, pending.redirect_uri, pending.code_challenge, pending.nonce),
            self.code_lifetime,
        )
        log.info("signed in %s for client %s", user.upn, pending.client_id)
        return self._answer_client(
            pending.redirect_uri,
            pending.response_mode,
            {
                "code": code,
                "client_info": client_info(user.oid, self.fixtures.tenant_id),
                "state": pending.state,
                "session_state": str(uuid.uuid4()),
            },
        )

    @staticmethod
    def _answer_client(redirect_uri: str, mode: str, params: dict[str, str | None]) -> Response:
        if mode == "form_post":
            return pages.form_post(redirect_uri, params)
        response = redirect(with_query(redirect_uri, params), 302)
        response.headers.update(NO_STORE)
        return response

    # Logout

    def on_logout(self, request: Request) -> Response:
        # The IdP keeps no sign-in session (every sign-in shows the picker), so signing
        # out only has to send the user back.
        params = _params(request)
        target = params.get("post_logout_redirect_uri")
        registered = [u for c in self.fixtures.clients for u in c.post_logout_redirect_uris]
        if target and redirect_uri_registered(target, registered):
            return redirect(with_query(target, {"state": _lenient_state(params)}), 302)
        return pages.signed_out(unregistered_return=bool(target))

    # Token endpoint

    def on_token(self, request: Request) -> Response:
        form = request.form
        grant_type = required(form, "grant_type")
        grants = {
            "authorization_code": self._grant_authorization_code,
            "refresh_token": self._grant_refresh_token,
            "client_credentials": self._grant_client_credentials,
        }
        if grant_type not in grants:
            raise OAuthError(
                "unsupported_grant_type", f"The grant type '{grant_type}' is not supported.", 70003
            )
        client = self._authenticate_client(request)
        return json_response(grants[grant_type](client, form), headers=NO_STORE)

    def _authenticate_client(self, request: Request) -> Client:
        """client_secret_post or client_secret_basic (exactly one of them, RFC 6749 2.3)."""
        form_id = single(request.form, "client_id")
        form_secret = single(request.form, "client_secret")
        auth = request.authorization
        if auth is not None and auth.type == "basic":
            if form_secret is not None:
                raise invalid_request("Use one client authentication method, not two.", 9002313)
            # RFC 6749 2.3.1: both parts are form-encoded before Basic encoding.
            client_id = unquote_plus(auth.username or "")
            secret: str | None = unquote_plus(auth.password or "")
            if form_id is not None and form_id != client_id:
                raise _invalid_client("client_id does not match the credentials.", 700016)
        else:
            client_id, secret = form_id or "", form_secret
        client = self.fixtures.client(client_id)
        if client is None:
            raise _invalid_client(f"Application '{client_id}' was not found.", 700016)
        if not secret:
            raise _invalid_client("The request must contain 'client_secret'.", 7000218)
        if not secrets_equal(secret, client.client_secret):
            raise _invalid_client("Invalid client secret provided.", 7000215)
        return client

    def _grant_authorization_code(
        self, client: Client, form: MultiDict[str, str]
    ) -> dict[str, Any]:
        redemption = self.store.codes.redeem(required(form, "code"))
        issued = self._redeemed(redemption, "authorization code", lambda c: c.grant.family)
        # The code is spent from here on, so a failed guess at the checks below burns it.
        if issued.grant.client_id != client.client_id:
            raise _invalid_grant("The code was issued to another client.", 70000)
        if single(form, "redirect_uri") != issued.redirect_uri:
            raise _invalid_grant("redirect_uri differs from the authorize request.", 70000)
        if not pkce_verified(single(form, "code_verifier"), issued.code_challenge):
            raise _invalid_grant(
                "The code_verifier does not match the code_challenge of the authorize request.",
                501481,
            )
        return self._user_tokens(
            client, issued.grant, issued.grant.scopes, issued.nonce, issued.grant.scopes.offline
        )

    def _grant_refresh_token(self, client: Client, form: MultiDict[str, str]) -> dict[str, Any]:
        refresh_token = required(form, "refresh_token")
        # Parse the scope before spending the token: a bad request must not cost the client it.
        raw_scope = single(form, "scope")
        scopes = (
            parse_scopes(raw_scope, self.fixtures.core_api_audience, self.fixtures.core_api_scopes)
            if raw_scope
            else None
        )
        # Entra rotates refresh tokens but keeps the previous one valid until it expires,
        # so two requests refreshing at once (parallel htmx cards) both succeed.
        redemption = self.store.refresh_tokens.lookup(refresh_token)
        grant = self._redeemed(redemption, "refresh token", lambda g: g.family)
        if grant.client_id != client.client_id:
            raise _invalid_grant("The refresh token was issued to another client.", 70000)
        # Rotation: the client gets a new refresh token every time.
        return self._user_tokens(
            client, grant, grant.scopes if scopes is None else scopes, None, True
        )

    def _redeemed[T](self, redemption: Redemption[T], what: str, family: Callable[[T], str]) -> T:
        """The redeemed value, or invalid_grant; a replay revokes the whole grant."""
        if redemption.outcome is Outcome.REUSED and redemption.value is not None:
            self.store.revoke_family(family(redemption.value))
            log.warning("%s replayed: revoked the refresh tokens of that sign-in", what)
            raise _invalid_grant(f"The {what} was already redeemed.", 54005)
        if redemption.outcome is Outcome.EXPIRED:
            raise _invalid_grant(f"The {what} has expired.", 70008)
        if redemption.outcome is not Outcome.VALID or redemption.value is None:
            raise _invalid_grant(f"The {what} is not valid.", 9002313)
        return redemption.value

    def _grant_client_credentials(
        self, client: Client, form: MultiDict[str, str]
    ) -> dict[str, Any]:
        # CoreAPI, or the legacy memory stores (docs/legacy-stores.md), one resource a token;
        # or Microsoft Graph, whose tokens carry the client's Graph permissions instead.
        requested = required(form, "scope").split()
        audiences = (self.fixtures.core_api_audience, legacy_audience())
        audience = next((a for a in audiences if requested == [f"{a}/.default"]), None)
        roles = None
        if requested in ([f"{r}/.default"] for r in (graph.GRAPH_RESOURCE, GRAPH_AUDIENCE)):
            audience, roles = GRAPH_AUDIENCE, client.graph_roles
        if audience is None:
            expected = f"{self.fixtures.core_api_audience}/.default"
            raise OAuthError(
                "invalid_scope",
                f"Client credential flows must request exactly the scope '{expected}'.",
                1002012,
            )
        token = app_access_token(
            self.pki,
            self.fixtures,
            self.issuer,
            client,
            lifetime=self.access_token_lifetime,
            audience=audience,
            roles=roles,
        )
        return {
            "token_type": "Bearer",
            "expires_in": self.access_token_lifetime,
            "ext_expires_in": self.access_token_lifetime,
            "access_token": token,
        }

    def _user_tokens(
        self,
        client: Client,
        grant: Grant,
        scopes: Scopes,
        nonce: str | None,
        issue_refresh_token: bool,
    ) -> dict[str, Any]:
        user = self.fixtures.user(grant.upn)
        if user is None:
            raise _invalid_grant("The user no longer exists.", 50034)
        access_token, scope = self._access_token(client, user, scopes)
        body: dict[str, Any] = {
            "token_type": "Bearer",
            "scope": scope,
            "expires_in": self.access_token_lifetime,
            "ext_expires_in": self.access_token_lifetime,
            "access_token": access_token,
        }
        if issue_refresh_token:
            body["refresh_token"] = self.store.refresh_tokens.issue(
                grant, self.refresh_token_lifetime
            )
        if scopes.openid:
            body["id_token"] = id_token(self.pki, self.fixtures, self.issuer, user, client, nonce)
        body["client_info"] = client_info(user.oid, self.fixtures.tenant_id)
        return body

    def _access_token(self, client: Client, user: User, scopes: Scopes) -> tuple[str, str]:
        """The delegated access token and the `scope` string that describes it."""
        audience = self.fixtures.core_api_audience
        if scopes.api:
            token = delegated_access_token(
                self.pki,
                self.fixtures,
                self.issuer,
                user,
                client,
                scopes.api,
                lifetime=self.access_token_lifetime,
            )
            return token, " ".join(f"{audience}/{s}" for s in scopes.api)
        # OIDC scopes only: a Graph-audience token, as Entra gives. Same claims, other
        # audience, so CoreAPI (real or emulated) refuses it.
        graph_scopes = tuple(s for s in GRAPH_SCOPES if s in scopes.oidc)
        graph = dataclasses.replace(self.fixtures, core_api_audience=GRAPH_AUDIENCE)
        token = delegated_access_token(
            self.pki,
            graph,
            self.issuer,
            user,
            client,
            graph_scopes,
            lifetime=self.access_token_lifetime,
        )
        return token, " ".join(graph_scopes)

    # Dispatch

    def dispatch(self, request: Request) -> Response:
        adapter = self.url_map.bind_to_environ(request.environ)
        endpoint = ""
        try:
            endpoint, values = adapter.match()
            if endpoint == "graph_user":  # Microsoft Graph has no tenant in its paths
                return graph.user(request, values["key"], self.pki, self.fixtures, self.issuer)
            if values["tenant"] != self.fixtures.tenant_id:
                raise OAuthError(
                    "invalid_request", f"Tenant '{values['tenant']}' not found.", 90002, 404
                )
            return getattr(self, f"on_{endpoint}")(request)
        except HTTPException as exc:
            if isinstance(exc, MethodNotAllowed):
                endpoint = _endpoint_allowing(adapter, exc.valid_methods or ())
            return self._error(endpoint, request, _from_http(exc), exc)
        except OAuthError as exc:
            return self._error(endpoint, request, exc)
        except Exception:
            # Last resort: every expected bad input is answered above with a 4xx.
            log.exception("unexpected error on %s %s", request.method, request.path)
            error = OAuthError("server_error", "The identity provider failed.", None, 500)
            return self._error("", request, error)

    def _error(
        self,
        endpoint: str,
        request: Request,
        error: OAuthError,
        http: HTTPException | None = None,
    ) -> Response:
        if endpoint in BROWSER_ENDPOINTS:
            response = pages.error(error.description, error.status, error.aadsts)
        else:
            response = json_response(
                error.json_body(_correlation_id(request)), error.status, NO_STORE
            )
        if error.error == "invalid_client":
            response.headers["WWW-Authenticate"] = 'Basic realm="devstack"'
        if isinstance(http, MethodNotAllowed) and http.valid_methods:
            response.headers["Allow"] = ", ".join(http.valid_methods)
        return response

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        response = self.dispatch(IdpRequest(environ))
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        return response(environ, start_response)


def _invalid_client(description: str, aadsts: int) -> OAuthError:
    return OAuthError("invalid_client", description, aadsts, 401)


def _invalid_grant(description: str, aadsts: int) -> OAuthError:
    return OAuthError("invalid_grant", description, aadsts)


def _from_http(exc: HTTPException) -> OAuthError:
    status = exc.code or 400
    aadsts = 900561 if isinstance(exc, MethodNotAllowed) else None
    return OAuthError("invalid_request", exc.description or exc.name, aadsts, status)


def _endpoint_allowing(adapter: MapAdapter, methods: Iterable[str]) -> str:
    """The endpoint a 405 was about, so that a browser endpoint still answers with a page."""
    for method in methods:
        try:
            return str(adapter.match(method=method)[0])
        except HTTPException:
            continue
    return ""


def _correlation_id(request: Request) -> str:
    """Entra echoes the caller's client-request-id (msal sends one) when it is a GUID."""
    try:
        return str(uuid.UUID(request.headers.get("client-request-id", "")))
    except ValueError:
        return str(uuid.uuid4())


def build(
    home: Path | None = None, fixtures_: Fixtures | None = None
) -> tuple[IdentityProvider, Pki]:
    pki = ensure_pki(home or state_dir())
    return IdentityProvider(pki, fixtures_ or fixtures()), pki


def start(
    host: str = IDP_HOST, port: int = 0, home: Path | None = None, fixtures_: Fixtures | None = None
) -> RunningServer:
    """Start on a free port in a thread (tests); the caller stops it."""
    app, pki = build(home, fixtures_)
    running = start_in_thread(
        app, host, port, server_ssl_context(str(pki.server_cert), str(pki.server_key))
    )
    app.base_url = running.url
    return running


def provider(running: RunningServer) -> IdentityProvider:
    """The app behind a server from `start`, to turn its test knobs."""
    app = running.server.app
    if not isinstance(app, IdentityProvider):
        raise TypeError("not an identity provider server")
    return app
