"""Entra-shaped JWTs signed with the devstack key (RS256)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import jwt
from jwt.algorithms import RSAAlgorithm

from devstack.config import Client, Fixtures, User
from devstack.pki import Pki, load_signing_key

ACCESS_TOKEN_LIFETIME = 3600
ID_TOKEN_LIFETIME = 3600


def jwks(pki: Pki) -> dict[str, Any]:
    public = load_signing_key(pki.signing_key).public_key()
    jwk = RSAAlgorithm.to_jwk(public, as_dict=True)
    jwk.update({"kid": pki.kid, "use": "sig", "alg": "RS256"})
    return {"keys": [jwk]}


def _sign(pki: Pki, claims: dict[str, Any]) -> str:
    return jwt.encode(
        claims,
        load_signing_key(pki.signing_key),
        algorithm="RS256",
        headers={"kid": pki.kid, "typ": "JWT"},
    )


def _base_claims(issuer: str, tenant_id: str, audience: str, lifetime: int) -> dict[str, Any]:
    now = int(time.time())
    return {
        "aud": audience,
        "iss": issuer,
        "iat": now,
        "nbf": now,
        "exp": now + lifetime,
        "tid": tenant_id,
        "ver": "2.0",
        "uti": uuid.uuid4().hex,
    }


def _user_claims(user: User) -> dict[str, Any]:
    """Who the user is, alike in their access and id tokens (Entra v2 claim names)."""
    return {
        "sub": user.oid,
        "oid": user.oid,
        "upn": user.upn,
        "preferred_username": user.upn,
        "name": user.name,
    }


def delegated_access_token(
    pki: Pki,
    fixtures: Fixtures,
    issuer: str,
    user: User,
    client: Client,
    scopes: tuple[str, ...] | None = None,
    lifetime: int = ACCESS_TOKEN_LIFETIME,
) -> str:
    """A user's CoreAPI token: aud api://FoundationaLLM-Core, scp Data.Read."""
    claims = _base_claims(issuer, fixtures.tenant_id, fixtures.core_api_audience, lifetime)
    claims.update(
        _user_claims(user),
        scp=" ".join(scopes or fixtures.core_api_scopes),
        azp=client.client_id,
        azpacr="1",
    )
    return _sign(pki, claims)


def app_access_token(
    pki: Pki,
    fixtures: Fixtures,
    issuer: str,
    client: Client,
    lifetime: int = ACCESS_TOKEN_LIFETIME,
    audience: str | None = None,
    roles: tuple[str, ...] | None = None,
) -> str:
    """A client-credentials token: app roles, no scp, oid of the service principal.
    For CoreAPI unless another `audience` (the legacy stores', Graph's with its `roles`) is
    given."""
    claims = _base_claims(
        issuer, fixtures.tenant_id, audience or fixtures.core_api_audience, lifetime
    )
    claims.update(
        {
            "sub": client.service_principal_oid,
            "oid": client.service_principal_oid,
            "azp": client.client_id,
            "azpacr": "1",
            "idtyp": "app",
            "roles": list(client.api_roles if roles is None else roles),
        }
    )
    return _sign(pki, claims)


def id_token(
    pki: Pki,
    fixtures: Fixtures,
    issuer: str,
    user: User,
    client: Client,
    nonce: str | None,
    lifetime: int = ID_TOKEN_LIFETIME,
) -> str:
    claims = _base_claims(issuer, fixtures.tenant_id, client.client_id, lifetime)
    claims.update(_user_claims(user), roles=list(user.roles))
    if nonce:
        claims["nonce"] = nonce
    return _sign(pki, claims)
