"""memory-api emulator (seed 001): editions, institutional ingestion, administration, the
served contract and how the emulator is started. Each test cites the sentence it checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests
import yaml
from django.core.management import call_command

from devstack.memory_api import emulator
from devstack.memory_api.identity import TOKEN_FILENAME
from devstack.memory_api.routes import ROUTES
from devstack.pki import ensure_pki
from devstack.serve import RunningServer
from tests.devstack.memory_api_client import (
    ALICE,
    ALICE_401K,
    ALICE_ROWS,
    BOB,
    UID,
    Api,
    Callers,
    assert_error,
    start,
)
from tests.stack import free_port

REPO = Path(__file__).resolve().parents[2]

ENTERPRISE_ROUTES = [
    ("POST", "/institutional/memories", {"workspace_id": UID, "content": "x"}),
    ("GET", "/institutional/memories", None),
    ("DELETE", "/institutional/memories/01a50001-0000-4000-8000-000000000001", None),
    ("POST", "/institutional/ingest", {"document": {"source": "s", "about": "a"}}),
    ("POST", "/institutional/ingest/batch", {"items": []}),
    ("GET", "/institutional/documents", None),
    ("GET", "/institutional/documents/4fd83238-cb34-51bd-894d-90dc870b30b9/tree", None),
    ("DELETE", "/institutional/sources/hr-handbook", None),
    ("GET", "/memories/aggregate", None),
    ("GET", f"/memories/{ALICE_401K}/lineage", None),
    ("GET", "/memories/projection", None),
    ("POST", "/memories/consent-events", {"workspace_id": UID, "virtual_user_id": BOB}),
    ("GET", "/audit/memories", None),
]


@pytest.fixture(scope="module")
def core(variants) -> Callers:
    return variants(edition="core")


@pytest.mark.parametrize(("method", "path", "body"), ENTERPRISE_ROUTES)
def test_enterprise_routes_return_403_enterprise_required_on_core(
    core: Callers, method: str, path: str, body: dict | None
) -> None:
    """ "Institutional routes return 403 enterprise_required on a Core deployment." (and the
    routes the seed marks Enterprise)."""
    response = core.api().call(method, path, params={"workspace": UID}, json=body)

    assert response.status_code == 403, response.text
    assert response.json() == {"error": "enterprise_required"}


@pytest.mark.parametrize(("method", "path", "body"), ENTERPRISE_ROUTES)
def test_enterprise_routes_are_served_on_enterprise(
    fresh_memapi, portal: Api, method: str, path: str, body: dict | None
) -> None:
    response = portal.call(method, path, params={"workspace": UID}, json=body)

    assert response.status_code in (200, 201, 202, 404), response.text
    assert response.json() != {"error": "enterprise_required"}


def test_the_agent_memories_routes_are_available_in_core(core: Callers) -> None:
    """ "The /agent-memories routes are available in the Core edition." """
    api = core.api()
    body = {"workspace_id": UID, "agent": "it-helpdesk", "type": "fact", "content": "Reboot first."}

    created = api.call("POST", "/agent-memories", json=body)
    listed = api.get("/agent-memories", workspace=UID, agent="it-helpdesk")
    deleted = api.call(
        "DELETE", f"/agent-memories/{created.json()['id']}", params={"workspace": UID}
    )

    assert created.status_code == 201, created.text
    assert created.json()["id"] in {m["id"] for m in listed.json()["memories"]}
    assert deleted.status_code == 200, deleted.text
    remaining = api.get("/agent-memories", workspace=UID, agent="it-helpdesk").json()
    assert created.json()["id"] not in {m["id"] for m in remaining["memories"]}


def test_institutional_routes_need_no_more_than_serviceaccount_authentication(
    fresh_memapi, callers: Callers
) -> None:
    """ "They have no access check beyond the ServiceAccount authentication that applies to
    every route when internal service auth is enabled." """
    body = {"workspace_id": UID, "content": "Expenses are filed within 30 days."}

    runtime = callers.api("runtime").call("POST", "/institutional/memories", json=body)
    outsider = callers.api("outsider").call("POST", "/institutional/memories", json=body)
    anonymous = Api(callers.url, None).call("POST", "/institutional/memories", json=body)

    assert runtime.status_code == 201, runtime.text
    assert_error(outsider, 403)
    assert_error(anonymous, 401)


# --- ingestion ------------------------------------------------------------------------------


def _document(n: int) -> dict:
    return {"source": "wiki", "about": f"page-{n}", "sections": [{"title": "s", "chunks": ["c"]}]}


def test_ingest_returns_202_and_embeds_asynchronously(fresh_memapi, portal: Api) -> None:
    """ "Ingest returns 202; embeddings are generated asynchronously." """
    before = portal.get("/admin/embedding-status").json()["reembed_backlog"]

    response = portal.call("POST", "/institutional/ingest", json={"document": _document(1)})

    assert response.status_code == 202, response.text
    assert portal.get("/admin/embedding-status").json()["reembed_backlog"] == before + 1


@pytest.mark.parametrize(
    ("documents", "items", "status"),
    [(100, 0, 202), (101, 0, 400), (0, 5000, 202), (0, 5001, 400)],
)
def test_an_ingest_batch_carries_at_most_100_documents_or_5000_items(
    fresh_memapi, portal: Api, documents: int, items: int, status: int
) -> None:
    """ "A request carries at most 100 documents or 5000 items." """
    body = {
        "documents": [_document(n) for n in range(documents)],
        "items": [{"about": f"item-{n}", "content": f"Item {n}."} for n in range(items)],
    }

    response = portal.call("POST", "/institutional/ingest/batch", json=body)

    assert response.status_code == status, response.text
    stored = len(portal.get("/institutional/documents").json()["documents"])
    assert stored == (documents if status == 202 else 0)


def test_ingest_batch_applies_documents_items_edges_and_the_manifest_in_order(
    fresh_memapi, portal: Api
) -> None:
    """ "POST /institutional/ingest/batch accepts documents[], items[], edges[] and a
    present manifest in one request, and applies them in that order." Edges reach the items
    of the same request; the manifest sees them too."""
    body = {
        "items": [
            {"about": "a", "content": "A.", "source": "crm"},
            {"about": "b", "content": "B.", "source": "crm"},
        ],
        "edges": [{"from": "a", "to": "b", "relation": "part_of"}],
        "present": {"source": "crm", "abouts": ["a", "b"]},
    }

    response = portal.call("POST", "/institutional/ingest/batch", json=body)

    assert response.json() == {"documents": 0, "items": 2, "edges": 1, "forgotten": 0}


def test_items_are_keyed_by_about_so_repeated_population_is_idempotent(
    fresh_memapi, portal: Api
) -> None:
    """ "Items and relations are keyed by about, making repeated population idempotent." """
    body = {
        "items": [
            {"about": "a", "content": "A.", "source": "crm"},
            {"about": "b", "content": "B.", "source": "crm"},
        ],
        "edges": [{"from": "a", "to": "b", "relation": "part_of"}],
    }

    for _ in range(2):
        portal.call("POST", "/institutional/ingest/batch", json=body)

    listed = portal.get("/institutional/memories", workspace=UID).json()["memories"]
    assert sorted(m["about"] for m in listed if m["about"] in ("a", "b")) == ["a", "b"]
    projection = portal.get("/memories/projection", workspace=UID).json()
    assert len(projection["edges"]) == 1


def test_a_present_manifest_forgets_items_removed_from_the_source(
    fresh_memapi, portal: Api
) -> None:
    """ "An optional present manifest allows a populator to forget items removed from its
    source." """
    items = [{"about": n, "content": n.upper(), "source": "crm"} for n in ("a", "b", "c")]
    portal.call("POST", "/institutional/ingest/batch", json={"items": items})

    second = portal.call(
        "POST",
        "/institutional/ingest/batch",
        json={"items": items[:1], "present": {"source": "crm", "abouts": ["a"]}},
    )

    assert second.json()["forgotten"] == 2
    listed = portal.get("/institutional/memories", workspace=UID).json()["memories"]
    assert sorted(m["about"] for m in listed if m["about"] in "abc") == ["a"]


# --- administration -------------------------------------------------------------------------


def test_admin_routes_are_served_at_the_root_not_under_api_v1(portal: Api) -> None:
    """ "The /admin routes are served at the root, not under /api/v1." """
    at_root = requests.get(
        f"{portal.url}/admin/embedding-status", headers={"Authorization": f"Bearer {portal.token}"}
    )
    under_base = portal.call("GET", "/../api/v1/admin/embedding-status")

    assert at_root.status_code == 200, at_root.text
    assert under_base.status_code == 404


def test_reembed_embeds_up_to_max_batches_and_stops_early(fresh_memapi, portal: Api) -> None:
    """ "POST /admin/reembed accepts max_batches (default 1, maximum 200) and returns
    embedded, batches, and remaining. Each call embeds up to max_batches batches and stops
    early when a batch embeds nothing, so embedded is 0 when no observation awaits an
    embedding." (a batch is 25, M19)"""
    items = [{"about": f"i{n}", "content": f"Item {n}."} for n in range(60)]
    portal.call("POST", "/institutional/ingest/batch", json={"items": items})

    default = portal.call("POST", "/admin/reembed").json()
    rest = portal.call("POST", "/admin/reembed", json={"max_batches": 200}).json()
    idle = portal.call("POST", "/admin/reembed", json={"max_batches": 5}).json()

    assert default == {"embedded": 25, "batches": 1, "remaining": 35}
    assert rest == {"embedded": 35, "batches": 2, "remaining": 0}
    assert idle == {"embedded": 0, "batches": 0, "remaining": 0}


@pytest.mark.parametrize("max_batches", [0, 201, "2"])
def test_reembed_refuses_max_batches_outside_1_to_200(portal: Api, max_batches) -> None:
    assert_error(portal.call("POST", "/admin/reembed", json={"max_batches": max_batches}), 400)


def test_reembed_omits_remaining_when_the_workspace_is_unknown(variants) -> None:
    """ "remaining is omitted when the memory-api does not know its workspace." """
    response = variants(workspace_resolved=False).api().call("POST", "/admin/reembed")

    assert set(response.json()) == {"embedded", "batches"}


def test_embedding_status_returns_the_seeds_fields(portal: Api) -> None:
    """ "GET /admin/embedding-status returns state (ready, restart_required or reembedding),
    current_dimension, current_type, configured_dimension, pending_target_dimension and
    reembed_backlog." """
    status = portal.get("/admin/embedding-status").json()

    assert set(status) == {
        "state",
        "current_dimension",
        "current_type",
        "configured_dimension",
        "pending_target_dimension",
        "reembed_backlog",
    }
    assert status["state"] in ("ready", "restart_required", "reembedding")
    assert status["current_type"] == ("halfvec" if status["current_dimension"] > 2000 else "vector")


@pytest.mark.parametrize(("target", "status"), [(0, 400), (4001, 400), (1, 200), (4000, 200)])
def test_dimension_change_rejects_a_target_dim_outside_1_to_4000(
    fresh_memapi, portal: Api, target: int, status: int
) -> None:
    """ "POST /admin/embedding-dimension-change rejects a target_dim outside 1-4000." """
    response = portal.call("POST", "/admin/embedding-dimension-change", json={"target_dim": target})

    assert response.status_code == status, response.text
    pending = portal.get("/admin/embedding-status").json()["pending_target_dimension"]
    assert pending == (target if status == 200 else None)


def test_a_startup_that_needs_no_reshape_deletes_the_consent(tmp_path: Path) -> None:
    """ "memory-api deletes it when the reshape runs, and also on any startup that needs no
    reshape." """
    first = start(tmp_path)
    try:
        api = Callers(first.url, ensure_pki(tmp_path)).api()
        consent = api.call("POST", "/admin/embedding-dimension-change", json={"target_dim": 3072})
        assert consent.status_code == 200, consent.text
        assert api.get("/admin/embedding-status").json()["state"] == "restart_required"
    finally:
        first.stop()

    restarted = start(tmp_path)
    try:
        status = Callers(restarted.url, ensure_pki(tmp_path)).api()
        after = status.get("/admin/embedding-status").json()
    finally:
        restarted.stop()

    assert after["pending_target_dimension"] is None
    assert after["state"] != "restart_required"


# --- the served contract --------------------------------------------------------------------


def test_the_contract_is_served_at_openapi_yaml_and_docs(memapi: RunningServer) -> None:
    """ "The complete machine-readable contract is served at /api/v1/openapi.yaml and /docs
    by the service." Built from the route table the emulator dispatches on."""
    contract = yaml.safe_load(requests.get(f"{memapi.url}/api/v1/openapi.yaml", timeout=10).text)
    docs = requests.get(f"{memapi.url}/docs", timeout=10)

    served = {
        (method.upper(), path)
        for path, operations in contract["paths"].items()
        for method in operations
    }
    expected = {
        (r.method, r.path if r.path.startswith("/admin") else "/api/v1" + r.path) for r in ROUTES
    }
    assert served == expected
    assert len(served) == 35  # the seed's three tables
    assert docs.status_code == 200 and "/api/v1/openapi.yaml" in docs.text
    routed = {rule.endpoint for rule in emulator(memapi).url_map.iter_rules()}
    assert {r.endpoint for r in ROUTES} <= routed


# --- starting it ------------------------------------------------------------------------------


def _run(home: Path, *flags: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "devstack.memory_api",
            "--port",
            str(port),
            "--home",
            str(home),
            *flags,
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    banner = process.stdout.readline()  # printed once the socket listens
    assert "listening" in banner, banner
    return process, f"http://127.0.0.1:{port}"


def test_python_m_devstack_memory_api_runs_alone_with_an_edition_and_a_projected_token(
    tmp_path: Path,
) -> None:
    """`python -m devstack.memory_api --port P --edition core`, same fixtures; it keeps the
    portal's projected token in {home}/memory-api-portal-token."""
    process, url = _run(tmp_path, "--edition", "core")
    try:
        token = (tmp_path / TOKEN_FILENAME).read_text()
        api = Api(url, token)
        assert {m["id"] for m in api.memories(ALICE)} == ALICE_ROWS
        assert api.get("/audit/memories", workspace=UID).json() == {"error": "enterprise_required"}
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_devstack_token_memory_api_json(
    memapi: RunningServer, memapi_home: Path, monkeypatch, capsys
) -> None:
    """`manage.py devstack_token --memory-api --as runtime --subject-proof UPN --json`
    prints a token and a proof the emulator accepts, the workspace and the pseudonyms."""
    monkeypatch.setenv("DEVSTACK_HOME", str(memapi_home))
    call_command(
        "devstack_token",
        "--memory-api",
        "--as",
        "runtime",
        "--subject-proof",
        "alice@contoso.com",
        "--json",
    )
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])

    assert set(printed) == {"token", "proof", "workspace_uid", "workspace_name", "virtual_user_ids"}
    assert printed["workspace_uid"] == UID
    assert printed["virtual_user_ids"]["alice@contoso.com"] == ALICE
    runtime = Api(memapi.url, printed["token"], printed["proof"])
    assert {m["id"] for m in runtime.memories(ALICE)} == ALICE_ROWS
    without_proof = Api(memapi.url, printed["token"])
    assert_error(without_proof.get("/memories", workspace=UID, virtual_user_id=ALICE), 403)


@pytest.mark.parametrize(("account", "status"), [("portal", 200), ("outsider", 403)])
def test_devstack_token_memory_api_as(
    memapi: RunningServer, memapi_home: Path, monkeypatch, capsys, account: str, status: int
) -> None:
    monkeypatch.setenv("DEVSTACK_HOME", str(memapi_home))
    call_command("devstack_token", "--memory-api", "--as", account)
    token = capsys.readouterr().out.strip().splitlines()[-1]

    response = Api(memapi.url, token).get("/memories", workspace=UID, virtual_user_id=BOB)

    assert response.status_code == status, response.text
