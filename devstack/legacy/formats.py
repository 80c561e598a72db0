"""The JSON shapes of seed 003's memory store and memory entry responses."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from devstack.legacy import edits
from devstack.legacy.store import Entry, StoreRow


def _millis_iso(value: dt.datetime) -> str:
    """RFC 3339 in UTC with milliseconds and Z, as Databricks writes timestamps."""
    return value.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def store_json(row: StoreRow) -> dict[str, Any]:
    catalog, schema, name = row.full_name.split(".")
    return {
        "name": name,
        "catalog_name": catalog,
        "schema_name": schema,
        "description": row.description,
        "owner": row.owner,
        "full_name": row.full_name,
        "memory_store_id": row.memory_store_id,
        "securable_type": "MEMORY_STORE",
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "created_by": row.owner,
    }


def entry_json(entry: Entry, with_contents: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "path": entry.path,
        "description": entry.description,
        "scope": entry.scope,
        "memory_store_name": entry.store,
        "has_contents": bool(entry.contents),
        "create_time": _millis_iso(entry.create_time),
        "update_time": _millis_iso(entry.update_time),
    }
    if with_contents:
        body["contents"] = entry.contents
    return body


def page[T](
    key: str, items: list[T], limit: int, to_json: Callable[[T], dict[str, Any]], order_by: str
) -> dict[str, Any]:
    """One page of `items` (sorted by `order_by`, one more than `limit` fetched when there
    may be more); next_page_token only when another page follows."""
    body: dict[str, Any] = {key: [to_json(item) for item in items[:limit]]}
    if len(items) > limit:
        body["next_page_token"] = edits.encode_token(getattr(items[limit - 1], order_by))
    return body
