"""A small HTTP helper for the legacy store emulator's contract tests (seed 003)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import requests

BASE = "/api/2.1/unity-catalog/memory-stores"
TRAVEL = "main.agents.travel_planner_memory"  # portal: READ + WRITE
HELPDESK = "main.agents.it_helpdesk_memory"  # portal: READ + WRITE
BENEFITS = "main.agents.benefits_assistant_memory"  # portal: READ only
FINANCE = "main.finance.finance_insights_memory"  # portal: no privilege
ALICE = "alice@contoso.com"
BOB = "bob@contoso.com"


@dataclass
class Api:
    url: str  # the emulator's base URL
    token: str | None

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = kwargs.pop("headers", {})
        if self.token is not None:
            headers.setdefault("Authorization", f"Bearer {self.token}")
        return requests.request(
            method, f"{self.url}{BASE}{path}", headers=headers, timeout=10, **kwargs
        )

    def entries(self, store: str, scope: str, **params: Any) -> requests.Response:
        return self.call("GET", f"/{store}/entries", params={"scope": scope, **params})

    def get(self, store: str, scope: str, path: str) -> requests.Response:
        return self.call("GET", f"/{store}/entries:get", params={"scope": scope, "path": path})

    def create(self, store: str, scope: str, body: dict[str, Any]) -> requests.Response:
        return self.call("POST", f"/{store}/entries", params={"scope": scope}, json=body)

    def patch(self, store: str, body: dict[str, Any]) -> requests.Response:
        return self.call("PATCH", f"/{store}/entries", json=body)

    def delete(self, store: str, scope: str, path: str) -> requests.Response:
        return self.call("DELETE", f"/{store}/entries", params={"scope": scope, "path": path})

    def search(self, store: str, body: dict[str, Any]) -> requests.Response:
        return self.call("POST", f"/{store}/entries:search", json=body)


def assert_error(response: requests.Response, status: int, error_code: str) -> dict[str, Any]:
    """A Databricks-shaped error: exactly error_code and a non-empty message."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error_code", "message"}, body
    assert body["error_code"] == error_code, body
    assert body["message"]
    return body
