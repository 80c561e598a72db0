"""The devstack IdP serves the one Microsoft Graph call support needs (issue 28): a UPN
resolved to its object id, `GET /v1.0/users/{upn}?$select=id`, with an app-only Graph
token carrying the User.Read.All application permission."""

from __future__ import annotations

from collections.abc import Iterator

import jwt
import msal
import pytest
import requests

from devstack.config import Fixtures, issuer
from devstack.idp.oauth import GRAPH_AUDIENCE
from devstack.pki import Pki
from devstack.serve import RunningServer
from devstack.tokens import app_access_token
from tests.devstack.test_idp import make_msal

GRAPH_SCOPE = "https://graph.microsoft.com/.default"


@pytest.fixture
def http(pki: Pki) -> Iterator[requests.Session]:
    session = requests.Session()
    session.trust_env = False
    session.verify = str(pki.ca_cert)
    yield session
    session.close()


@pytest.fixture
def portal_app(idp: RunningServer, demo: Fixtures, http) -> msal.ConfidentialClientApplication:
    return make_msal(f"{idp.url}/{demo.tenant_id}", demo, http)


@pytest.fixture
def graph_token(portal_app: msal.ConfidentialClientApplication) -> str:
    result = portal_app.acquire_token_for_client([GRAPH_SCOPE])
    assert "access_token" in result, result
    return result["access_token"]


def lookup(http: requests.Session, idp: RunningServer, key: str, token: str | None, **params):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return http.get(f"{idp.url}/v1.0/users/{key}", params=params, headers=headers)


def test_a_upn_resolves_to_the_object_id(http, idp: RunningServer, demo: Fixtures, graph_token):
    response = lookup(http, idp, "Alice@Contoso.com", graph_token, **{"$select": "id"})

    assert response.status_code == 200, response.text
    assert response.json() == {"id": demo.user("alice@contoso.com").oid}


def test_the_graph_token_carries_the_graph_permission_not_coreapis(
    graph_token: str, demo: Fixtures
) -> None:
    claims = jwt.decode(graph_token, options={"verify_signature": False})

    assert claims["aud"] == GRAPH_AUDIENCE
    assert claims["roles"] == ["User.Read.All"]
    assert claims["oid"] == demo.portal.service_principal_oid


def test_an_unknown_user_is_404_in_graphs_shape(http, idp: RunningServer, graph_token) -> None:
    response = lookup(http, idp, "nobody@contoso.com", graph_token, **{"$select": "id"})

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "Request_ResourceNotFound"


def test_without_the_permission_or_a_token_it_is_refused(
    http, idp: RunningServer, portal_app: msal.ConfidentialClientApplication
) -> None:
    coreapi = portal_app.acquire_token_for_client(["api://FoundationaLLM-Core/.default"])

    wrong_audience = lookup(http, idp, "alice@contoso.com", coreapi["access_token"])
    anonymous = lookup(http, idp, "alice@contoso.com", None)

    assert wrong_audience.status_code == 401
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == "InvalidAuthenticationToken"


def test_a_graph_token_without_user_read_all_is_403(
    http, idp: RunningServer, demo: Fixtures, pki: Pki
) -> None:
    token = app_access_token(
        pki, demo, issuer(idp.url, demo.tenant_id), demo.portal, audience=GRAPH_AUDIENCE, roles=()
    )

    response = lookup(http, idp, "alice@contoso.com", token, **{"$select": "id"})

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "Authorization_RequestDenied"
