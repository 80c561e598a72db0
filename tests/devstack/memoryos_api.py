"""A small HTTP helper for the MemoryOS emulator's contract tests (seed 002), and the demo
data's names (devstack/memoryos/fixtures.toml)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

import requests

from devstack.memoryos.store import clarification_id, memory_id, tenant

CONTOSO = tenant("contoso")
KEY = CONTOSO.api_key
OTHER_TENANT_KEY = tenant("fabrikam").api_key
PASSTHROUGH_KEY = tenant("northwind").api_key
DEGRADED_KEY = tenant("tailspin").api_key
BLOCKED_KEY = tenant("adatum").api_key
ALICE = CONTOSO.users["alice@contoso.com"]
BOB = CONTOSO.users["bob@contoso.com"]
SEAT_CLARIFICATION = clarification_id("contoso", "seat-conflict")  # pending
OFFICE_CLARIFICATION = clarification_id("contoso", "office-conflict")  # expired
WIRE_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")

TOP_LEVEL_FIELDS = {
    "retrieval_id",
    "data",
    "cached",
    "system_prompt_addition",
    "context_token_count",
    "memories_from_hot_tier",
    "clarification_question",
    "clarification",
    "quota_mode",
    "is_degraded",
    "is_passthrough",
    "request_id",
    "timestamp",
}
RESULT_FIELDS = {
    "id",
    "content",
    "category",
    "importance_score",
    "last_accessed",
    "relevance_score",
    "context_snippet",
    "source_event_id",
    "provenance",
}


def ids(*keys: str) -> set[str]:
    """Ids of contoso's demo memories by their fixture keys."""
    return {memory_id("contoso", key) for key in keys}


def wire(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


@dataclass
class Api:
    url: str  # the emulator's base URL
    key: str | None = KEY

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = kwargs.pop("headers", {})
        if self.key is not None:
            headers.setdefault("Authorization", f"ApiKey {self.key}")
        return requests.request(method, f"{self.url}{path}", headers=headers, timeout=10, **kwargs)

    def retrieve(self, **body: Any) -> requests.Response:
        body.setdefault("external_user_id", ALICE)
        body.setdefault("query", "What should the agent know about Alice?")
        return self.call("POST", "/v1/memories/retrieve", json=body)

    def ok(self, **body: Any) -> dict[str, Any]:
        response = self.retrieve(**body)
        assert response.status_code == 200, response.text
        return response.json()

    def answer(self, clarification: str, **body: Any) -> requests.Response:
        body.setdefault("external_user_id", ALICE)
        return self.call("POST", f"/v1/memories/clarifications/{clarification}/answer", json=body)

    def feedback(self, **body: Any) -> requests.Response:
        return self.call("POST", "/v1/memories/retrieval-feedback", json=body)

    def received(self, **params: str) -> list[dict[str, Any]]:
        response = self.call("GET", "/devstack/retrieval-feedback", params=params)
        assert response.status_code == 200, response.text
        return response.json()["data"]


def assert_error(
    response: requests.Response, status: int, code: str, field: str | None = None
) -> dict[str, Any]:
    """The emulator's error body (docs/memoryos.md, S1), naming `field` for a 422."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "request_id", "timestamp"}, body
    assert body["error"]["code"] == code, body
    assert body["error"]["message"]
    assert WIRE_TIME.match(body["timestamp"])
    if field is not None:
        assert field in {d["field"] for d in body["error"]["details"]}, body
    return body
