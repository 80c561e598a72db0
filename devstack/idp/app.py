"""The IdP's WSGI app: Entra v2 URL layout under /{tenantId}/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from werkzeug.exceptions import HTTPException, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from devstack.config import IDP_HOST, Fixtures, fixtures, issuer, state_dir
from devstack.pki import Pki, ensure_pki
from devstack.serve import RunningServer, server_ssl_context, start_in_thread
from devstack.tokens import jwks


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        json.dumps(body), status=status, mimetype="application/json", headers=headers or {}
    )


class IdentityProvider:
    """WSGI app. `base_url` (https://host:port) is set once the socket is bound."""

    def __init__(self, pki: Pki, fixtures: Fixtures, base_url: str = "") -> None:
        self.pki = pki
        self.fixtures = fixtures
        self.base_url = base_url
        self.url_map = Map(
            [
                Rule("/<tenant>/v2.0/.well-known/openid-configuration", endpoint="discovery"),
                Rule("/<tenant>/discovery/v2.0/keys", endpoint="keys"),
            ]
        )

    @property
    def issuer(self) -> str:
        return issuer(self.base_url, self.fixtures.tenant_id)

    def authority_url(self, path: str) -> str:
        return f"{self.base_url}/{self.fixtures.tenant_id}/{path}"

    def _check_tenant(self, tenant: str) -> None:
        if tenant != self.fixtures.tenant_id:
            raise NotFound(f"Unknown tenant {tenant!r}.")

    def on_discovery(self, request: Request, tenant: str) -> Response:
        self._check_tenant(tenant)
        return json_response(
            {
                "issuer": self.issuer,
                "authorization_endpoint": self.authority_url("oauth2/v2.0/authorize"),
                "token_endpoint": self.authority_url("oauth2/v2.0/token"),
                "end_session_endpoint": self.authority_url("oauth2/v2.0/logout"),
                "jwks_uri": self.authority_url("discovery/v2.0/keys"),
                "response_types_supported": ["code"],
                "response_modes_supported": ["query", "form_post"],
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

    def on_keys(self, request: Request, tenant: str) -> Response:
        self._check_tenant(tenant)
        return json_response(jwks(self.pki))

    def dispatch(self, request: Request) -> Response:
        adapter = self.url_map.bind_to_environ(request.environ)
        try:
            endpoint, values = adapter.match()
            return getattr(self, f"on_{endpoint}")(request, **values)
        except HTTPException as exc:
            return json_response(
                {"error": "invalid_request", "error_description": exc.description},
                status=exc.code or 400,
            )

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        return self.dispatch(Request(environ))(environ, start_response)


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
