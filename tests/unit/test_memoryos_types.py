"""MemoryOS answers as typed values (memory_ui.sources.memoryos.types): the seed's own
example response parses field by field; malformed answers and error bodies become the
source's errors, whose message never repeats the service's words."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from memory_ui.sources.memoryos.errors import (
    MemoryOsError,
    MemoryOsInvalid,
    MemoryOsRefused,
    MemoryOsUnavailable,
    parse_error,
)
from memory_ui.sources.memoryos.types import FeedbackReceipt, Retrieval, external_user_id_for

# Seed 002's example response, as printed there.
SEED_RESPONSE = {
    "retrieval_id": "68716fef-731c-4496-bff0-78ccc8ce8bb3",
    "data": [
        {
            "id": "2b8f5f87-bbd4-4f84-9f5f-0cba5033f058",
            "content": "User prefers concise technical explanations and Python examples.",
            "category": "preference",
            "importance_score": 8.5,
            "last_accessed": "2026-04-17T09:45:00Z",
            "relevance_score": 0.962341,
            "context_snippet": "- User prefers concise technical explanations and Python examples.",
            "source_event_id": "f9a61e94-67c5-4a9a-9e72-61b8b15df4cc",
            "provenance": {
                "service": "support-service",
                "event_id": "support-chat-8841",
                "observed_at": "2026-04-17T09:40:00Z",
                "writer_id": "b7b5b2a8-2a66-4ce3-9b37-2a1d8cf78d4d",
            },
        }
    ],
    "cached": False,
    "system_prompt_addition": (
        "What you know about this user:\n"
        "- User prefers concise technical explanations and Python examples."
    ),
    "context_token_count": 18,
    "memories_from_hot_tier": 0,
    "clarification_question": None,
    "clarification": None,
    "quota_mode": "FULL",
    "is_degraded": False,
    "is_passthrough": False,
    "request_id": "b0eb46a4-8794-44c8-b2a9-8f2dfbb4176c",
    "timestamp": "2026-04-17T09:45:03Z",
}


def test_the_seeds_example_response_parses() -> None:
    retrieval = Retrieval.from_json(SEED_RESPONSE)

    assert retrieval.retrieval_id == "68716fef-731c-4496-bff0-78ccc8ce8bb3"
    assert retrieval.context == SEED_RESPONSE["system_prompt_addition"]
    assert retrieval.context_tokens == 18
    (memory,) = retrieval.memories
    assert (memory.category, memory.importance, memory.relevance) == ("preference", 8.5, 0.962341)
    assert memory.last_accessed == dt.datetime(2026, 4, 17, 9, 45, tzinfo=dt.UTC)
    assert memory.provenance is not None
    assert memory.provenance.service == "support-service"
    assert memory.provenance.observed_at == dt.datetime(2026, 4, 17, 9, 40, tzinfo=dt.UTC)
    assert (retrieval.quota_mode, retrieval.degraded, retrieval.passthrough) == (
        "FULL",
        False,
        False,
    )


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"quota_mode": "TURBO"}, ValueError),
        ({"data": {}}, TypeError),
        ({"timestamp": "2026-04-17T09:45:03"}, ValueError),  # no timezone
        ({"system_prompt_addition": None}, TypeError),
    ],
)
def test_a_malformed_retrieval_is_refused(change: dict, error: type[Exception]) -> None:
    with pytest.raises(error):
        Retrieval.from_json({**SEED_RESPONSE, **change})
    with pytest.raises(KeyError):
        Retrieval.from_json({k: v for k, v in SEED_RESPONSE.items() if k != "is_degraded"})


def test_the_seeds_feedback_answer_parses() -> None:
    receipt = FeedbackReceipt.from_json(
        {
            "data": {
                "feedback_id": "0e6aa7b1-6678-4c76-b675-12f63fbf54c2",
                "retrieval_id": "68716fef-731c-4496-bff0-78ccc8ce8bb3",
                "outcome": "user_corrected",
                "correction_job_id": "d2bb7542-aea1-4090-a70a-0ff2dfd86175",
            },
            "request_id": "c772f4e2-1e8f-4852-aa92-9c6548d26a1e",
            "timestamp": "2026-06-30T10:00:00Z",
        }
    )

    assert receipt.correction_job_id == "d2bb7542-aea1-4090-a70a-0ff2dfd86175"


def test_error_bodies_become_the_sources_errors_in_its_own_words() -> None:
    said = {"error": {"code": "unauthorized", "message": "key mem_live_x is revoked"}}

    refused = parse_error(401, json.dumps(said).encode())

    assert isinstance(refused, MemoryOsRefused)
    assert (refused.code, refused.detail) == ("unauthorized", "key mem_live_x is revoked")
    assert "mem_live" not in refused.message
    assert isinstance(parse_error(503, b"<html>Bad gateway</html>"), MemoryOsUnavailable)
    invalid = parse_error(422, b"{}")
    assert isinstance(invalid, MemoryOsInvalid) and invalid.portal_status == 400
    assert type(parse_error(418, b"")) is MemoryOsError


def test_external_user_id_comes_from_the_template() -> None:
    oid = "a11ce000-0000-4000-8000-000000000001"
    assert external_user_id_for("{oid}", "Alice@Contoso.com", oid) == oid
    assert external_user_id_for("contoso:{upn}", "Alice@Contoso.com", oid) == (
        "contoso:alice@contoso.com"
    )
    with pytest.raises(ValueError, match="needs the object id"):
        external_user_id_for("{oid}", "alice@contoso.com", "")
    for around in ("user-{oid}", "user-{oid!s}", "{oid:.36}"):  # not "user-": nobody's id
        with pytest.raises(ValueError, match="needs the object id"):
            external_user_id_for(around, "alice@contoso.com", "")
    with pytest.raises(ValueError, match="empty external_user_id"):
        external_user_id_for("{upn}", "", oid)
