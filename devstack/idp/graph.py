"""The one Microsoft Graph call the portal makes, served by the devstack IdP:
`GET /v1.0/users/{upn or id}?$select=id`, with an app-only Graph token that carries the
User.Read.All application permission (client credentials for
`https://graph.microsoft.com/.default`). Support resolves a UPN to the object id with it
(the memory-api's pseudonyms are made from the object id; docs/memory-api.md)."""

from __future__ import annotations

import json
from typing import Any

import jwt
from jwt.exceptions import PyJWTError
from werkzeug.wrappers import Request, Response

from devstack.config import Fixtures
from devstack.idp.oauth import GRAPH_AUDIENCE
from devstack.pki import Pki, load_signing_key

GRAPH_RESOURCE = "https://graph.microsoft.com"
READ_USERS = "User.Read.All"
_FIELDS = {"id": "oid", "userPrincipalName": "upn", "displayName": "name"}


def _error(status: int, code: str, message: str) -> Response:
    body = {"error": {"code": code, "message": message}}
    return Response(json.dumps(body), status=status, mimetype="application/json")


def user(request: Request, key: str, pki: Pki, fixtures: Fixtures, issuer: str) -> Response:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            load_signing_key(pki.signing_key).public_key(),
            algorithms=["RS256"],
            audience=GRAPH_AUDIENCE,
            issuer=issuer,
            leeway=30,
        )
    except PyJWTError:
        claims = {}
    if scheme.lower() != "bearer" or not claims:
        return _error(401, "InvalidAuthenticationToken", "Access token is empty or invalid.")
    if READ_USERS not in claims.get("roles", ()):
        return _error(
            403, "Authorization_RequestDenied", "Insufficient privileges to complete the operation."
        )
    found = fixtures.user(key) or next((u for u in fixtures.users if u.oid == key), None)
    if found is None:
        return _error(
            404,
            "Request_ResourceNotFound",
            f"Resource '{key}' does not exist or one of its queried reference-property "
            "objects are not present.",
        )
    wanted = [f for f in (request.args.get("$select") or "").split(",") if f] or list(_FIELDS)
    unknown = [f for f in wanted if f not in _FIELDS]
    if unknown:
        return _error(400, "Request_BadRequest", f"Could not find a property named '{unknown[0]}'.")
    body = {field: getattr(found, _FIELDS[field]) for field in wanted}
    return Response(json.dumps(body), mimetype="application/json")
