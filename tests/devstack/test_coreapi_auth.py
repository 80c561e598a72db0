"""CoreAPI emulator authentication (JWT against the IdP's JWKS) and identity substitution."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import socket
import uuid
from typing import Any

import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from devstack import idp as idp_module
from devstack.config import Fixtures, issuer
from devstack.pki import Pki, load_signing_key
from devstack.serve import RunningServer
from devstack.tokens import delegated_access_token
from tests.devstack.test_coreapi import (
    ALICE,
    BOB,
    BOB_USER,
    Api,
    ad_hoc_upn,
    assert_problem,
    assert_validation_problem,
    start_emulator,
)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unverified(token: str) -> dict[str, Any]:
    return jwt.decode(token, options={"verify_signature": False})


def _resign(claims: dict[str, Any], pki: Pki, **changes: Any) -> str:
    """The same claims with `changes`, properly signed by the IdP's key."""
    return jwt.encode(
        {**claims, **changes},
        load_signing_key(pki.signing_key),
        algorithm="RS256",
        headers={"kid": pki.kid},
    )


def _unsigned(header: dict[str, Any], claims: dict[str, Any], secret: bytes | None) -> str:
    """Hand-built JWT: PyJWT refuses to make the forgeries we want to be refused."""
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
    if secret is None:
        return signing_input + "."
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(signature)}"


def _status(server: RunningServer, token: str | None, **headers: str) -> requests.Response:
    return Api(server.url, token, headers=headers).read("user")


def assert_invalid_token(response: requests.Response) -> None:
    assert_problem(response, 401)
    assert response.headers["WWW-Authenticate"].startswith('Bearer error="invalid_token"')


# --- Token checks ---------------------------------------------------------------------------


def test_valid_delegated_token_is_accepted(server, coreapi_tokens) -> None:
    assert _status(server, coreapi_tokens.delegated(BOB)).json()["content_markdown"] == BOB_USER


@pytest.mark.parametrize(
    "authorization",
    ["", "Bearer", "Bearer ", "Basic YWxpY2U6c2VjcmV0", "Bearer not-a-jwt", "Bearer a.b.c"],
    ids=["empty", "scheme-only", "scheme-space", "basic", "not-a-jwt", "garbage-parts"],
)
def test_missing_or_malformed_authorization_header_is_401(server, authorization) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    assert_invalid_token(_status(server, None, **headers))


def test_expired_token_is_401(server, coreapi_tokens) -> None:
    assert_invalid_token(_status(server, coreapi_tokens.delegated(BOB, lifetime=-120)))


def test_wrong_audience_is_401(server, pki, demo, idp) -> None:
    other = dataclasses.replace(demo, core_api_audience="api://Some-Other-API")
    token = delegated_access_token(
        pki, other, issuer(idp.url, demo.tenant_id), demo.user(BOB), demo.portal
    )
    assert_invalid_token(_status(server, token))


def test_wrong_issuer_is_401(server, pki, demo) -> None:
    token = delegated_access_token(
        pki, demo, issuer("https://login.example.com", demo.tenant_id), demo.user(BOB), demo.portal
    )
    assert_invalid_token(_status(server, token))


def test_token_without_exp_is_401(server, coreapi_tokens, pki) -> None:
    claims = _unverified(coreapi_tokens.delegated(BOB))
    del claims["exp"]
    assert_invalid_token(_status(server, _resign(claims, pki)))


def test_tampered_signature_is_401(server, coreapi_tokens) -> None:
    header, payload, signature = coreapi_tokens.delegated(BOB).split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    claims["upn"] = claims["preferred_username"] = ALICE
    forged = f"{header}.{_b64(json.dumps(claims).encode())}.{signature}"
    assert_invalid_token(_status(server, forged))


def test_alg_none_is_401(server, coreapi_tokens, pki) -> None:
    claims = _unverified(coreapi_tokens.delegated(BOB))
    token = _unsigned({"alg": "none", "typ": "JWT", "kid": pki.kid}, claims, None)
    assert_invalid_token(_status(server, token))


def test_hs256_signed_with_the_public_key_is_401(server, coreapi_tokens, pki) -> None:
    claims = _unverified(coreapi_tokens.delegated(BOB))
    public_pem = (
        load_signing_key(pki.signing_key)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    token = _unsigned({"alg": "HS256", "typ": "JWT", "kid": pki.kid}, claims, public_pem)
    assert_invalid_token(_status(server, token))


@pytest.mark.parametrize("kid", ["same", "unknown"])
def test_token_signed_by_another_rsa_key_is_401(server, coreapi_tokens, pki, kid) -> None:
    claims = _unverified(coreapi_tokens.delegated(BOB))
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token = jwt.encode(
        claims,
        stranger,
        algorithm="RS256",
        headers={"kid": pki.kid if kid == "same" else "stranger-key"},
    )
    assert_invalid_token(_status(server, token))


def test_delegated_token_without_data_read_scope_is_403(server, coreapi_tokens) -> None:
    response = _status(server, coreapi_tokens.delegated(BOB, scopes=("Data.Write",)))
    assert_problem(response, 403)
    assert 'error="insufficient_scope"' in response.headers["WWW-Authenticate"]


def test_idp_unreachable_is_503_and_keys_are_fetched_lazily(tmp_path, pki, demo) -> None:
    with socket.socket() as probe:  # a port nobody listens on once this closes
        probe.bind(("127.0.0.1", 0))
        dead_url = f"https://127.0.0.1:{probe.getsockname()[1]}"
    running = start_emulator(tmp_path, dead_url, pki)
    try:
        token = delegated_access_token(
            pki, demo, issuer(dead_url, demo.tenant_id), demo.user(BOB), demo.portal
        )
        body = assert_problem(_status(running, token), 503)
        assert "identity provider" in body["detail"]
        assert_invalid_token(_status(running, None))  # no token: still 401, no key needed
    finally:
        running.stop()


def test_jwks_is_cached_once_fetched(tmp_path, pki, demo, devstack_home) -> None:
    own_idp = idp_module.start(home=devstack_home)
    running = start_emulator(tmp_path, own_idp.url, pki)
    try:
        token = delegated_access_token(
            pki, demo, issuer(own_idp.url, demo.tenant_id), demo.user(BOB), demo.portal
        )
        assert _status(running, token).status_code == 200
        own_idp.stop()
        assert _status(running, token).status_code == 200  # served from the cached key set
    finally:
        running.stop()


# --- Identity substitution (X-USER-IDENTITY) ------------------------------------------------


def identity(upn: str, **fields: Any) -> str:
    return json.dumps(
        {
            "name": "Alice Example",
            "user_name": upn,
            "user_id": "a11ce000-0000-4000-8000-000000000001",
            "upn": upn,
            "group_ids": ["5e1f0000-0000-4000-8000-00000000a001"],
            **fields,
        }
    )


def other_app(demo: Fixtures) -> Any:
    return dataclasses.replace(
        demo.portal,
        name="Some Other App",
        client_id=str(uuid.uuid4()),
        service_principal_oid=str(uuid.uuid4()),
    )


def test_substitution_honoured_for_portal_principal_with_matching_upn(
    server, coreapi_tokens
) -> None:
    support = Api(server.url, coreapi_tokens.app(), {"X-USER-IDENTITY": identity(ALICE)})
    body = support.read("user").json()
    assert body["upn"] == ALICE
    assert body["name"] == "Alice Example"
    assert body["content_markdown"] == Api(server.url, coreapi_tokens.delegated(ALICE)).content(
        "user"
    )
    agents = support.get("completions/agents").json()
    assert [a["resource"]["name"] for a in agents] == [
        "benefits-assistant",
        "it-helpdesk",
        "travel-planner",
    ]


def test_substitution_writes_land_in_the_target_users_memory(server, coreapi_tokens) -> None:
    upn = ad_hoc_upn()
    support = Api(server.url, coreapi_tokens.app(), {"X-USER-IDENTITY": identity(upn)})
    assert support.append("user", "- written by support").ok
    assert (
        Api(server.url, coreapi_tokens.delegated(upn))
        .content("user")
        .endswith("- written by support\n")
    )


def test_substitution_header_with_utf8_name(server, coreapi_tokens) -> None:
    header = identity(BOB, name="Zoë Ångström").encode("utf-8")
    support = Api(server.url, coreapi_tokens.app(), {"X-USER-IDENTITY": header})
    body = support.read("user").json()
    assert body["name"] == "Zoë Ångström"
    assert body["upn"] == BOB


def test_substitution_ignored_for_delegated_tokens(server, coreapi_tokens) -> None:
    bob = Api(server.url, coreapi_tokens.delegated(BOB), {"X-USER-IDENTITY": identity(ALICE)})
    body = bob.read("user").json()
    assert body["upn"] == BOB
    assert body["content_markdown"] == BOB_USER
    malformed = Api(server.url, coreapi_tokens.delegated(BOB), {"X-USER-IDENTITY": "{nope"})
    assert malformed.read("user").status_code == 200  # not even parsed


def test_substitution_refused_for_another_app_principal(server, coreapi_tokens, demo) -> None:
    token = coreapi_tokens.app(other_app(demo))
    for header in (identity(ALICE), "{malformed"):
        assert_problem(Api(server.url, token, {"X-USER-IDENTITY": header}).read("user"), 403)
    assert_problem(Api(server.url, token).read("user"), 403)


def test_substitution_principal_without_header_is_403(server, coreapi_tokens) -> None:
    support = Api(server.url, coreapi_tokens.app())
    assert_problem(support.read("user"), 403)
    assert_problem(support.get("completions/agents"), 403)


@pytest.mark.parametrize(
    "upn",
    [
        "mallory@fabrikam.com",
        "alice@contoso.com.fabrikam.com",  # the pattern must match the whole UPN
        "ALICE@CONTOSO.COM",  # the configured regex is case-sensitive, like .NET's default
        " alice@contoso.com",
    ],
)
def test_substitution_refused_for_non_matching_upn(server, coreapi_tokens, upn) -> None:
    support = Api(server.url, coreapi_tokens.app(), {"X-USER-IDENTITY": identity(upn)})
    assert_problem(support.read("user"), 403)


@pytest.mark.parametrize(
    "header",
    [
        "not json",
        "[]",
        '"alice@contoso.com"',
        "{}",
        identity(""),
        identity("   "),
        '{"UPN": "alice@contoso.com"}',  # keys are case-sensitive
        '{"upn": 5}',
        identity(ALICE, name=7),
        identity(ALICE, user_id=["x"]),
        identity(ALICE, group_ids="g1"),
        identity(ALICE, group_ids=[1, 2]),
        identity(ALICE, name="x" * 2000),
        identity(ALICE, name="x" * 20000),
        identity(ALICE, name="\ud800"),
        b'{"upn": "alice@contoso.com", "name": "\xff\xfe"}',
    ],
    ids=[
        "not-json",
        "array",
        "string",
        "empty-object",
        "empty-upn",
        "blank-upn",
        "upper-case-key",
        "upn-number",
        "name-number",
        "user-id-array",
        "group-ids-string",
        "group-ids-numbers",
        "field-too-long",
        "header-too-long",
        "lone-surrogate",
        "invalid-utf8",
    ],
)
def test_malformed_identity_header_is_400(server, coreapi_tokens, header) -> None:
    support = Api(server.url, coreapi_tokens.app(), {"X-USER-IDENTITY": header})
    assert_validation_problem(support.read("user"), "X-USER-IDENTITY")


def test_app_token_from_substitution_principal_expired_is_401(server, coreapi_tokens) -> None:
    support = Api(server.url, coreapi_tokens.app(lifetime=-120), {"X-USER-IDENTITY": identity(BOB)})
    assert_invalid_token(support.read("user"))
