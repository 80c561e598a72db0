"""Seed 003's conversation APIs: conversations pinned to a store and a scope, and their
OpenAI-shaped items. There is no endpoint that lists conversations (by store or by scope):
whoever does not hold a conversation id cannot find it, which is why the portal cannot
erase a person's conversations (docs/legacy-stores.md, Conversations).

    POST   /api/2.1/unity-catalog/conversations                      WRITE on the store
    GET    /api/2.1/unity-catalog/conversations/{id}                 READ
    POST   /api/2.1/unity-catalog/conversations/{id}                 WRITE (metadata)
    DELETE /api/2.1/unity-catalog/conversations/{id}                 WRITE
    POST   /api/2.1/unity-catalog/conversations/{id}/items           WRITE
    GET    /api/2.1/unity-catalog/conversations/{id}/items           READ (after, limit, order)
    GET    /api/2.1/unity-catalog/conversations/{id}/items/{item_id} READ
    DELETE /api/2.1/unity-catalog/conversations/{id}/items/{item_id} WRITE
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from werkzeug.wrappers import Request, Response

from devstack.coreapi.problems import json_response
from devstack.legacy.edits import Invalid
from devstack.legacy.store import READ, WRITE
from devstack.sqlite import Database

MAX_METADATA_KEYS = 16
MAX_METADATA_KEY_CHARS = 64
MAX_METADATA_VALUE_CHARS = 512
MAX_INITIAL_ITEMS = 20
ITEMS_LIMIT_DEFAULT = 20
ITEMS_LIMIT_MAX = 100  # OpenAI's conversation items limit range: 1-100

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    store TEXT NOT NULL,
    scope_kind TEXT NOT NULL,
    scope_value TEXT NOT NULL,
    metadata TEXT NOT NULL,      -- JSON object
    created_at INTEGER NOT NULL  -- epoch seconds, as the seed says
);
CREATE TABLE IF NOT EXISTS conversation_items (
    conversation_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    id TEXT NOT NULL,
    item TEXT NOT NULL,          -- JSON object
    PRIMARY KEY (conversation_id, id)
);
"""


@dataclass(frozen=True)
class Conversation:
    id: str
    store: str
    scope_kind: str
    scope_value: str
    metadata: dict[str, str]
    created_at: int

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "conversation",
            "created_at": self.created_at,
            "metadata": self.metadata,
        }


class ConversationStore:
    """Conversations in the stores' own database file (`db`), beside the entries."""

    def __init__(self, db: Database) -> None:
        self._db = db
        with db.connection() as conn:
            conn.executescript(_SCHEMA)

    def get(self, conversation_id: str) -> Conversation | None:
        row = self._db.row(
            "SELECT id, store, scope_kind, scope_value, metadata, created_at"
            " FROM conversations WHERE id = ?",
            (conversation_id,),
        )
        if row is None:
            return None
        return Conversation(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5])

    def create(self, conversation: Conversation, items: list[dict[str, Any]]) -> None:
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO conversations VALUES (?, ?, ?, ?, ?, ?)",
                (
                    conversation.id,
                    conversation.store,
                    conversation.scope_kind,
                    conversation.scope_value,
                    json.dumps(conversation.metadata),
                    conversation.created_at,
                ),
            )
            _add_items(conn, conversation.id, items)

    def set_metadata(self, conversation_id: str, metadata: dict[str, str]) -> None:
        with self._db.write() as conn:
            conn.execute(
                "UPDATE conversations SET metadata = ? WHERE id = ?",
                (json.dumps(metadata), conversation_id),
            )

    def delete(self, conversation_id: str) -> None:
        with self._db.write() as conn:
            conn.execute(
                "DELETE FROM conversation_items WHERE conversation_id = ?", (conversation_id,)
            )
            conn.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))

    def add_items(self, conversation_id: str, items: list[dict[str, Any]]) -> None:
        with self._db.write() as conn:
            _add_items(conn, conversation_id, items)

    def items(self, conversation_id: str) -> list[dict[str, Any]]:
        rows = self._db.rows(
            "SELECT item FROM conversation_items WHERE conversation_id = ? ORDER BY seq",
            (conversation_id,),
        )
        return [json.loads(row[0]) for row in rows]

    def delete_item(self, conversation_id: str, item_id: str) -> bool:
        with self._db.write() as conn:
            return bool(
                conn.execute(
                    "DELETE FROM conversation_items WHERE conversation_id = ? AND id = ?",
                    (conversation_id, item_id),
                ).rowcount
            )


def _add_items(conn: sqlite3.Connection, conversation_id: str, items: list[dict[str, Any]]) -> None:
    (seq,) = conn.execute(
        "SELECT COALESCE(MAX(seq), 0) FROM conversation_items WHERE conversation_id = ?",
        (conversation_id,),
    ).fetchone()
    for offset, item in enumerate(items, start=1):
        conn.execute(
            "INSERT INTO conversation_items VALUES (?, ?, ?, ?)",
            (conversation_id, seq + offset, item["id"], json.dumps(item)),
        )


# --- request rules ---------------------------------------------------------------------


def check_metadata(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Invalid("metadata must be an object.")
    if len(value) > MAX_METADATA_KEYS:
        raise Invalid(f"metadata has more than {MAX_METADATA_KEYS} keys.")
    for key, item in value.items():
        if len(key) > MAX_METADATA_KEY_CHARS:
            raise Invalid(f"metadata keys are at most {MAX_METADATA_KEY_CHARS} characters.")
        if not isinstance(item, str) or len(item) > MAX_METADATA_VALUE_CHARS:
            raise Invalid(
                f"metadata values are strings of at most {MAX_METADATA_VALUE_CHARS} characters."
            )
    return dict(value)


def check_items(value: Any, limit: int | None) -> list[dict[str, Any]]:
    """Items with an id each; items without a `type` are message items (seed 003)."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise Invalid("items must be an array of objects.")
    if limit is not None and len(value) > limit:
        raise Invalid(f"At most {limit} items may be given.")
    prepared = []
    for item in value:
        kind = item.get("type", "message")
        if not isinstance(kind, str):
            raise Invalid("item type must be a string.")
        prefix = "msg" if kind == "message" else "item"
        prepared.append({**item, "type": kind, "id": f"{prefix}_{secrets.token_hex(12)}"})
    return prepared


def new_conversation(store: str, scope: Any, metadata: Any) -> Conversation:
    if not isinstance(scope, dict):
        raise Invalid("scope must be an object with kind and value.")
    kind, value = scope.get("kind"), scope.get("value")
    if not isinstance(kind, str) or not kind or not isinstance(value, str) or not value:
        raise Invalid("scope.kind and scope.value are required strings.")
    return Conversation(
        f"conv_{secrets.token_hex(16)}",
        store,
        kind,
        value,
        check_metadata(metadata),
        int(time.time()),
    )


def item_list(
    items: list[dict[str, Any]], after: str | None, limit_raw: str | None, order: str | None
) -> dict[str, Any]:
    """OpenAI-style pagination: after (an item id), limit (1-100, default 20), order."""
    if order not in (None, "", "asc", "desc"):
        raise Invalid("order must be asc or desc.")
    ordered = list(reversed(items)) if order == "desc" else items
    if after:
        ids = [item["id"] for item in ordered]
        if after not in ids:
            raise Invalid("after names no item of this conversation.")
        ordered = ordered[ids.index(after) + 1 :]
    try:
        limit = int(limit_raw) if limit_raw else ITEMS_LIMIT_DEFAULT
    except ValueError as exc:
        raise Invalid("limit must be an integer.") from exc
    if not 1 <= limit <= ITEMS_LIMIT_MAX:
        raise Invalid(f"limit must be between 1 and {ITEMS_LIMIT_MAX}.")
    page = ordered[:limit]
    return {
        "object": "list",
        "data": page,
        "first_id": page[0]["id"] if page else None,
        "last_id": page[-1]["id"] if page else None,
        "has_more": len(ordered) > limit,
    }


# --- handlers --------------------------------------------------------------------------

# (store full name, principal, privilege) -> raises when refused
Authorize = Callable[[str, str, str], None]
NotFound = Callable[[str], Exception]  # message -> the 404 to raise
ReadBody = Callable[[Request], dict[str, Any]]


@dataclass(frozen=True)
class ConversationApi:
    """The handlers; `authorize` checks the caller's privilege on the backing store."""

    store: ConversationStore
    authorize: Authorize
    not_found: NotFound
    body: ReadBody

    def _conversation(self, conversation_id: str, principal: str, privilege: str) -> Conversation:
        conversation = self.store.get(conversation_id)
        if conversation is None:
            raise self.not_found(f"Conversation '{conversation_id}' does not exist.")
        self.authorize(conversation.store, principal, privilege)
        return conversation

    def create(self, request: Request, principal: str) -> Response:
        body = self.body(request)
        store = body.get("memory_store")
        name = store.get("name") if isinstance(store, dict) else None
        if not isinstance(name, str) or not name:
            raise Invalid("memory_store.name is required.")
        self.authorize(name, principal, WRITE)
        conversation = new_conversation(name, body.get("scope"), body.get("metadata"))
        self.store.create(conversation, check_items(body.get("items"), MAX_INITIAL_ITEMS))
        return json_response(conversation.to_json())

    def get(self, request: Request, principal: str, conversation_id: str) -> Response:
        return json_response(self._conversation(conversation_id, principal, READ).to_json())

    def update(self, request: Request, principal: str, conversation_id: str) -> Response:
        conversation = self._conversation(conversation_id, principal, WRITE)
        metadata = check_metadata(self.body(request).get("metadata"))
        self.store.set_metadata(conversation_id, metadata)
        return json_response({**conversation.to_json(), "metadata": metadata})

    def delete(self, request: Request, principal: str, conversation_id: str) -> Response:
        self._conversation(conversation_id, principal, WRITE)
        self.store.delete(conversation_id)
        return json_response(
            {"id": conversation_id, "object": "conversation.deleted", "deleted": True}
        )

    def add_items(self, request: Request, principal: str, conversation_id: str) -> Response:
        self._conversation(conversation_id, principal, WRITE)
        items = check_items(self.body(request).get("items"), None)
        if not items:
            raise Invalid("items must name at least one item.")
        self.store.add_items(conversation_id, items)
        return json_response(item_list(items, None, str(ITEMS_LIMIT_MAX), None))

    def list_items(self, request: Request, principal: str, conversation_id: str) -> Response:
        self._conversation(conversation_id, principal, READ)
        args = request.args
        listed = item_list(
            self.store.items(conversation_id),
            args.get("after"),
            args.get("limit"),
            args.get("order"),
        )
        return json_response(listed)

    def get_item(
        self, request: Request, principal: str, conversation_id: str, item_id: str
    ) -> Response:
        self._conversation(conversation_id, principal, READ)
        for item in self.store.items(conversation_id):
            if item["id"] == item_id:
                return json_response(item)
        raise self.not_found(f"Item '{item_id}' does not exist.")

    def delete_item(
        self, request: Request, principal: str, conversation_id: str, item_id: str
    ) -> Response:
        conversation = self._conversation(conversation_id, principal, WRITE)
        if not self.store.delete_item(conversation_id, item_id):
            raise self.not_found(f"Item '{item_id}' does not exist.")
        return json_response(conversation.to_json())  # OpenAI answers with the conversation
