"""memory-api emulator (seed 001), "Authentication and scope": ServiceAccount tokens, the
workspace rules, the subject rules and the scope parameters. Each test cites the sentence
of the seed it checks."""

from __future__ import annotations

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from devstack.serve import RunningServer
from tests.devstack.memory_api_client import (
    AGENT_SHARED,
    ALICE,
    ALICE_CONFLICT,
    ALICE_LAPTOP,
    ALICE_ROWS,
    BOB,
    INSTITUTIONAL,
    NAME,
    OTHER_UID,
    OTHER_WORKSPACE_ROW,
    UID,
    Api,
    Callers,
    assert_error,
    foreign_body,
)

# --- "callers send a Kubernetes ServiceAccount bearer token. The service validates it with
# TokenReview and the configured subject and namespace allowlists." ---------------------


@pytest.mark.parametrize("authorization", [None, "Basic abc", "Bearer", "Bearer not-a-jwt"])
def test_without_a_valid_serviceaccount_bearer_token_the_call_is_401(
    memapi: RunningServer, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    response = Api(memapi.url, None).call(
        "GET", "/memories", params={"workspace": UID}, headers=headers
    )

    assert_error(response, 401)


def test_a_token_that_tokenreview_would_reject_is_401(callers: Callers) -> None:
    """Signed by another key (not the cluster's), or expired."""
    claims = jwt.decode(callers.token("portal"), options={"verify_signature": False})
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.encode(claims, other_key, algorithm="RS256")
    expired = callers.token("portal", lifetime=-120)

    for token in (forged, expired):
        assert_error(Api(callers.url, token).get("/memories", workspace=UID), 401)


def test_an_authenticated_account_in_neither_allowlist_is_403(callers: Callers) -> None:
    message = assert_error(callers.api("outsider").get("/memories", workspace=UID), 403)

    assert "not allowed" in message


def test_the_subject_and_the_namespace_allowlists_each_let_a_caller_in(callers: Callers) -> None:
    # The portal is exact-listed; the runtime only trusted by its namespace.
    for account in ("portal", "runtime"):
        response = callers.api(account).get("/memories/conflicts", workspace=UID)
        assert response.status_code == 200, (account, response.text)


# --- "Its tenant check accepts that workspace's name or UID, but memory rows are keyed by
# the Workspace UID ..., so a route that stores or matches rows by the value returns 500
# when given the name. Send the UID." -----------------------------------------------------


def test_the_uid_is_accepted_and_matches_the_workspace_rows(portal: Api) -> None:
    assert {m["id"] for m in portal.memories(ALICE)} == ALICE_ROWS


@pytest.mark.parametrize(
    ("method", "path", "params"),
    [
        ("GET", "/memories", {"virtual_user_id": ALICE}),
        ("GET", "/memories/search", {"q": "laptop"}),
        ("GET", f"/memories/{ALICE_LAPTOP}", {}),
        ("GET", "/memories/export", {"virtual_user_id": ALICE}),
        ("GET", "/memories/conflicts", {}),
        ("GET", "/audit/memories", {}),
    ],
)
def test_the_name_passes_the_tenant_check_then_a_route_matching_rows_by_it_is_500(
    portal: Api, method: str, path: str, params: dict[str, str]
) -> None:
    response = portal.call(method, path, params={"workspace": NAME, **params})

    # Not the 403 of a foreign workspace: the name is this memory-api's own.
    assert_error(response, 500)


def test_a_write_given_the_name_is_500_and_stores_nothing(fresh_memapi, portal: Api) -> None:
    body = {
        "workspace_id": NAME,
        "scope": {"virtual_user_id": ALICE, "agent": "it-helpdesk"},
        "type": "fact",
        "content": "Stored under the name?",
    }

    assert_error(portal.call("POST", "/memories", json=body), 500)
    assert {m["id"] for m in portal.memories(ALICE)} == ALICE_ROWS


# --- "every route that takes a workspace refuses a value other than its own name or UID
# with 403. This applies whether the route reads the workspace query parameter or a
# workspace_id in the JSON body, including GET /audit/memories. The response body is:
# {"error": "workspace \"<value>\" is not this memory-api's workspace (\"<name>\")"}" -----

FOREIGN_QUERY_ROUTES = [
    ("GET", "/memories"),
    ("GET", "/memories/search"),
    ("GET", f"/memories/{ALICE_LAPTOP}"),
    ("DELETE", f"/memories/{ALICE_LAPTOP}"),
    ("DELETE", "/memories"),
    ("DELETE", "/memories/batch"),
    ("GET", "/memories/export"),
    ("GET", "/memories/conflicts"),
    ("GET", "/memories/aggregate"),
    ("GET", f"/memories/{ALICE_LAPTOP}/lineage"),
    ("GET", "/institutional/documents"),
    ("GET", "/agent-memories"),
    ("GET", "/audit/memories"),
]


@pytest.mark.parametrize("value", [OTHER_UID, "fabrikam-research", "Contoso-Agents"])
@pytest.mark.parametrize(("method", "path"), FOREIGN_QUERY_ROUTES)
def test_a_foreign_workspace_query_parameter_is_403_with_the_seeds_body(
    fresh_memapi, portal: Api, method: str, path: str, value: str
) -> None:
    response = portal.call(method, path, params={"workspace": value, "virtual_user_id": ALICE})

    assert response.status_code == 403, response.text
    assert response.json() == foreign_body(value)
    assert {m["id"] for m in portal.memories(ALICE)} == ALICE_ROWS  # nothing deleted


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/memories",
            {"scope": {"virtual_user_id": ALICE}, "type": "fact", "content": "x"},
        ),
        ("/memories/retrieve", {"user_id": ALICE, "query": "laptop"}),
        ("/memories/retrieve/semantic", {"query": "laptop"}),
        ("/relations", {"source_id": ALICE_LAPTOP, "target_id": ALICE_CONFLICT, "relation": "r"}),
        ("/agent-memories", {"agent": "it-helpdesk", "type": "fact", "content": "x"}),
        ("/institutional/memories", {"content": "x"}),
        ("/institutional/ingest", {"document": {"source": "s", "about": "a"}}),
    ],
)
def test_a_foreign_workspace_id_in_a_json_body_is_403_with_the_seeds_body(
    portal: Api, path: str, body: dict
) -> None:
    response = portal.call("POST", path, json={"workspace_id": OTHER_UID, **body})

    assert response.status_code == 403, response.text
    assert response.json() == foreign_body(OTHER_UID)


# --- "A route that addresses a memory by its ID matches the ID and the workspace together,
# so an ID from another workspace is not found." ------------------------------------------


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("GET", "", None),
        ("PATCH", "", {"content": "Overwritten from here"}),
        ("DELETE", "", None),
        ("GET", "/lineage", None),
    ],
)
def test_an_id_from_another_workspace_is_not_found(
    fresh_memapi: RunningServer, callers: Callers, variants, method, suffix, body
) -> None:
    portal = callers.api()
    response = portal.call(
        method, f"/memories/{OTHER_WORKSPACE_ROW}{suffix}", params={"workspace": UID}, json=body
    )

    assert_error(response, 404)
    # The row exists: matched with its own workspace (a memory-api that checks none), it is
    # there and unchanged.
    unresolved = variants(workspace_resolved=False).api()
    row = unresolved.get(f"/memories/{OTHER_WORKSPACE_ROW}", workspace=OTHER_UID)
    assert row.status_code == 200, row.text
    assert row.json()["content"] == "Has badge access to the Fabrikam research lab."


def test_an_unresolved_memory_api_does_not_check_the_workspace(variants) -> None:
    """ "A memory-api that has not resolved its Workspace UID does not check the workspace." """
    unresolved = variants(workspace_resolved=False).api()

    response = unresolved.get("/memories", workspace=OTHER_UID, virtual_user_id=ALICE)

    assert response.status_code == 200, response.text
    assert [m["id"] for m in response.json()["memories"]] == [OTHER_WORKSPACE_ROW]


# --- The subject rules: "A request that names a user must prove it is that user, or come
# from a system service." and the seed's table. --------------------------------------------


@pytest.mark.parametrize(
    ("account", "proof_for", "user", "status"),
    [
        pytest.param("runtime", ALICE, ALICE, 200, id="names-the-verified-user-served"),
        pytest.param("runtime", BOB, ALICE, 403, id="names-a-different-user-403"),
        pytest.param("runtime", None, ALICE, 403, id="no-proof-namespace-only-403"),
        pytest.param("portal", None, ALICE, 200, id="exact-listed-system-service-served"),
        pytest.param("runtime", None, None, 200, id="names-no-user-not-checked"),
    ],
)
def test_the_subject_rules_table(
    callers: Callers, account: str, proof_for: str | None, user: str | None, status: int
) -> None:
    params = {"workspace": UID}
    if user:
        params["virtual_user_id"] = user
    response = callers.api(account, proof_for).get("/memories", **params)

    assert response.status_code == status, response.text
    if status == 200 and user:
        assert {m["id"] for m in response.json()["memories"]} == ALICE_ROWS


def test_internal_service_authentication_disabled_serves_as_scoped(variants) -> None:
    """Table: "Internal service authentication is disabled | Served as scoped"."""
    open_api = Api(variants(internal_auth=False).url, None)

    response = open_api.get("/memories", workspace=UID, virtual_user_id=BOB)

    assert response.status_code == 200, response.text
    assert {m["virtual_user_id"] for m in response.json()["memories"]} == {BOB}


def test_a_subject_proof_that_does_not_verify_is_refused(callers: Callers) -> None:
    runtime = Api(callers.url, callers.token("runtime"), callers.proof(ALICE, lifetime=-120))

    response = runtime.get("/memories", workspace=UID, virtual_user_id=ALICE)

    assert response.status_code in (401, 403), response.text


@pytest.mark.parametrize(
    ("path", "body"),
    [
        pytest.param(
            "/memories",
            {"scope": {"virtual_user_id": BOB, "agent": "it-helpdesk"}, "content": "x"},
            id="scope.virtual_user_id-in-a-write-body",
        ),
        pytest.param("/memories/retrieve", {"user_id": BOB, "query": "x"}, id="retrieve-user_id"),
        pytest.param(
            "/memories/retrieve",
            {"user_id": ALICE, "query": "x", "structured_lookups": [{"user_id": BOB}]},
            id="retrieve-structured_lookups-user_id",
        ),
    ],
)
def test_every_user_scoped_route_checks_the_user_against_the_proof(
    fresh_memapi, callers: Callers, path: str, body: dict
) -> None:
    """ "Every user-scoped route checks the user it is given against that proof: the query
    routes' virtual_user_id, the scope.virtual_user_id in a write body, and on POST
    /memories/retrieve the body's user_id and each structured_lookups[].user_id." """
    runtime = callers.api("runtime", proof_for=ALICE)

    refused = runtime.call("POST", path, json={"workspace_id": UID, **body})
    as_alice = {**body, "user_id": ALICE} if "user_id" in body else body
    if "scope" in body:
        as_alice = {**body, "scope": {**body["scope"], "virtual_user_id": ALICE}}
    if "structured_lookups" in body:
        as_alice = {**as_alice, "structured_lookups": [{"user_id": ALICE}]}
    served = runtime.call("POST", path, json={"workspace_id": UID, **as_alice})

    assert_error(refused, 403)
    assert served.status_code in (200, 201), served.text


# --- "A query-string route given user_id instead of virtual_user_id returns 400" ----------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/memories"),
        ("GET", "/memories/search"),
        ("DELETE", "/memories"),
        ("GET", "/memories/export"),
        ("GET", "/audit/memories"),
    ],
)
def test_user_id_instead_of_virtual_user_id_on_a_query_route_is_400(
    fresh_memapi, portal: Api, method: str, path: str
) -> None:
    response = portal.call(method, path, params={"workspace": UID, "user_id": ALICE, "q": "x"})

    assert "virtual_user_id" in assert_error(response, 400)
    assert {m["id"] for m in portal.memories(ALICE)} == ALICE_ROWS


# --- "workspace is required on every query-string route that takes it, including GET
# /audit/memories, except ..." -------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"), [r for r in FOREIGN_QUERY_ROUTES if r[1] != "/institutional/documents"]
)
def test_workspace_is_required_on_every_query_string_route_that_takes_it(
    fresh_memapi, portal: Api, method: str, path: str
) -> None:
    response = portal.call(method, path, params={"virtual_user_id": ALICE})

    assert "workspace" in assert_error(response, 400)


def test_omitting_workspace_on_the_excepted_routes_means_our_own(fresh_memapi, portal: Api) -> None:
    """ "... except GET /institutional/documents, GET /institutional/documents/{id}/tree and
    DELETE /institutional/sources/{source}, where omitting it means this memory-api's own
    workspace. POST /institutional/ingest and POST /institutional/ingest/batch take an
    optional workspace_id in the body with the same meaning." """
    document = {
        "source": "hr-handbook",
        "about": "leave",
        "title": "Leave",
        "sections": [{"title": "Annual", "chunks": ["25 days."]}],
    }
    ingested = portal.call("POST", "/institutional/ingest", json={"document": document})
    assert ingested.status_code == 202, ingested.text
    batch = portal.call(
        "POST",
        "/institutional/ingest/batch",
        json={"items": [{"about": "vpn", "content": "Use IKEv2."}]},
    )
    assert batch.status_code == 202, batch.text

    listed = portal.get("/institutional/documents").json()["documents"]
    assert [d["about"] for d in listed] == ["leave"]
    assert listed == portal.get("/institutional/documents", workspace=UID).json()["documents"]
    tree = portal.get(f"/institutional/documents/{listed[0]['id']}/tree")
    assert tree.json()["tree"] == [{"title": "Annual", "chunks": ["25 days."]}]
    items = portal.get("/institutional/memories", workspace=UID).json()["memories"]
    assert "vpn" in {m["about"] for m in items}

    forgotten = portal.call("DELETE", "/institutional/sources/hr-handbook")
    assert forgotten.status_code == 200, forgotten.text
    assert portal.get("/institutional/documents").json()["documents"] == []


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/memory/schema"),
        ("GET", "/memory/tool-guidance"),
        ("GET", "/admin/embedding-status"),
        ("POST", "/admin/reembed"),
    ],
)
def test_schema_tool_guidance_and_admin_take_no_workspace(portal: Api, method, path) -> None:
    """ "GET /memory/schema, GET /memory/tool-guidance and the /admin routes take no
    workspace." A foreign one given to them is not even looked at."""
    assert portal.call(method, path).status_code == 200
    assert portal.call(method, path, params={"workspace": OTHER_UID}).status_code == 200


# --- "include_shared | GET /memories only: add institutional and agent memories to the
# user's own" -------------------------------------------------------------------------------


def test_include_shared_adds_institutional_and_agent_memories_to_the_users_own(
    portal: Api,
) -> None:
    own = {m["id"] for m in portal.memories(ALICE)}
    shared = {m["id"] for m in portal.memories(ALICE, include_shared="true")}

    assert own == ALICE_ROWS
    assert shared == ALICE_ROWS | {AGENT_SHARED, INSTITUTIONAL}


def test_a_foreign_workspace_on_a_named_user_route_is_refused_before_the_subject(
    callers: Callers,
) -> None:
    """The workspace 403 is the seed's body even for a caller that could not name the user:
    the two refusals stay apart for the operator."""
    response = callers.api("runtime").get("/memories", workspace=OTHER_UID, virtual_user_id=ALICE)

    assert response.json() == foreign_body(OTHER_UID)
