"""MemoryOS emulator (seed 002), `POST /v1/memories/clarifications/{id}/answer`: the four
answers and what each keeps, and every refusal the seed names (409, 404). Tests that answer
use an emulator of their own (`fresh_memoryos`)."""

from __future__ import annotations

import uuid

import pytest

from devstack.memoryos.store import stable_id
from devstack.serve import RunningServer
from tests.devstack.memoryos_api import (
    BOB,
    OFFICE_CLARIFICATION,
    OTHER_TENANT_KEY,
    SEAT_CLARIFICATION,
    WIRE_TIME,
    Api,
    assert_error,
    ids,
)

AISLE = ids("aisle-seats")
WINDOW = ids("window-seats")


@pytest.fixture
def api(memoryos: RunningServer) -> Api:
    return Api(memoryos.url)


@pytest.fixture
def fresh(fresh_memoryos: RunningServer) -> Api:
    return Api(fresh_memoryos.url)


def seats(api: Api) -> set[str]:
    body = api.ok(categories=["preference"], agent_id="travel-planner", limit=50)
    return {r["id"] for r in body["data"]} & (AISLE | WINDOW)


@pytest.mark.parametrize(
    ("answer", "kept"),
    [("A", AISLE), ("B", WINDOW), ("both", AISLE | WINDOW), ("neither", set())],
)
def test_each_allowed_answer_resolves_the_conflict(fresh: Api, answer: str, kept: set) -> None:
    """Seed: "Allowed answers are A, B, both, and neither" … "applies the governed conflict
    transition" (S14: the memories the answer does not keep stop being valid)."""
    assert seats(fresh) == AISLE | WINDOW

    response = fresh.answer(SEAT_CLARIFICATION, answer=answer, free_text="Checked with Alice.")

    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"data", "request_id", "timestamp"}
    assert body["data"] == {
        "resolved": True,
        "clarification_id": SEAT_CLARIFICATION,
        "conflict_id": stable_id("contoso", "conflict", "seat-conflict"),
        "resolution": answer,
    }
    uuid.UUID(body["request_id"])
    assert WIRE_TIME.match(body["timestamp"])
    assert seats(fresh) == kept
    after = fresh.ok(query="Which seat does Alice prefer?")
    assert (after["clarification"], after["clarification_question"]) == (None, None)


def test_free_text_is_optional(fresh: Api) -> None:
    """Seed's example sends `free_text`; the answer alone is enough (S14)."""
    assert fresh.answer(SEAT_CLARIFICATION, answer="B").status_code == 200


def test_a_repeated_answer_is_409(fresh: Api) -> None:
    """Seed: "A repeated or expired answer returns 409"."""
    assert fresh.answer(SEAT_CLARIFICATION, answer="A").status_code == 200

    assert_error(fresh.answer(SEAT_CLARIFICATION, answer="A"), 409, "conflict")
    assert_error(fresh.answer(SEAT_CLARIFICATION, answer="neither"), 409, "conflict")
    assert seats(fresh) == AISLE  # the second answer changed nothing


def test_an_expired_answer_is_409(api: Api) -> None:
    """Seed: "A repeated or expired answer returns 409" (the office conflict expired)."""
    assert_error(api.answer(OFFICE_CLARIFICATION, answer="A"), 409, "conflict")


def test_another_users_clarification_is_404(api: Api) -> None:
    """Seed: "a clarification belonging to another user or tenant is returned as 404"."""
    assert_error(api.answer(SEAT_CLARIFICATION, answer="A", external_user_id=BOB), 404, "not_found")


def test_another_tenants_clarification_is_404(memoryos: RunningServer) -> None:
    """Seed: "MemoryOS verifies the authenticated tenant" … another tenant's is 404, even
    for the same external_user_id."""
    other = Api(memoryos.url, OTHER_TENANT_KEY)

    assert_error(other.answer(SEAT_CLARIFICATION, answer="A"), 404, "not_found")


def test_an_unknown_clarification_is_404(api: Api) -> None:
    assert_error(api.answer(str(uuid.uuid4()), answer="A"), 404, "not_found")


@pytest.mark.parametrize("answer", ["C", "a", "Both", "", None, 1])
def test_other_answers_are_refused(api: Api, answer: object) -> None:
    """Seed: "Allowed answers are A, B, both, and neither" (S3: 422, before any lookup)."""
    assert_error(api.answer(SEAT_CLARIFICATION, answer=answer), 422, "validation_error", "answer")


def test_external_user_id_is_required(api: Api) -> None:
    """Seed: "resolves external_user_id inside that tenant": the body must name one."""
    assert_error(
        api.answer(SEAT_CLARIFICATION, answer="A", external_user_id=None),
        422,
        "validation_error",
        "external_user_id",
    )


def test_answering_needs_the_api_key(memoryos: RunningServer) -> None:
    """Seed: the answer is sent with `Authorization: ApiKey mem_live_xxx`."""
    assert_error(
        Api(memoryos.url, None).answer(SEAT_CLARIFICATION, answer="A"), 401, "unauthorized"
    )
