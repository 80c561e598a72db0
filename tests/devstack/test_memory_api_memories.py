"""memory-api emulator (seed 001), "Memory operations": each route of the seed's first
table, the built-in schema and what the seed says about retrieval. Each test cites the
sentence it checks; the numbered choices (M...) are docs/memory-api.md's."""

from __future__ import annotations

import pytest

from tests.devstack.memory_api_client import (
    ALICE,
    ALICE_401K,
    ALICE_CONFLICT,
    ALICE_CONTACT,
    ALICE_LAPTOP,
    ALICE_ROWS,
    BOB,
    BOB_INSTRUCTIONS,
    BOB_PLAN,
    INSTITUTIONAL,
    OTHER_WORKSPACE_ROW,
    UID,
    Api,
    Callers,
    assert_error,
)

pytestmark = pytest.mark.usefixtures("fresh_memapi")

NEW = {
    "workspace_id": UID,
    "scope": {"virtual_user_id": ALICE, "agent": "travel-planner"},
    "type": "preference",
    "content": "Prefers aisle seats.",
    "about": "seat",
}


def test_post_memories_creates_a_memory_that_lists_and_reads_back(portal: Api) -> None:
    """ "POST /memories | Create or update a memory"; "GET /memories | List memories in
    scope"."""
    created = portal.call("POST", "/memories", json=NEW)

    assert created.status_code == 201, created.text
    memory = created.json()
    assert (memory["tier"], memory["agent"], memory["content"]) == (
        "user",
        "travel-planner",
        "Prefers aisle seats.",
    )
    assert memory["id"] in {m["id"] for m in portal.memories(ALICE)}
    assert memory["id"] not in {m["id"] for m in portal.memories(BOB)}
    assert portal.memories(ALICE, agent="travel-planner") == [
        {**memory, "observations": memory["observations"]}
    ]


def test_post_memories_with_the_same_about_updates_the_memory(portal: Api) -> None:
    """ "Create or update": the same `about` in the same scope is the same memory (M7)."""
    first = portal.call("POST", "/memories", json=NEW).json()
    again = portal.call("POST", "/memories", json={**NEW, "content": "Prefers window seats."})

    assert again.status_code == 200, again.text
    assert again.json()["id"] == first["id"]
    assert len(portal.memories(ALICE, agent="travel-planner")) == 1


def test_get_memories_search_searches_the_users_memories(portal: Api) -> None:
    """ "GET /memories/search | Search memories" (the query is `q`, M14)."""
    found = portal.get("/memories/search", workspace=UID, virtual_user_id=ALICE, q="laptop asset")

    assert found.status_code == 200, found.text
    assert [m["id"] for m in found.json()["memories"]] == [ALICE_LAPTOP]
    bob = portal.get("/memories/search", workspace=UID, virtual_user_id=BOB, q="laptop")
    assert bob.json()["memories"] == []


def test_get_memory_reads_one_complete_memory_with_every_observation(portal: Api) -> None:
    """ "GET /memories/{id} | Read one complete memory": the superseded observation too."""
    memory = portal.get(f"/memories/{ALICE_401K}", workspace=UID).json()

    assert [o["status"] for o in memory["observations"]] == ["superseded", "active"]
    assert memory["content"] == "Raised the 401(k) contribution to 8% from January."
    listed = next(m for m in portal.memories(ALICE) if m["id"] == ALICE_401K)
    assert [o["status"] for o in listed["observations"]] == ["active"]


def test_patch_supersedes_the_active_observation_with_new_content(portal: Api) -> None:
    """ "PATCH /memories/{id} | Supersede the memory's active observation with new
    content": the old one is kept, superseded."""
    before = portal.get(f"/memories/{ALICE_CONTACT}", workspace=UID).json()
    patched = portal.call(
        "PATCH",
        f"/memories/{ALICE_CONTACT}",
        params={"workspace": UID},
        json={"content": "Prefers Teams messages."},
    )

    assert patched.status_code == 200, patched.text
    observations = portal.get(f"/memories/{ALICE_CONTACT}", workspace=UID).json()["observations"]
    assert [(o["content"], o["status"]) for o in observations] == [
        (before["content"], "superseded"),
        ("Prefers Teams messages.", "active"),
    ]
    assert observations[1]["supersedes"] == [before["observations"][0]["id"]]


def test_patch_on_a_conflict_supersedes_both_active_observations(portal: Api) -> None:
    """ "GET /memories/conflicts | List entities with more than one active observation";
    a PATCH supersedes every active observation (M8), so the conflict is resolved."""
    conflicts = portal.get("/memories/conflicts", workspace=UID, virtual_user_id=ALICE).json()
    assert [c["id"] for c in conflicts["conflicts"]] == [ALICE_CONFLICT]
    assert len(conflicts["conflicts"][0]["observations"]) == 2
    assert portal.get("/memories/conflicts", workspace=UID, virtual_user_id=BOB).json() == {
        "conflicts": []
    }

    kept = conflicts["conflicts"][0]["observations"][1]["content"]
    portal.call(
        "PATCH", f"/memories/{ALICE_CONFLICT}", params={"workspace": UID}, json={"content": kept}
    )

    after = portal.get("/memories/conflicts", workspace=UID, virtual_user_id=ALICE).json()
    assert after == {"conflicts": []}
    memory = portal.get(f"/memories/{ALICE_CONFLICT}", workspace=UID).json()
    assert [o["status"] for o in memory["observations"]] == ["superseded", "superseded", "active"]


def test_delete_memory_is_a_soft_delete(portal: Api) -> None:
    """ "DELETE /memories/{id} | Soft-delete a memory": gone from reads, still held (the
    export shows it with deleted_at, M16)."""
    deleted = portal.call("DELETE", f"/memories/{ALICE_LAPTOP}", params={"workspace": UID})

    assert deleted.status_code == 200, deleted.text
    assert ALICE_LAPTOP not in {m["id"] for m in portal.memories(ALICE)}
    assert_error(portal.get(f"/memories/{ALICE_LAPTOP}", workspace=UID), 404)
    exported = portal.get("/memories/export", workspace=UID, virtual_user_id=ALICE).json()
    row = next(m for m in exported["memories"] if m["id"] == ALICE_LAPTOP)
    assert row["deleted_at"] is not None


def test_delete_memories_deletes_all_memories_for_a_subject(portal: Api) -> None:
    """ "DELETE /memories | Delete all memories for a subject (DSAR)": soft-deleted rows
    too; another person's stay."""
    portal.call("DELETE", f"/memories/{ALICE_LAPTOP}", params={"workspace": UID})

    erased = portal.call("DELETE", "/memories", params={"workspace": UID, "virtual_user_id": ALICE})

    assert erased.status_code == 200, erased.text
    assert erased.json() == {"deleted": len(ALICE_ROWS)}
    assert portal.memories(ALICE) == []
    export = portal.get("/memories/export", workspace=UID, virtual_user_id=ALICE).json()
    assert export["memories"] == []
    assert {m["id"] for m in portal.memories(BOB)} == {BOB_INSTRUCTIONS, BOB_PLAN}


def test_a_dsar_names_its_subject(portal: Api) -> None:
    """Without virtual_user_id a DSAR would erase everyone's: refused (M10)."""
    for path in ("/memories", "/memories/batch"):
        assert_error(portal.call("DELETE", path, params={"workspace": UID}), 400)
    assert len(portal.memories(None)) == len(ALICE_ROWS) + 2


def test_delete_memories_batch_deletes_up_to_limit_until_none_remain(portal: Api) -> None:
    """ "DELETE /memories/batch | Delete up to limit memories for a subject (paginated
    DSAR)"."""
    params = {"workspace": UID, "virtual_user_id": ALICE, "limit": 3}

    first = portal.call("DELETE", "/memories/batch", params=params).json()
    second = portal.call("DELETE", "/memories/batch", params=params).json()
    third = portal.call("DELETE", "/memories/batch", params=params).json()

    assert first == {"deleted": 3, "remaining": len(ALICE_ROWS) - 3}
    assert second == {"deleted": len(ALICE_ROWS) - 3, "remaining": 0}
    assert third == {"deleted": 0, "remaining": 0}
    assert portal.memories(ALICE) == []
    assert len(portal.memories(BOB)) == 2


def test_get_memories_export_exports_one_subjects_memories(portal: Api) -> None:
    """ "GET /memories/export | Export memories for a subject": theirs only, complete, not
    shared memories and not another person's."""
    exported = portal.get("/memories/export", workspace=UID, virtual_user_id=ALICE)

    assert exported.status_code == 200, exported.text
    body = exported.json()
    assert body["virtual_user_id"] == ALICE
    assert {m["id"] for m in body["memories"]} == ALICE_ROWS
    history = next(m for m in body["memories"] if m["id"] == ALICE_401K)["observations"]
    assert len(history) == 2


def test_lineage_reads_the_observations_chain(portal: Api) -> None:
    """ "GET /memories/{id}/lineage | Read consolidation lineage (Enterprise)"."""
    lineage = portal.get(f"/memories/{ALICE_401K}/lineage", workspace=UID).json()

    old, new = lineage["observations"]
    assert lineage["memory_id"] == ALICE_401K
    assert new["supersedes"] == [old["id"]]


def test_post_relations_adds_a_relation_between_memories_of_this_workspace(portal: Api) -> None:
    """ "POST /relations | Add a relation between memories"; an id of another workspace is
    not found."""
    body = {"workspace_id": UID, "source_id": ALICE_LAPTOP, "relation": "related_to"}

    added = portal.call("POST", "/relations", json={**body, "target_id": ALICE_CONFLICT})
    foreign = portal.call("POST", "/relations", json={**body, "target_id": OTHER_WORKSPACE_ROW})

    assert added.status_code == 201, added.text
    assert added.json()["target_id"] == ALICE_CONFLICT
    assert_error(foreign, 404)


def test_the_schema_endpoint_lists_the_built_in_types(portal: Api) -> None:
    """ "GET /memory/schema | Discover configured memory types and relation definitions";
    without a configured schema, the built-in one."""
    schema = portal.get("/memory/schema").json()

    assert [t["name"] for t in schema["types"]] == [
        "document",
        "section",
        "chunk",
        "general",
        "preference",
        "fact",
        "observation",
        "temporal_summary",
    ]


def test_tool_guidance_describes_the_memory_tools(portal: Api) -> None:
    """ "GET /memory/tool-guidance | The LLM memory tools' descriptions and extra
    input-schema properties"."""
    tools = portal.get("/memory/tool-guidance").json()["tools"]

    assert all(t["description"] and "extra_properties" in t for t in tools)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/memories", NEW),
        ("PATCH", f"/memories/{ALICE_CONTACT}", {"content": "x"}),
        ("POST", "/agent-memories", {"workspace_id": UID, "agent": "it-helpdesk", "content": "x"}),
    ],
)
def test_writes_updates_and_agent_memories_are_validated_against_the_built_in_schema(
    portal: Api, method: str, path: str, body: dict
) -> None:
    """ "Without a configured schema, writes through POST /memories, PATCH /memories/{id}
    and POST /agent-memories are validated against the built-in schema"."""
    refused = portal.call(method, path, params={"workspace": UID}, json={**body, "type": "recipe"})
    accepted = portal.call(method, path, params={"workspace": UID}, json={**body, "type": "fact"})

    assert "recipe" in assert_error(refused, 400)
    assert accepted.status_code in (200, 201), accepted.text


def test_institutional_memories_and_batch_ingestion_are_not_constrained(portal: Api) -> None:
    """ "POST /institutional/memories and batch ingestion are not constrained." """
    curated = portal.call(
        "POST",
        "/institutional/memories",
        json={"workspace_id": UID, "type": "recipe", "content": "Friday cake."},
    )
    batch = portal.call(
        "POST",
        "/institutional/ingest/batch",
        json={"items": [{"about": "cake", "type": "recipe", "content": "Lemon drizzle."}]},
    )

    assert curated.status_code == 201, curated.text
    assert batch.status_code == 202, batch.text
    types = {
        m["type"] for m in portal.get("/institutional/memories", workspace=UID).json()["memories"]
    }
    assert "recipe" in types


@pytest.mark.parametrize(
    ("edition", "tiers"),
    [("enterprise", {"user", "agent", "institutional"}), ("core", {"user", "agent"})],
)
def test_retrieve_queries_all_tiers_only_under_enterprise(
    variants, edition: str, tiers: set[str]
) -> None:
    """ "Under Enterprise, POST /memories/retrieve ... queries all tiers. Without Enterprise
    it queries only the user and agent tiers"."""
    api = variants(edition=edition).api()
    body = {
        "workspace_id": UID,
        "user_id": ALICE,
        "agent_id": "it-helpdesk",
        "query": "economy flights vpn laptop",
    }

    result = api.call("POST", "/memories/retrieve", json=body)

    assert result.status_code == 200, result.text
    assert set(result.json()["tiers"]) == tiers
    found = {r["memory"]["id"] for r in result.json()["results"]}
    assert (INSTITUTIONAL in found) == (edition == "enterprise")
    assert ALICE_LAPTOP in found


def test_retrieve_under_enterprise_ranks_by_tier_precedence(variants) -> None:
    """ "Under Enterprise, POST /memories/retrieve applies the MemoryPolicy tier ranking"
    (the default precedence user, agent, institutional; M13)."""
    api = variants().api()
    body = {"workspace_id": UID, "user_id": ALICE, "agent_id": "it-helpdesk", "query": "vpn"}

    results = api.call("POST", "/memories/retrieve", json=body).json()["results"]

    tiers = [r["tier"] for r in results]
    assert tiers == sorted(tiers, key=["user", "agent", "institutional"].index)
    assert tiers[0] == "user" and "agent" in tiers


def test_semantic_retrieval_applies_the_deny_filter(portal: Api) -> None:
    """ "POST /memories/retrieve/semantic | Workspace retrieval with an optional CEL deny
    filter" (the emulator's CEL subset, M15)."""
    body = {"workspace_id": UID, "query": "vpn"}

    everything = portal.call("POST", "/memories/retrieve/semantic", json=body).json()["results"]
    denied = portal.call(
        "POST", "/memories/retrieve/semantic", json={**body, "deny": 'memory.tier == "user"'}
    ).json()["results"]

    assert "user" in {r["memory"]["tier"] for r in everything}
    assert denied and "user" not in {r["memory"]["tier"] for r in denied}


def test_every_write_is_in_the_audit_log(portal: Api) -> None:
    """ "GET /api/v1/audit/memories | Query the Enterprise memory audit log"."""
    portal.call(
        "PATCH",
        f"/memories/{ALICE_CONTACT}",
        params={"workspace": UID},
        json={"content": "Prefers Teams messages."},
    )
    portal.call("DELETE", f"/memories/{ALICE_LAPTOP}", params={"workspace": UID})
    portal.call("DELETE", "/memories", params={"workspace": UID, "virtual_user_id": BOB})

    events = portal.get("/audit/memories", workspace=UID).json()["events"]
    alice = portal.get("/audit/memories", workspace=UID, virtual_user_id=ALICE).json()["events"]

    actions = [(e["action"], e["memory_id"]) for e in events]
    assert ("supersede", ALICE_CONTACT) in actions
    assert ("delete", ALICE_LAPTOP) in actions
    assert {("erase", BOB_INSTRUCTIONS), ("erase", BOB_PLAN)} <= set(actions)
    assert {e["actor"] for e in events} == {"system:serviceaccount:memory-portal:memory-portal"}
    assert {e["virtual_user_id"] for e in alice} == {ALICE}


def test_lists_page_with_a_cursor(portal: Api) -> None:
    """Paging (M5): `limit` rows, `next_cursor` until the last page."""
    first = portal.get("/memories", workspace=UID, virtual_user_id=ALICE, limit=3).json()
    rest = portal.get(
        "/memories", workspace=UID, virtual_user_id=ALICE, limit=3, cursor=first["next_cursor"]
    ).json()

    assert len(first["memories"]) == 3 and first["next_cursor"]
    assert rest["next_cursor"] is None
    assert {m["id"] for m in first["memories"] + rest["memories"]} == ALICE_ROWS


def test_consent_revocation_applies_the_policy_action(callers: Callers) -> None:
    """ "POST /api/v1/memories/consent-events | Apply a user's consent revocation per the
    MemoryPolicy consentRevocation.action (Enterprise; called by privacy-api)" (M18)."""
    api = callers.api()
    applied = api.call(
        "POST", "/memories/consent-events", json={"workspace_id": UID, "virtual_user_id": BOB}
    )

    assert applied.json() == {"action": "delete", "deleted": 2}
    assert api.memories(BOB) == []
    assert {m["id"] for m in api.memories(ALICE)} == ALICE_ROWS
