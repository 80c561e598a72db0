"""Legacy store emulator (seed 003): conversations and their items, privileges taken from
the backing store, and no way to list them (the reason the portal cannot erase them)."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from devstack.serve import RunningServer
from tests.conftest import TokenMinter
from tests.devstack.legacy_api import ALICE, BENEFITS, FINANCE, TRAVEL, assert_error

CONVERSATIONS = "/api/2.1/unity-catalog/conversations"


class Conversations:
    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.headers = {"Authorization": f"Bearer {token}"}

    def call(self, method: str, path: str = "", **kwargs: Any) -> requests.Response:
        return requests.request(
            method, f"{self.url}{CONVERSATIONS}{path}", headers=self.headers, timeout=10, **kwargs
        )

    def create(self, store: str = TRAVEL, **extra: Any) -> requests.Response:
        body = {"memory_store": {"name": store}, "scope": {"kind": "user", "value": ALICE}}
        return self.call("POST", json={**body, **extra})


@pytest.fixture
def api(fresh_legacy: RunningServer, coreapi_tokens: TokenMinter) -> Conversations:
    return Conversations(fresh_legacy.url, coreapi_tokens.legacy())


def test_create_get_update_delete(api: Conversations) -> None:
    created = api.create(metadata={"source": "support-chat"})
    assert created.status_code == 200, created.text
    conversation = created.json()
    assert conversation["object"] == "conversation"
    assert conversation["id"].startswith("conv_")
    assert isinstance(conversation["created_at"], int)
    cid = conversation["id"]

    assert api.call("GET", f"/{cid}").json() == conversation
    updated = api.call("POST", f"/{cid}", json={"metadata": {"resolved": "true"}}).json()
    assert updated["metadata"] == {"resolved": "true"}

    deleted = api.call("DELETE", f"/{cid}")
    assert deleted.json() == {"id": cid, "object": "conversation.deleted", "deleted": True}
    assert_error(api.call("GET", f"/{cid}"), 404, "RESOURCE_DOES_NOT_EXIST")


def test_items_are_created_listed_paged_fetched_and_deleted(api: Conversations) -> None:
    seed = [{"role": "user", "content": "hello"}, {"type": "function_call", "name": "f"}]
    cid = api.create(items=seed).json()["id"]
    added = api.call("POST", f"/{cid}/items", json={"items": [{"role": "assistant"}]})
    assert added.status_code == 200

    listed = api.call("GET", f"/{cid}/items").json()
    assert [item["type"] for item in listed["data"]] == ["message", "function_call", "message"]
    assert listed["has_more"] is False
    first = api.call("GET", f"/{cid}/items", params={"limit": 1}).json()
    assert first["has_more"] is True
    after = first["last_id"]
    rest = api.call("GET", f"/{cid}/items", params={"after": after, "limit": 5}).json()
    assert [i["id"] for i in rest["data"]] == [i["id"] for i in listed["data"][1:]]

    item_id = listed["data"][0]["id"]
    assert api.call("GET", f"/{cid}/items/{item_id}").json()["content"] == "hello"
    assert api.call("DELETE", f"/{cid}/items/{item_id}").json()["id"] == cid
    assert_error(api.call("GET", f"/{cid}/items/{item_id}"), 404, "RESOURCE_DOES_NOT_EXIST")


@pytest.mark.parametrize(
    "extra",
    [
        {"memory_store": {}},
        {"scope": {"kind": "user"}},
        {"scope": "alice"},
        {"metadata": {f"k{n}": "v" for n in range(17)}},
        {"metadata": {"k" * 65: "v"}},
        {"metadata": {"k": "v" * 513}},
        {"metadata": {"k": 1}},
        {"items": [{"role": "user"}] * 21},
    ],
)
def test_create_refusals(api: Conversations, extra) -> None:
    assert_error(api.create(**extra), 400, "INVALID_PARAMETER_VALUE")


def test_privileges_come_from_the_backing_store(api: Conversations) -> None:
    assert_error(api.create(store=BENEFITS), 403, "PERMISSION_DENIED")  # READ only
    assert_error(api.create(store=FINANCE), 403, "PERMISSION_DENIED")
    assert_error(api.create(store="main.agents.nope"), 404, "RESOURCE_DOES_NOT_EXIST")


def test_conversations_cannot_be_listed(api: Conversations) -> None:
    api.create()

    assert_error(api.call("GET"), 405, "ENDPOINT_NOT_FOUND")
    assert_error(
        api.call("GET", params={"scope": ALICE, "memory_store": TRAVEL}), 405, "ENDPOINT_NOT_FOUND"
    )
