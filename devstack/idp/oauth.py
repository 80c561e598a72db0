"""OAuth 2.0 / OpenID Connect rules the IdP applies, kept free of HTTP plumbing."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit, urlunsplit

from werkzeug.datastructures import MultiDict

OIDC_SCOPES = ("openid", "profile", "email", "offline_access")
# Entra answers an OIDC-only request with a Microsoft Graph token; so does the devstack,
# so that such a token can never be replayed against CoreAPI.
GRAPH_AUDIENCE = "00000003-0000-0000-c000-000000000000"
GRAPH_SCOPES = ("openid", "profile", "email")
# RFC 8252 7.3: for loopback redirect URIs the port is chosen at run time, so Entra
# ignores it when matching. Entra does not treat the two hosts as aliases.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost"})
# Longer values are refused: nothing legitimate needs them, and they would be kept in memory.
MAX_PARAM_LENGTH = 4096
# RFC 7636 4.1 and 4.2: 43-128 unreserved characters.
_PKCE_VALUE = re.compile(r"[A-Za-z0-9\-._~]{43,128}")


class OAuthError(Exception):
    """An error the protocol defines.

    `aadsts` is the number Entra uses for the same failure, as far as it is known; a
    generic one (9002313, "request is malformed") where it is not.
    """

    def __init__(self, error: str, description: str, aadsts: int | None, status: int = 400):
        super().__init__(description)
        self.error = error
        self.description = description
        self.aadsts = aadsts
        self.status = status

    @property
    def full_description(self) -> str:
        return f"AADSTS{self.aadsts}: {self.description}" if self.aadsts else self.description

    def redirect_params(self, state: str | None) -> dict[str, str | None]:
        return {"error": self.error, "error_description": self.full_description, "state": state}

    def json_body(self, correlation_id: str) -> dict[str, Any]:
        """Entra's token endpoint error shape."""
        return {
            "error": self.error,
            "error_description": self.full_description,
            "error_codes": [self.aadsts] if self.aadsts else [],
            "timestamp": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%SZ"),
            "trace_id": str(uuid.uuid4()),
            "correlation_id": correlation_id,
        }


def invalid_request(description: str, aadsts: int | None = 900144) -> OAuthError:
    return OAuthError("invalid_request", description, aadsts)


def single(params: MultiDict[str, str], name: str) -> str | None:
    """One parameter value; RFC 6749 3.1 forbids repeating a parameter. Empty means absent."""
    values = params.getlist(name)
    if len(values) > 1:
        raise invalid_request(f"The parameter '{name}' was sent more than once.", 9002313)
    if not values or not values[0]:
        return None
    if len(values[0]) > MAX_PARAM_LENGTH:
        raise invalid_request(f"The parameter '{name}' is too long.", 90015)
    return values[0]


def required(params: MultiDict[str, str], name: str) -> str:
    value = single(params, name)
    if value is None:
        raise invalid_request(f"The request must contain the parameter '{name}'.")
    return value


@dataclass(frozen=True)
class Scopes:
    """A parsed scope request: OpenID Connect scopes and CoreAPI scope names."""

    oidc: tuple[str, ...]
    api: tuple[str, ...]  # short names, e.g. ("Data.Read",)

    @property
    def openid(self) -> bool:
        return "openid" in self.oidc

    @property
    def offline(self) -> bool:
        return "offline_access" in self.oidc


def parse_scopes(raw: str, audience: str, known: tuple[str, ...]) -> Scopes:
    """Split a scope parameter; anything other than OIDC or CoreAPI scopes is invalid_scope.

    `{audience}/.default` means every CoreAPI scope, as Entra treats it for delegated flows.
    """
    prefix = f"{audience}/"
    oidc: list[str] = []
    api: list[str] = []
    default = False
    for scope in dict.fromkeys(raw.split()):  # ordered de-duplication
        name = scope.removeprefix(prefix) if scope.startswith(prefix) else None
        if scope in OIDC_SCOPES:
            oidc.append(scope)
        elif name == ".default":
            default = True
        elif name in known:
            api.append(name)
        else:
            raise OAuthError(
                "invalid_scope", f"The scope '{scope}' is not valid for this application.", 70011
            )
    if default and api:
        raise OAuthError(
            "invalid_scope", "'.default' cannot be combined with other scopes of a resource.", 70011
        )
    return Scopes(oidc=tuple(oidc), api=known if default else tuple(api))


def _split(uri: str) -> SplitResult | None:
    try:
        parts = urlsplit(uri)
        _ = parts.port  # raises ValueError for a malformed port
    except ValueError:
        return None
    return parts


def _same_uri(candidate: str, registered: str) -> bool:
    if candidate == registered:
        return True
    cand, reg = _split(candidate), _split(registered)
    if cand is None or reg is None:
        return False
    return (
        reg.scheme == "http"
        and reg.hostname in LOOPBACK_HOSTS
        and cand.scheme == "http"
        and cand.hostname == reg.hostname
        and cand.username is None
        and cand.password is None
        and cand.path == reg.path
        and cand.query == reg.query
        and not cand.fragment
    )


def redirect_uri_registered(candidate: str, registered: Iterable[str]) -> bool:
    """Exact match, except that a loopback http URI matches on any port (RFC 8252 7.3)."""
    return any(_same_uri(candidate, uri) for uri in registered)


def with_query(uri: str, params: Mapping[str, str | None]) -> str:
    """`uri` with `params` appended to any query it already has; None values are left out."""
    parts = urlsplit(uri)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query += [(k, v) for k, v in params.items() if v is not None]
    return urlunsplit(parts._replace(query=urlencode(query)))


def pkce_challenge_valid(challenge: str) -> bool:
    return _PKCE_VALUE.fullmatch(challenge) is not None


def pkce_verified(verifier: str | None, challenge: str) -> bool:
    """RFC 7636 4.6, S256 only: BASE64URL(SHA256(verifier)) == challenge."""
    if verifier is None or _PKCE_VALUE.fullmatch(verifier) is None:
        return False
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    expected = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
    return hmac.compare_digest(expected, challenge)


def client_info(oid: str, tenant_id: str) -> str:
    """Entra's client_info: msal builds the account's home_account_id "oid.tid" from it."""
    raw = json.dumps({"uid": oid, "utid": tenant_id}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def secrets_equal(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())
