"""Typed values of the legacy memory stores (seed 003), parsed strictly from their JSON.

A response that lacks a field the seed promises, or has it in another type, is a
`ValueError` here; the client turns that into `LegacyUnexpectedResponse`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

# Three-part Unity Catalog name; each part as the seed's store names: [A-Za-z0-9_-]+.
FULL_NAME = re.compile(r"[A-Za-z0-9_-]{1,255}\.[A-Za-z0-9_-]{1,255}\.[A-Za-z0-9_-]{1,255}")
PATH_PREFIX = "/memories/"


def _text(data: dict[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{key} is not a string")
    return value


def _millis(data: dict[str, Any], key: str) -> dt.datetime:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key} is not epoch milliseconds")
    return dt.datetime.fromtimestamp(value / 1000, dt.UTC)


def _rfc3339(data: dict[str, Any], key: str) -> dt.datetime:
    parsed = dt.datetime.fromisoformat(_text(data, key).replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        raise ValueError(f"{key} has no time zone")
    return parsed


@dataclass(frozen=True)
class MemoryStore:
    full_name: str
    name: str
    catalog_name: str
    schema_name: str
    description: str
    owner: str
    memory_store_id: str
    created_at: dt.datetime
    updated_at: dt.datetime

    @classmethod
    def from_json(cls, data: Any) -> MemoryStore:
        if not isinstance(data, dict):
            raise ValueError("a memory store is not an object")
        return cls(
            full_name=_text(data, "full_name"),
            name=_text(data, "name"),
            catalog_name=_text(data, "catalog_name"),
            schema_name=_text(data, "schema_name"),
            description=_text(data, "description", ""),
            owner=_text(data, "owner", ""),
            memory_store_id=_text(data, "memory_store_id"),
            created_at=_millis(data, "created_at"),
            updated_at=_millis(data, "updated_at"),
        )


@dataclass(frozen=True)
class MemoryEntry:
    """One entry (a markdown file). `contents` is None where the API leaves it out (lists);
    `score` is set on search results only."""

    store: str
    scope: str
    path: str
    description: str
    has_contents: bool
    create_time: dt.datetime
    update_time: dt.datetime
    contents: str | None = None
    score: int | None = None

    @classmethod
    def from_json(cls, data: Any) -> MemoryEntry:
        if not isinstance(data, dict):
            raise ValueError("a memory entry is not an object")
        contents = data.get("contents")
        if contents is not None and not isinstance(contents, str):
            raise ValueError("contents is not a string")
        has_contents = data.get("has_contents", bool(contents))
        score = data.get("score")
        if not isinstance(has_contents, bool):
            raise ValueError("has_contents is not a boolean")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int)):
            raise ValueError("score is not an integer")
        return cls(
            store=_text(data, "memory_store_name"),
            scope=_text(data, "scope"),
            path=_text(data, "path"),
            description=_text(data, "description", ""),
            has_contents=has_contents,
            create_time=_rfc3339(data, "create_time"),
            update_time=_rfc3339(data, "update_time"),
            contents=contents,
            score=score,
        )


@dataclass(frozen=True)
class ListPage[T]:
    items: tuple[T, ...]
    next_page_token: str | None


def parse_page[T](data: Any, key: str, parse: Any) -> ListPage[T]:
    if not isinstance(data, dict):
        raise ValueError("the response is not an object")
    raw = data.get(key, [])
    if not isinstance(raw, list):
        raise ValueError(f"{key} is not a list")
    token = data.get("next_page_token") or None
    if token is not None and not isinstance(token, str):
        raise ValueError("next_page_token is not a string")
    return ListPage(tuple(parse(item) for item in raw), token)


def scope_for(template: str, *, upn: str, oid: str) -> str:
    """The `scope` of a verified identity by the configured template (`{upn}`, `{oid}`);
    never from anything the browser sends."""
    try:
        scope = template.format(upn=upn, oid=oid)
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError("the scope template may only use {upn} and {oid}") from exc
    if not scope:
        raise ValueError("the scope template gave an empty scope")
    return scope


def parse_store_agents(raw: str) -> dict[str, str]:
    """Which store belongs to which agent: a JSON object of agent name -> store full name
    (LEGACY_STORES_AGENTS). Raises ValueError when it is anything else."""
    try:
        data = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError("must be a JSON object of agent name -> store full name")
    for agent, store in data.items():
        if not isinstance(store, str) or not FULL_NAME.fullmatch(store):
            raise ValueError(f"agent {agent!r}: {store!r} is not a catalog.schema.store name")
    return dict(data)


def parse_store_owners(raw: str) -> dict[str, str]:
    """Whom to ask about a store the portal knows of: a JSON object of store full name ->
    owner (LEGACY_STORES_KNOWN). Raises ValueError when it is anything else."""
    try:
        data = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError("must be a JSON object of store full name -> owner")
    for store, owner in data.items():
        if not FULL_NAME.fullmatch(store):
            raise ValueError(f"{store!r} is not a catalog.schema.store name")
        if not isinstance(owner, str) or not owner.strip():
            raise ValueError(f"store {store!r}: the owner must be a name or an address")
    return {store: owner.strip() for store, owner in data.items()}
