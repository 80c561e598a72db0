"""MemoryOS emulator (seed 002), `POST /v1/memories/retrieval-feedback`: successful use and
user correction as the seed shows them, every refusal, and the devstack's read-back of what
arrived (`GET /devstack/retrieval-feedback`, not part of the seed: docs/memoryos.md, S16)."""

from __future__ import annotations

import uuid

import pytest

from devstack.serve import RunningServer
from tests.devstack.memoryos_api import (
    ALICE,
    OTHER_TENANT_KEY,
    PASSTHROUGH_KEY,
    WIRE_TIME,
    Api,
    assert_error,
    ids,
)

METADATA = {"agent_id": "travel-planner", "conversation_id": "chat_8841"}


@pytest.fixture
def api(fresh_memoryos: RunningServer) -> Api:
    return Api(fresh_memoryos.url)


def retrieval(api: Api) -> tuple[str, list[str]]:
    body = api.ok(query="Which seat does Alice prefer?", limit=3)
    return body["retrieval_id"], [r["id"] for r in body["data"]]


def test_successful_use_is_recorded(api: Api) -> None:
    """Seed, "Successful use": retrieval_id, outcome used_successfully, used_memory_ids,
    agent_confidence, metadata; no correction job (S15)."""
    retrieval_id, memory_ids = retrieval(api)

    response = api.feedback(
        retrieval_id=retrieval_id,
        outcome="used_successfully",
        used_memory_ids=memory_ids[:1],
        agent_confidence=0.86,
        metadata=METADATA,
    )

    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"data", "request_id", "timestamp"}
    data = body["data"]
    assert set(data) == {"feedback_id", "retrieval_id", "outcome", "correction_job_id"}
    uuid.UUID(data["feedback_id"])
    assert (data["retrieval_id"], data["outcome"], data["correction_job_id"]) == (
        retrieval_id,
        "used_successfully",
        None,
    )
    (received,) = api.received()
    assert received["feedback_id"] == data["feedback_id"]
    assert received["external_user_id"] == ALICE
    assert received["used_memory_ids"] == memory_ids[:1]
    assert (received["agent_confidence"], received["metadata"]) == (0.86, METADATA)
    assert received["correction"] is None
    assert WIRE_TIME.match(received["received_at"])


def test_a_user_correction_queues_a_correction_job(api: Api) -> None:
    """Seed, "User correction": outcome user_corrected with the correction; "correction_job_id
    means MemoryOS queued an async retrospective extraction pass"."""
    retrieval_id, memory_ids = retrieval(api)
    aisle = next(iter(ids("aisle-seats")))
    assert aisle in memory_ids
    correction = "Actually I prefer window seats on every flight, not aisle seats."

    response = api.feedback(
        retrieval_id=retrieval_id,
        outcome="user_corrected",
        used_memory_ids=[aisle],
        correction=correction,
        agent_confidence=0.2,
        metadata=METADATA,
    )

    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["outcome"] == "user_corrected"
    uuid.UUID(data["correction_job_id"])
    (received,) = api.received(retrieval_id=retrieval_id)
    assert received["correction"] == correction
    assert received["correction_job_id"] == data["correction_job_id"]
    assert received["used_memory_ids"] == [aisle]
    # The job is queued, not run: the memory reads as before (S15).
    assert aisle in {r["id"] for r in api.ok(query="seat", limit=50)["data"]}


@pytest.mark.parametrize("outcome", ["ignored", "needed_clarification"])
def test_the_seeds_other_uses_are_outcomes_too(api: Api, outcome: str) -> None:
    """Seed: feedback is for "the agent ignored a memory because it was not useful" and
    "the agent had to ask for clarification" too (S15 names them)."""
    retrieval_id, _ = retrieval(api)

    response = api.feedback(retrieval_id=retrieval_id, outcome=outcome)

    assert response.status_code == 200, response.text
    assert [f["outcome"] for f in api.received()] == [outcome]


def test_a_correction_is_required_with_user_corrected_and_only_then(api: Api) -> None:
    """Seed: the "User correction" body carries `correction`; "Successful use" has none (S15)."""
    retrieval_id, _ = retrieval(api)

    for correction in (None, "", "   "):
        assert_error(
            api.feedback(
                retrieval_id=retrieval_id, outcome="user_corrected", correction=correction
            ),
            422,
            "validation_error",
            "correction",
        )
    assert_error(
        api.feedback(retrieval_id=retrieval_id, outcome="used_successfully", correction="x"),
        422,
        "validation_error",
        "correction",
    )
    assert api.received() == []


def test_field_refusals(api: Api) -> None:
    """S15: outcome from the list, retrieval_id required, agent_confidence 0 to 1, metadata an
    object, used_memory_ids strings."""
    retrieval_id, _ = retrieval(api)
    cases = [
        ({"outcome": "used_successfully"}, "retrieval_id"),
        ({"retrieval_id": retrieval_id}, "outcome"),
        ({"retrieval_id": retrieval_id, "outcome": "helped"}, "outcome"),
        (
            {"retrieval_id": retrieval_id, "outcome": "ignored", "agent_confidence": 1.5},
            "agent_confidence",
        ),
        (
            {"retrieval_id": retrieval_id, "outcome": "ignored", "agent_confidence": "high"},
            "agent_confidence",
        ),
        ({"retrieval_id": retrieval_id, "outcome": "ignored", "metadata": ["x"]}, "metadata"),
        (
            {"retrieval_id": retrieval_id, "outcome": "ignored", "used_memory_ids": "x"},
            "used_memory_ids",
        ),
    ]
    for body, field in cases:
        assert_error(api.feedback(**body), 422, "validation_error", field)
    assert api.received() == []


def test_used_memory_ids_must_come_from_the_retrieval(api: Api) -> None:
    """Seed: used_memory_ids are memories "retrieved" for this retrieval_id (S15)."""
    retrieval_id, memory_ids = retrieval(api)
    not_returned = next(iter(ids("vpn-reset")))
    assert not_returned not in memory_ids

    assert_error(
        api.feedback(retrieval_id=retrieval_id, outcome="ignored", used_memory_ids=[not_returned]),
        422,
        "validation_error",
        "used_memory_ids",
    )


def test_an_unknown_or_other_tenants_retrieval_is_404(api: Api) -> None:
    """Seed: `retrieval_id` "Stable id used when sending retrieval feedback", per tenant."""
    retrieval_id, _ = retrieval(api)
    other = Api(api.url, OTHER_TENANT_KEY)

    assert_error(other.feedback(retrieval_id=retrieval_id, outcome="ignored"), 404, "not_found")
    assert_error(api.feedback(retrieval_id=str(uuid.uuid4()), outcome="ignored"), 404, "not_found")
    assert other.received() == []


def test_a_passthrough_retrieval_has_no_id_to_send_feedback_for(api: Api) -> None:
    """Seed: `retrieval_id` is `string | null` (S8: null when memory was skipped)."""
    passthrough = Api(api.url, PASSTHROUGH_KEY)
    retrieval_id = passthrough.ok()["retrieval_id"]

    assert retrieval_id is None
    assert_error(
        passthrough.feedback(retrieval_id=retrieval_id, outcome="ignored"),
        422,
        "validation_error",
        "retrieval_id",
    )


def test_feedback_read_back_is_per_tenant_and_needs_a_key(api: Api) -> None:
    """S16: the devstack's inspection shows the caller's tenant only."""
    retrieval_id, _ = retrieval(api)
    assert api.feedback(retrieval_id=retrieval_id, outcome="ignored").status_code == 200

    assert len(api.received()) == 1
    assert api.received(retrieval_id=str(uuid.uuid4())) == []
    assert api.received(external_user_id=ALICE)[0]["retrieval_id"] == retrieval_id
    assert Api(api.url, OTHER_TENANT_KEY).received() == []
    assert_error(
        Api(api.url, None).call("GET", "/devstack/retrieval-feedback"), 401, "unauthorized"
    )


def test_sending_feedback_needs_the_api_key(api: Api) -> None:
    """Seed: `Authorization: ApiKey mem_live_xxx` on retrieval-feedback too."""
    retrieval_id, _ = retrieval(api)

    response = Api(api.url, None).feedback(retrieval_id=retrieval_id, outcome="ignored")

    assert_error(response, 401, "unauthorized")
    assert api.received() == []
