"""MemoryOS emulator (seed 002), `POST /v1/memories/retrieve`: every request field and its
limits, the response's fields, the three formats, the context budget, the quota modes and
every refusal, over HTTP. Each test names the seed's sentence it checks; the S numbers are
docs/memoryos.md's choices where the seed is silent."""

from __future__ import annotations

import datetime as dt
import json
import uuid

import pytest

from devstack import memoryos
from devstack.memoryos.render import token_count
from devstack.serve import RunningServer
from tests.devstack.memoryos_api import (
    ALICE,
    BLOCKED_KEY,
    DEGRADED_KEY,
    OTHER_TENANT_KEY,
    PASSTHROUGH_KEY,
    RESULT_FIELDS,
    SEAT_CLARIFICATION,
    TOP_LEVEL_FIELDS,
    WIRE_TIME,
    Api,
    assert_error,
    ids,
    wire,
)

HEADER = "What you know about this user:"
# alice's contoso memories valid today (the Portland airport one was superseded).
ALICE_NOW = ids(
    "aisle-seats",
    "window-seats",
    "no-red-eyes",
    "hotel-walk",
    "london-trip",
    "mileage-plan",
    "home-airport-sea",
    "thinkpad",
    "step-by-step",
    "vpn-reset",
    "seattle-office",
    "redmond-office",
)
HELPDESK = ids("thinkpad", "step-by-step", "vpn-reset", "seattle-office", "redmond-office")


@pytest.fixture
def api(memoryos: RunningServer) -> Api:
    return Api(memoryos.url)


@pytest.fixture
def fresh(fresh_memoryos: RunningServer) -> Api:
    return Api(fresh_memoryos.url)


def returned(body: dict) -> set[str]:
    return {result["id"] for result in body["data"]}


# --- the response -------------------------------------------------------------------------


def test_response_has_every_top_level_field_of_the_seed(api: Api) -> None:
    """Seed, "Top-level fields": retrieval_id … timestamp, with their types."""
    body = api.ok(query="Which seat does Alice prefer?")

    assert set(body) == TOP_LEVEL_FIELDS
    uuid.UUID(body["retrieval_id"])
    uuid.UUID(body["request_id"])
    assert isinstance(body["data"], list) and body["data"]
    assert body["cached"] is False
    assert body["system_prompt_addition"].startswith(HEADER)
    assert body["context_token_count"] == token_count(body["system_prompt_addition"])
    assert isinstance(body["memories_from_hot_tier"], int)
    assert (body["quota_mode"], body["is_degraded"], body["is_passthrough"]) == (
        "FULL",
        False,
        False,
    )
    assert WIRE_TIME.match(body["timestamp"])


def test_each_result_has_the_nine_memory_search_result_fields(api: Api) -> None:
    """Seed, "MemorySearchResult": id, content, category, importance_score, last_accessed,
    relevance_score, context_snippet, source_event_id, provenance."""
    body = api.ok(limit=50)

    assert returned(body) == ALICE_NOW
    for result in body["data"]:
        assert set(result) == RESULT_FIELDS
        assert isinstance(result["importance_score"], float)
        assert 0 < result["relevance_score"] <= 1
        assert result["last_accessed"] is None or WIRE_TIME.match(result["last_accessed"])
    with_provenance = [r for r in body["data"] if r["provenance"] is not None]
    for result in with_provenance:
        assert set(result["provenance"]) == {"service", "event_id", "observed_at", "writer_id"}
        assert WIRE_TIME.match(result["provenance"]["observed_at"])
        uuid.UUID(result["source_event_id"])
    # "Provenance event id when available": the imported memory has none.
    (imported,) = [r for r in body["data"] if r["id"] in ids("mileage-plan")]
    assert (imported["source_event_id"], imported["provenance"]) == (None, None)


def test_results_are_ranked_by_relevance(api: Api) -> None:
    """Seed: "`data` … Ranked memory results"; `relevance_score` "Final retrieval score" (S7)."""
    body = api.ok(query="Which seats does Alice prefer on flights?", limit=50)

    scores = [result["relevance_score"] for result in body["data"]]
    assert scores == sorted(scores, reverse=True)
    assert body["data"][0]["id"] in ids("aisle-seats")


# --- limit --------------------------------------------------------------------------------


def test_limit_defaults_to_10(api: Api) -> None:
    """Seed: "`limit` … Default `10`, max `50`" (alice has 12 memories)."""
    assert len(api.ok()["data"]) == 10
    assert len(api.ok(limit=3)["data"]) == 3


def test_limit_50_is_the_max_and_51_is_refused(api: Api) -> None:
    """Seed: "`limit` … max `50`"; above it is refused, not lowered (S3)."""
    assert returned(api.ok(limit=50)) == ALICE_NOW
    assert_error(api.retrieve(limit=51), 422, "validation_error", "limit")
    assert_error(api.retrieve(limit=0), 422, "validation_error", "limit")
    assert_error(api.retrieve(limit="5"), 422, "validation_error", "limit")
    assert_error(api.retrieve(limit=True), 422, "validation_error", "limit")


# --- required fields ----------------------------------------------------------------------


@pytest.mark.parametrize("field", ["external_user_id", "query"])
def test_external_user_id_and_query_are_required(api: Api, field: str) -> None:
    """Seed, "Fields": `external_user_id` and `query` are Required: Yes."""
    assert_error(api.retrieve(**{field: None}), 422, "validation_error", field)
    assert_error(api.retrieve(**{field: "  "}), 422, "validation_error", field)
    assert_error(api.retrieve(**{field: 7}), 422, "validation_error", field)


def test_every_field_error_is_reported_at_once(api: Api) -> None:
    """S3: one 422 names every field that breaks a rule."""
    body = assert_error(
        api.retrieve(limit=99, format="yaml", context_max_tokens=0), 422, "validation_error"
    )
    assert {d["field"] for d in body["error"]["details"]} == {
        "limit",
        "format",
        "context_max_tokens",
    }


def test_an_unknown_user_gets_no_memories(api: Api) -> None:
    """Seed: "`external_user_id` End-user identifier inside your tenant"; one the tenant has
    no memories of gets none (S5)."""
    body = api.ok(external_user_id="nobody-known")

    assert (body["data"], body["system_prompt_addition"], body["context_token_count"]) == (
        [],
        "",
        0,
    )


# --- format -------------------------------------------------------------------------------


def test_bullets_is_the_default_format(api: Api) -> None:
    """Seed, "`format` examples", `bullets`: "What you know about this user:" then one
    "- " line per memory; `format` "Default `bullets`"."""
    body = api.ok(limit=3)

    contents = [result["content"] for result in body["data"]]
    assert body["system_prompt_addition"] == "\n".join(
        [HEADER, *(f"- {content}" for content in contents)]
    )
    assert [r["context_snippet"] for r in body["data"]] == [f"- {c}" for c in contents]
    assert (
        api.ok(limit=3, format="bullets")["system_prompt_addition"]
        == (body["system_prompt_addition"])
    )


def test_json_format_groups_memories_by_category(api: Api) -> None:
    """Seed, `json`: {"memories": {"preference": ["User prefers …"]}}, indented as shown."""
    body = api.ok(limit=5, format="json")

    expected: dict[str, list[str]] = {}
    for result in body["data"]:
        expected.setdefault(result["category"], []).append(result["content"])
    text = body["system_prompt_addition"]
    assert json.loads(text) == {"memories": expected}
    assert text == json.dumps({"memories": expected}, indent=2)
    first = body["data"][0]
    assert json.loads(first["context_snippet"]) == {
        "memories": {first["category"]: [first["content"]]}
    }


def test_xml_format_is_a_memory_context_element(api: Api) -> None:
    """Seed, `xml`: the header, then <memory_context> with one <memory category="…"> per
    memory, its text indented inside."""
    body = api.ok(limit=2, format="xml", categories=["preference"])

    memories = [
        f'  <memory category="preference">\n    {r["content"]}\n  </memory>' for r in body["data"]
    ]
    assert body["system_prompt_addition"] == "\n".join(
        [HEADER, "<memory_context>", *memories, "</memory_context>"]
    )
    assert body["data"][0]["context_snippet"] == (
        f'<memory category="preference">\n  {body["data"][0]["content"]}\n</memory>'
    )


def test_other_formats_are_refused(api: Api) -> None:
    """Seed: `format` is "bullets" | "json" | "xml"."""
    assert_error(api.retrieve(format="markdown"), 422, "validation_error", "format")
    assert_error(api.retrieve(format="XML"), 422, "validation_error", "format")


# --- context_max_tokens -------------------------------------------------------------------


def test_the_seeds_example_context_counts_18_tokens() -> None:
    """Seed: the example's system_prompt_addition has "context_token_count": 18 (S9)."""
    example = (
        "What you know about this user:\n"
        "- User prefers concise technical explanations and Python examples."
    )
    assert token_count(example) == 18


def test_context_max_tokens_defaults_to_500(fresh_memoryos: RunningServer) -> None:
    """Seed: "`context_max_tokens` … Default `500`": 40 memories of about 25 tokens each do
    not fit; without the field the context is what a budget of 500 gives."""
    store = memoryos.emulator(fresh_memoryos).store
    now = dt.datetime.now(dt.UTC).isoformat()
    with store.db.write() as conn:
        conn.executemany(
            "INSERT INTO memories (id, tenant, external_user_id, agent_id, category, content,"
            " importance, created_at) VALUES (?, 'contoso', 'long-history', 'it-helpdesk',"
            " 'event', ?, ?, ?)",
            [
                (
                    str(uuid.uuid4()),
                    f"Ticket {n} was about a printer on floor {n} that needed its driver reinstalled.",
                    n / 10,
                    now,
                )
                for n in range(40)
            ],
        )
    api = Api(fresh_memoryos.url)

    default = api.ok(external_user_id="long-history", limit=50)
    assert len(default["data"]) == 40
    assert 450 < default["context_token_count"] <= 500
    at_500 = api.ok(external_user_id="long-history", limit=50, context_max_tokens=500)
    assert default["system_prompt_addition"] == at_500["system_prompt_addition"]
    assert (
        api.ok(external_user_id="long-history", limit=50, context_max_tokens=8000)[
            "context_token_count"
        ]
        > 500
    )


def test_a_small_budget_drops_lower_importance_memories_first(api: Api) -> None:
    """Seed: "MemoryOS drops lower-importance memories first when the context is too large.
    It does not truncate mid-sentence." `data` keeps every result (S10)."""
    full = api.ok(limit=10)
    body = api.ok(limit=10, context_max_tokens=full["context_token_count"] // 2)

    assert returned(body) == returned(full)
    lines = body["system_prompt_addition"].split("\n")
    assert lines[0] == HEADER
    kept = [line.removeprefix("- ") for line in lines[1:]]
    by_content = {r["content"]: r for r in body["data"]}
    assert set(kept) <= set(by_content)  # whole memories only
    assert 0 < len(kept) < len(body["data"])
    dropped = [r for r in body["data"] if r["content"] not in kept]
    assert max(r["importance_score"] for r in dropped) <= min(
        by_content[c]["importance_score"] for c in kept
    )
    assert kept == [r["content"] for r in body["data"] if r["content"] in kept]  # rank order
    assert body["context_token_count"] == token_count(body["system_prompt_addition"])
    assert body["context_token_count"] <= full["context_token_count"] // 2


def test_importance_not_rank_decides_what_is_dropped(api: Api) -> None:
    """Seed: "drops lower-importance memories first": the best-ranked memory goes first
    when it is the least important."""
    query = "How did Alice reset her VPN profile?"
    full = api.ok(query=query, limit=5)
    assert full["data"][0]["id"] in ids("vpn-reset")  # importance 3.0, the lowest

    body = api.ok(query=query, limit=5, context_max_tokens=full["context_token_count"] - 1)

    lines = body["system_prompt_addition"].split("\n")[1:]
    assert lines == [f"- {r['content']}" for r in body["data"][1:]]


def test_a_budget_no_memory_fits_gives_an_empty_context(api: Api) -> None:
    """Seed: "It does not truncate mid-sentence": rather no memory than half of one (S10)."""
    body = api.ok(context_max_tokens=10)

    assert (body["system_prompt_addition"], body["context_token_count"]) == ("", 0)
    assert len(body["data"]) == 10


def test_the_budget_applies_to_every_format(api: Api) -> None:
    """Seed: "Use context_max_tokens to limit the size of system_prompt_addition"."""
    for form in ("json", "xml"):
        full = api.ok(limit=10, format=form)
        body = api.ok(limit=10, format=form, context_max_tokens=full["context_token_count"] // 2)
        assert 0 < body["context_token_count"] <= full["context_token_count"] // 2
        shown = [r for r in body["data"] if r["content"] in body["system_prompt_addition"]]
        assert 0 < len(shown) < len(body["data"])


def test_context_max_tokens_limits(api: Api) -> None:
    """S3: `context_max_tokens` is an integer from 1 to 8000."""
    assert api.ok(context_max_tokens=8000)["context_token_count"] > 0
    for bad in (0, 8001, "500", 12.5):
        assert_error(
            api.retrieve(context_max_tokens=bad), 422, "validation_error", "context_max_tokens"
        )


# --- filters ------------------------------------------------------------------------------


def test_categories_filter(api: Api) -> None:
    """Seed: "`categories` `MemoryCategory[]` … Optional category filters"."""
    goal = api.ok(categories=["goal"])
    assert returned(goal) == ids("london-trip")
    both = api.ok(categories=["preference", "goal"], limit=50)
    assert {r["category"] for r in both["data"]} == {"preference", "goal"}
    assert returned(api.ok(categories=[], limit=50)) == ALICE_NOW  # empty: no filter (S4)


def test_unknown_categories_are_refused(api: Api) -> None:
    """Seed: categories are `MemoryCategory` values (S4 lists them)."""
    assert_error(api.retrieve(categories=["mood"]), 422, "validation_error", "categories")
    assert_error(api.retrieve(categories="goal"), 422, "validation_error", "categories")


def test_agent_id_filter(api: Api) -> None:
    """Seed: "`agent_id` `string | null` … Optional agent filter"."""
    assert returned(api.ok(agent_id="it-helpdesk", limit=50)) == HELPDESK
    assert returned(api.ok(agent_id=None, limit=50)) == ALICE_NOW
    assert api.ok(agent_id="no-such-agent")["data"] == []


def test_time_filter_days(api: Api) -> None:
    """Seed: "`time_filter_days` … Return only memories created in the last N days"."""
    assert returned(api.ok(time_filter_days=7)) == ids("window-seats")
    assert returned(api.ok(time_filter_days=15)) == ids("window-seats", "london-trip")
    assert returned(api.ok(time_filter_days=None, limit=50)) == ALICE_NOW
    for bad in (0, -1, "7"):
        assert_error(
            api.retrieve(time_filter_days=bad), 422, "validation_error", "time_filter_days"
        )


def test_as_of_returns_what_was_valid_then(api: Api) -> None:
    """Seed: "`as_of` … Historical validity boundary; ISO 8601 timestamp with timezone".
    50 days ago alice flew from Portland, and the later memories did not exist yet."""
    then = dt.datetime.now(dt.UTC) - dt.timedelta(days=50)
    expected = ids("mileage-plan", "home-airport-pdx", "seattle-office")

    assert returned(api.ok(as_of=then.isoformat().replace("+00:00", "Z"))) == expected
    in_paris = then.astimezone(dt.timezone(dt.timedelta(hours=2))).isoformat()
    assert returned(api.ok(as_of=in_paris)) == expected
    assert "home-airport-pdx" not in returned(api.ok(limit=50))


def test_time_filter_days_counts_back_from_as_of(api: Api) -> None:
    """S12: with `as_of`, "the last N days" are those before it."""
    then = (dt.datetime.now(dt.UTC) - dt.timedelta(days=50)).isoformat()

    assert returned(api.ok(as_of=then, time_filter_days=30)) == ids(
        "mileage-plan", "seattle-office"
    )


def test_as_of_needs_a_timezone(api: Api) -> None:
    """Seed: "ISO 8601 timestamp with timezone"."""
    for bad in ("2026-10-01T00:00:00", "2026-10-01", "last week", 1760000000):
        assert_error(api.retrieve(as_of=bad), 422, "validation_error", "as_of")


# --- last_accessed, hot tier --------------------------------------------------------------


def test_retrieval_moves_last_accessed_and_fills_the_hot_tier(fresh: Api) -> None:
    """Seed: `last_accessed` "Last access timestamp"; `memories_from_hot_tier` "Number of
    returned memories served from Redis hot tier" (S6: accessed within the hour)."""
    first = fresh.ok(limit=50)
    hotel = next(r for r in first["data"] if r["id"] in ids("hotel-walk"))
    assert wire(hotel["last_accessed"]) < wire(first["timestamp"]) - dt.timedelta(days=3)
    assert first["memories_from_hot_tier"] == 0

    second = fresh.ok(limit=50)
    assert second["memories_from_hot_tier"] == len(second["data"]) == len(ALICE_NOW)
    for result in second["data"]:
        assert abs(wire(result["last_accessed"]) - wire(first["timestamp"])) <= dt.timedelta(
            seconds=2
        )
    assert second["cached"] is False


# --- tenants and quota --------------------------------------------------------------------


def test_tenants_are_separate(memoryos: RunningServer) -> None:
    """Seed: "End-user identifier inside your tenant": the same id in another tenant is
    another person."""
    body = Api(memoryos.url, OTHER_TENANT_KEY).ok(limit=50)

    assert [r["content"] for r in body["data"]] == [
        "This customer prefers answers by email rather than chat."
    ]


def test_passthrough_skips_memory_context(memoryos: RunningServer) -> None:
    """Seed: `is_passthrough` "`true` when memory context should be skipped"; the tenant's
    fixture is PASSTHROUGH (S8: no memories, nothing to give feedback on)."""
    body = Api(memoryos.url, PASSTHROUGH_KEY).ok()

    assert set(body) == TOP_LEVEL_FIELDS
    assert (body["quota_mode"], body["is_passthrough"], body["is_degraded"]) == (
        "PASSTHROUGH",
        True,
        False,
    )
    assert (body["data"], body["system_prompt_addition"], body["retrieval_id"]) == ([], "", None)
    assert body["context_token_count"] is None


def test_degraded_retrieval_ranks_by_importance(memoryos: RunningServer) -> None:
    """Seed: `is_degraded` "`true` when retrieval is degraded"; quota_mode
    DEGRADED_RETRIEVE (S8: the query is not used to rank)."""
    body = Api(memoryos.url, DEGRADED_KEY).ok(query="Does Alice want a gym in her hotel?")

    assert (body["quota_mode"], body["is_degraded"], body["is_passthrough"]) == (
        "DEGRADED_RETRIEVE",
        True,
        False,
    )
    assert [r["content"] for r in body["data"]] == [
        "Alice prefers aisle seats.",
        "Alice likes hotels with a gym.",
    ]
    assert [r["relevance_score"] for r in body["data"]] == [0.8, 0.4]


def test_blocked_quota_returns_no_memory(memoryos: RunningServer) -> None:
    """Seed: quota_mode "BLOCKED" (S8: answered 200, like PASSTHROUGH)."""
    body = Api(memoryos.url, BLOCKED_KEY).ok()

    assert (body["quota_mode"], body["is_passthrough"], body["data"]) == ("BLOCKED", True, [])


# --- clarification in the response --------------------------------------------------------


def test_a_pending_clarification_comes_with_its_memories(api: Api) -> None:
    """Seed: `clarification_question` "Optional user-facing question for resolving a
    pending conflict"; `clarification` "Structured id, question, expiry, and
    backend-approved answer options for the same clarification" (S13)."""
    body = api.ok(query="Which seat does Alice prefer?")

    clarification = body["clarification"]
    assert clarification["id"] == SEAT_CLARIFICATION
    assert body["clarification_question"] == clarification["question"]
    assert wire(clarification["expires_at"]) > wire(body["timestamp"])
    assert [o["answer"] for o in clarification["options"]] == ["A", "B", "both", "neither"]
    assert all(o["label"] for o in clarification["options"])


def test_no_clarification_without_its_memories_or_once_expired(api: Api) -> None:
    """S13: only about returned memories; the expired office conflict never shows."""
    vpn = api.ok(agent_id="it-helpdesk", categories=["event"])
    assert (vpn["clarification"], vpn["clarification_question"]) == (None, None)
    offices = api.ok(agent_id="it-helpdesk", categories=["fact"], limit=50)
    assert ids("seattle-office", "redmond-office") <= returned(offices)
    assert offices["clarification"] is None


# --- refusals -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "authorization",
    [None, "ApiKey mem_live_not_a_key", "Bearer mem_live_devstack_contoso_4f7c2a9e61b84d03", ""],
)
def test_an_api_key_is_required(memoryos: RunningServer, authorization: str | None) -> None:
    """Seed, "Authentication": `Authorization: ApiKey mem_live_xxx`."""
    headers = {} if authorization is None else {"Authorization": authorization}
    response = Api(memoryos.url, None).call(
        "POST",
        "/v1/memories/retrieve",
        json={"external_user_id": ALICE, "query": "q"},
        headers=headers,
    )

    assert_error(response, 401, "unauthorized")


def test_not_json_and_wrong_methods_are_refused(api: Api) -> None:
    """Seed: "Content-Type: application/json"; `POST /v1/memories/retrieve` (S1, S2)."""
    assert_error(
        api.call(
            "POST",
            "/v1/memories/retrieve",
            data="query=x",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        ),
        415,
        "unsupported_media_type",
    )
    assert_error(
        api.call(
            "POST", "/v1/memories/retrieve", data="{", headers={"Content-Type": "application/json"}
        ),
        400,
        "invalid_request",
    )
    assert_error(api.call("GET", "/v1/memories/retrieve"), 405, "method_not_allowed")
    assert_error(api.call("POST", "/v1/memories/search", json={}), 404, "not_found")
