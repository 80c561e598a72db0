"""Bearer token validation against the IdP's JWKS, and who the caller acts for
(docs/architecture.md, Identity and authorization).

Token checks: RS256 only (so `alg: none` and HS256-with-the-public-key fail), signature by a
key from the IdP's JWKS, `iss` == `{idp_url}/{tenant}/v2.0`, `aud` == the CoreAPI audience,
`exp`/`nbf` with 30 s leeway. Any failure is a 401 with `WWW-Authenticate: Bearer
error="invalid_token"`. The JWKS is fetched lazily over https trusting only the dev CA
file, cached, and refetched for an unknown `kid` at most every 30 s; if the IdP cannot be
reached when keys are needed the answer is 503.

Identity: a delegated token (it has `scp`) must carry `Data.Read` (else 403
insufficient_scope) and is always its own user; `X-USER-IDENTITY` is ignored. An app-only
token (no `scp`) has no user of its own: it must come from the substitution principal and
carry an `X-USER-IDENTITY` whose `upn` fully matches the substitution pattern (else 403);
a malformed header is a 400.
"""

from __future__ import annotations

import json
import re
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from jwt import PyJWKClient
from jwt.exceptions import PyJWKClientConnectionError, PyJWKClientError, PyJWKSetError, PyJWTError

from devstack import emulators
from devstack.config import Fixtures, idp_base_url
from devstack.coreapi.problems import ApiError, invalid
from devstack.pki import ensure_pki

USER_IDENTITY_HEADER = "X-USER-IDENTITY"
REQUIRED_SCOPE = "Data.Read"
ALGORITHMS = ["RS256"]
LEEWAY_SECONDS = 30
JWKS_TIMEOUT_SECONDS = 5
JWKS_REFETCH_COOLDOWN_SECONDS = 30
MAX_IDENTITY_HEADER_CHARS = 16 * 1024
MAX_IDENTITY_FIELD_CHARS = 1024
MAX_GROUP_IDS = 1000


@dataclass(frozen=True)
class Identity:
    """UnifiedUserIdentity of the effective user."""

    upn: str
    user_name: str | None
    name: str | None
    user_id: str | None
    group_ids: tuple[str, ...] = ()

    @property
    def owner_key(self) -> str:
        """Ownership is by UPN, compared case-insensitively
        (docs/architecture.md, What the real CoreAPI does beyond the contract).
        """
        return self.upn.casefold()


def unauthorized(description: str) -> ApiError:
    # The description sits inside a quoted-string; PyJWT messages may themselves hold quotes.
    quoted = description.replace("\\", "").replace('"', "'")
    header = f'Bearer error="invalid_token", error_description="{quoted}"'
    return ApiError(401, description, headers={"WWW-Authenticate": header})


def forbidden(detail: str) -> ApiError:
    return ApiError(403, detail)


class TokenValidator:
    """Checks bearer tokens against the IdP's published keys, issuer and one audience."""

    def __init__(self, idp_url: str, tenant_id: str, audience: str, ca_file: Path) -> None:
        base = idp_url.rstrip("/")
        self.issuer = f"{base}/{tenant_id}/v2.0"
        self.audience = audience
        # An explicit context: REQUESTS_CA_BUNDLE-style globals must not decide whom we trust.
        context = ssl.create_default_context(cafile=str(ca_file))
        self._jwks = PyJWKClient(
            f"{base}/{tenant_id}/discovery/v2.0/keys",
            ssl_context=context,
            timeout=JWKS_TIMEOUT_SECONDS,
            cooldown_duration=JWKS_REFETCH_COOLDOWN_SECONDS,
        )

    def validate(self, authorization: str | None) -> dict[str, Any]:
        """The verified claims of the bearer token, or ApiError 401/503."""
        token = _bearer_token(authorization)
        try:
            header = jwt.get_unverified_header(token)
        except PyJWTError as exc:
            raise unauthorized("The token is malformed.") from exc
        if header.get("alg") not in ALGORITHMS:
            raise unauthorized("The token algorithm is not allowed.")
        key = self._signing_key(token)
        try:
            return jwt.decode(
                token,
                key,
                algorithms=ALGORITHMS,
                audience=self.audience,
                issuer=self.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud"]},
            )
        except PyJWTError as exc:
            raise unauthorized(f"The token is not valid: {exc}") from exc

    def _signing_key(self, token: str) -> Any:
        try:
            return self._jwks.get_signing_key_from_jwt(token).key
        except (PyJWKClientConnectionError, PyJWKSetError) as exc:
            raise ApiError(503, "The identity provider's signing keys are unavailable.") from exc
        except (PyJWKClientError, PyJWTError) as exc:
            raise unauthorized("The token is not signed by a known key.") from exc


def emulator_validator(
    home: Path, options: emulators.Options, tenant_id: str, audience: str
) -> TokenValidator:
    """An emulator's validator: the devstack IdP and its CA unless `options` name others."""
    return TokenValidator(
        options.get("idp_url") or idp_base_url(),
        tenant_id,
        audience,
        # Same home as the IdP (the devstack default) means the same CA: ensure_pki reuses it.
        options.get("ca_file") or ensure_pki(home).ca_cert,
    )


def _bearer_token(authorization: str | None) -> str:
    if not authorization:
        raise unauthorized("No bearer token was sent.")
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise unauthorized("The Authorization header is not a bearer token.")
    return token


def resolve_identity(
    claims: dict[str, Any], identity_header: str | None, fixtures: Fixtures
) -> Identity:
    if "scp" in claims:
        return _delegated_identity(claims)
    return _substituted_identity(claims, identity_header, fixtures)


def _delegated_identity(claims: dict[str, Any]) -> Identity:
    scopes = claims["scp"].split() if isinstance(claims["scp"], str) else []
    if REQUIRED_SCOPE not in scopes:
        raise ApiError(
            403,
            f"The token lacks the {REQUIRED_SCOPE} scope.",
            headers={
                "WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{REQUIRED_SCOPE}"'
            },
        )
    upn = claims.get("upn") or claims.get("preferred_username")
    if not isinstance(upn, str) or not upn:
        raise unauthorized("The token names no user (upn or preferred_username).")
    user_name = claims.get("preferred_username") or upn
    return Identity(
        upn=upn,
        user_name=user_name if isinstance(user_name, str) else upn,
        name=_optional_str(claims.get("name")),
        user_id=_optional_str(claims.get("oid")),
    )


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _substituted_identity(
    claims: dict[str, Any], identity_header: str | None, fixtures: Fixtures
) -> Identity:
    if claims.get("oid") != fixtures.substitution_principal_id:
        raise forbidden("This application is not allowed to call CoreAPI on behalf of users.")
    if identity_header is None:
        raise forbidden(f"An app-only token needs the {USER_IDENTITY_HEADER} header.")
    identity = parse_identity_header(identity_header)
    # fullmatch: a pattern without anchors must still describe the whole UPN.
    if re.fullmatch(fixtures.substitution_upn_pattern, identity.upn) is None:
        raise forbidden("The user principal name may not be substituted.")
    return identity


def _header_error(message: str) -> ApiError:
    return invalid(USER_IDENTITY_HEADER, message)


def parse_identity_header(raw: str) -> Identity:
    """UnifiedUserIdentity JSON with case-sensitive keys; unknown keys are ignored."""
    if len(raw) > MAX_IDENTITY_HEADER_CHARS:
        raise _header_error(f"The header is longer than {MAX_IDENTITY_HEADER_CHARS} characters.")
    try:
        # WSGI hands headers over as latin-1; clients send UTF-8 JSON.
        data = json.loads(raw.encode("latin-1").decode("utf-8"))
    except (UnicodeError, ValueError, RecursionError) as exc:
        raise _header_error("The header is not valid UTF-8 JSON.") from exc
    if not isinstance(data, dict):
        raise _header_error("The header must be a JSON object.")
    upn = data.get("upn")
    if not isinstance(upn, str) or not upn.strip():
        raise _header_error("The header needs a non-empty string 'upn'.")
    fields = {key: _identity_str(data, key) for key in ("upn", "name", "user_name", "user_id")}
    return Identity(
        upn=upn,
        user_name=fields["user_name"] or upn,
        name=fields["name"],
        user_id=fields["user_id"],
        group_ids=_group_ids(data.get("group_ids")),
    )


def _identity_str(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _header_error(f"'{key}' must be a string.")
    if len(value) > MAX_IDENTITY_FIELD_CHARS:
        raise _header_error(f"'{key}' is longer than {MAX_IDENTITY_FIELD_CHARS} characters.")
    _require_encodable(value, key)
    return value


def _require_encodable(value: str, key: str) -> None:
    # Lone surrogates survive json.loads but cannot be stored or sent back as UTF-8.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _header_error(f"'{key}' is not valid Unicode text.") from exc


def _group_ids(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _header_error("'group_ids' must be an array of strings.")
    if len(value) > MAX_GROUP_IDS:
        raise _header_error(f"'group_ids' has more than {MAX_GROUP_IDS} entries.")
    for item in value:
        _require_encodable(item, "group_ids")
    return tuple(value)
