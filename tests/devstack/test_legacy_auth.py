"""Legacy store emulator (seed 003): bearer tokens, privileges and the store endpoints,
over HTTP with tokens signed by the devstack IdP's key (or a forged one)."""

from __future__ import annotations

import time

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa
from django.core.management import call_command

from devstack.config import Client, Fixtures, issuer
from devstack.legacy.store import audience
from devstack.serve import RunningServer
from tests.conftest import TokenMinter
from tests.devstack.legacy_api import (
    ALICE,
    BENEFITS,
    FINANCE,
    HELPDESK,
    TRAVEL,
    Api,
    assert_error,
)


@pytest.fixture
def api(legacy: RunningServer, coreapi_tokens: TokenMinter) -> Api:
    return Api(legacy.url, coreapi_tokens.legacy())


def test_a_token_from_the_idp_by_client_credentials_is_accepted(
    legacy: RunningServer, idp: RunningServer, demo: Fixtures, pki
) -> None:
    response = requests.post(
        f"{idp.url}/{demo.tenant_id}/oauth2/v2.0/token",
        data={
            "grant_type": "client_credentials",
            "scope": f"{audience()}/.default",
            "client_id": demo.portal.client_id,
            "client_secret": demo.portal.client_secret,
        },
        verify=str(pki.ca_cert),
        timeout=10,
    )
    assert response.status_code == 200, response.text

    api = Api(legacy.url, response.json()["access_token"])
    assert api.call("GET", f"/{TRAVEL}").json()["full_name"] == TRAVEL


def test_devstack_token_legacy_prints_an_accepted_token_last(
    legacy: RunningServer, idp: RunningServer, monkeypatch, capsys, devstack_home
) -> None:
    # The command signs with the key in DEVSTACK_HOME and names the IdP on DEVSTACK_IDP_PORT.
    monkeypatch.setenv("DEVSTACK_HOME", str(devstack_home))
    monkeypatch.setattr("devstack.management.commands.devstack_token.idp_base_url", lambda: idp.url)
    call_command("devstack_token", "--legacy")
    token = capsys.readouterr().out.strip().splitlines()[-1]

    assert Api(legacy.url, token).call("GET", f"/{HELPDESK}").status_code == 200


@pytest.mark.parametrize("authorization", [None, "Basic abc", "Bearer", "Bearer not-a-jwt"])
def test_missing_or_malformed_bearer_is_401(legacy: RunningServer, authorization) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    response = Api(legacy.url, None).call("GET", f"/{TRAVEL}", headers=headers)

    assert_error(response, 401, "UNAUTHENTICATED")
    assert response.headers["WWW-Authenticate"].startswith('Bearer error="invalid_token"')


def test_expired_token_is_401(legacy: RunningServer, coreapi_tokens: TokenMinter) -> None:
    expired = coreapi_tokens.legacy(lifetime=-120)  # beyond the 30 s leeway

    assert_error(Api(legacy.url, expired).call("GET", f"/{TRAVEL}"), 401, "UNAUTHENTICATED")


def test_a_coreapi_token_has_the_wrong_audience(
    legacy: RunningServer, coreapi_tokens: TokenMinter
) -> None:
    api = Api(legacy.url, coreapi_tokens.app())

    assert_error(api.call("GET", f"/{TRAVEL}"), 401, "UNAUTHENTICATED")


def test_a_token_signed_by_another_key_is_401(
    legacy: RunningServer, idp: RunningServer, demo: Fixtures, pki
) -> None:
    forged_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    claims = {
        "aud": audience(),
        "iss": issuer(idp.url, demo.tenant_id),
        "iat": now,
        "nbf": now,
        "exp": now + 600,
        "azp": demo.portal.client_id,
    }
    forged = jwt.encode(claims, forged_key, algorithm="RS256", headers={"kid": pki.kid})

    assert_error(Api(legacy.url, forged).call("GET", f"/{TRAVEL}"), 401, "UNAUTHENTICATED")


def test_alg_none_is_401(legacy: RunningServer, idp: RunningServer, demo: Fixtures) -> None:
    now = int(time.time())
    claims = {"aud": audience(), "iss": issuer(idp.url, demo.tenant_id), "exp": now + 600}
    unsigned = jwt.encode(claims, None, algorithm="none")

    assert_error(Api(legacy.url, unsigned).call("GET", f"/{TRAVEL}"), 401, "UNAUTHENTICATED")


def test_get_store_answers_the_seed_fields(api: Api) -> None:
    response = api.call("GET", f"/{TRAVEL}")

    assert response.status_code == 200
    store = response.json()
    assert store["full_name"] == TRAVEL
    assert (store["catalog_name"], store["schema_name"], store["name"]) == tuple(TRAVEL.split("."))
    assert store["securable_type"] == "MEMORY_STORE"
    assert isinstance(store["created_at"], int) and isinstance(store["updated_at"], int)
    assert {"description", "owner", "memory_store_id", "created_by"} <= set(store)


def test_unknown_store_is_404(api: Api) -> None:
    assert_error(api.call("GET", "/main.agents.nope"), 404, "RESOURCE_DOES_NOT_EXIST")
    assert_error(api.entries("main.agents.nope", ALICE), 404, "RESOURCE_DOES_NOT_EXIST")


def test_store_without_read_is_403_on_every_read(api: Api) -> None:
    assert_error(api.call("GET", f"/{FINANCE}"), 403, "PERMISSION_DENIED")
    assert_error(api.entries(FINANCE, ALICE), 403, "PERMISSION_DENIED")
    assert_error(api.get(FINANCE, ALICE, "/memories/reports.md"), 403, "PERMISSION_DENIED")
    assert_error(api.search(FINANCE, {"scope": ALICE, "query": "report"}), 403, "PERMISSION_DENIED")


def test_read_only_store_reads_but_refuses_every_write(api: Api) -> None:
    assert api.entries(BENEFITS, ALICE).status_code == 200
    path = "/memories/enrolment.md"
    assert api.get(BENEFITS, ALICE, path).status_code == 200

    body = assert_error(
        api.create(BENEFITS, ALICE, {"path": "/memories/new.md"}), 403, "PERMISSION_DENIED"
    )
    assert "WRITE MEMORY STORE" in body["message"]
    edit = {"scope": ALICE, "path": path, "replace_all": {"contents": "x"}}
    assert_error(api.patch(BENEFITS, edit), 403, "PERMISSION_DENIED")
    assert_error(api.delete(BENEFITS, ALICE, path), 403, "PERMISSION_DENIED")
    assert "PPO Plus" in api.get(BENEFITS, ALICE, path).json()["contents"]


def test_another_application_has_no_privileges(
    legacy: RunningServer, coreapi_tokens: TokenMinter
) -> None:
    stranger = Client("Stranger", "0badc0de-0000-4000-8000-000000000000", "s", "o", (), (), ())
    other = Api(legacy.url, coreapi_tokens.legacy(stranger))

    assert_error(other.call("GET", f"/{TRAVEL}"), 403, "PERMISSION_DENIED")
    listed = other.call("GET", "", params={"catalog_name": "main", "schema_name": "agents"})
    assert listed.json() == {"memory_stores": []}


def test_list_stores_shows_only_readable_stores_of_the_schema(api: Api) -> None:
    response = api.call("GET", "", params={"catalog_name": "main", "schema_name": "agents"})

    assert response.status_code == 200
    names = [store["full_name"] for store in response.json()["memory_stores"]]
    assert names == sorted([TRAVEL, HELPDESK, BENEFITS])
    finance = api.call("GET", "", params={"catalog_name": "main", "schema_name": "finance"})
    assert finance.json() == {"memory_stores": []}  # exists, but the portal may not read it


def test_list_stores_pages(api: Api) -> None:
    query = {"catalog_name": "main", "schema_name": "agents", "max_results": 2}
    first = api.call("GET", "", params=query).json()
    second = api.call("GET", "", params={**query, "page_token": first["next_page_token"]}).json()

    assert len(first["memory_stores"]) == 2
    assert len(second["memory_stores"]) == 1
    assert "next_page_token" not in second
    seen = [s["full_name"] for s in first["memory_stores"] + second["memory_stores"]]
    assert seen == sorted([TRAVEL, HELPDESK, BENEFITS])


@pytest.mark.parametrize(
    "params",
    [
        {"schema_name": "agents"},
        {"catalog_name": "main"},
        {"catalog_name": "main", "schema_name": "agents", "max_results": "0"},
        {"catalog_name": "main", "schema_name": "agents", "max_results": "many"},
        {"catalog_name": "main", "schema_name": "agents", "page_token": "%%%"},
    ],
)
def test_list_stores_refuses_bad_parameters(api: Api, params) -> None:
    assert_error(api.call("GET", "", params=params), 400, "INVALID_PARAMETER_VALUE")


def test_unknown_endpoint_and_method(api: Api) -> None:
    assert_error(api.call("GET", f"/{TRAVEL}/elsewhere"), 404, "ENDPOINT_NOT_FOUND")
    assert_error(api.call("PUT", f"/{TRAVEL}/entries"), 405, "ENDPOINT_NOT_FOUND")


def _privileges(api: Api, store: str, **params: str) -> requests.Response:
    return requests.get(
        f"{api.url}/api/2.1/unity-catalog/effective-permissions/memory_store/{store}",
        params=params,
        headers={"Authorization": f"Bearer {api.token}"},
        timeout=10,
    )


def test_effective_permissions_show_the_callers_own_privileges(api: Api) -> None:
    def granted(store: str) -> list[str]:
        response = _privileges(api, store)
        assert response.status_code == 200, response.text
        (assignment,) = response.json()["privilege_assignments"]
        return [p["privilege"] for p in assignment["privileges"]]

    assert granted(TRAVEL) == ["READ MEMORY STORE", "WRITE MEMORY STORE"]
    assert granted(BENEFITS) == ["READ MEMORY STORE"]
    assert granted(FINANCE) == []
    assert_error(_privileges(api, "main.agents.nothing_here"), 404, "RESOURCE_DOES_NOT_EXIST")
    other = _privileges(api, TRAVEL, principal="someone@contoso.com")
    assert_error(other, 403, "PERMISSION_DENIED")
