"""Handlers of seed 001's institutional, agent-scoped and administration routes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from werkzeug.wrappers import Response

from devstack.memory_api.errors import Refused
from devstack.memory_api.memories import (
    DEFAULT_TYPE,
    memory_json,
    number,
    ok,
    optional_text,
    paged,
    schema_type,
    text,
)
from devstack.memory_api.store import Scope

if TYPE_CHECKING:
    from devstack.memory_api.app import Call, MemoryApiEmulator

MAX_DOCUMENTS = 100  # per ingest batch (seed 001)
MAX_ITEMS = 5000
EMBED_BATCH = 25  # observations or chunks per re-embed batch (M19)
MAX_BATCHES = 200
MAX_DIMENSION = 4000
CONFIGURED_DIMENSION = 1536
HALFVEC_ABOVE = 2000


# --- institutional memory (Enterprise) -------------------------------------------------


def institutional_save(app: MemoryApiEmulator, call: Call) -> Response:
    body = call.body
    content = text(body, "content")
    # Not constrained by the schema (seed 001): any type name is kept as given.
    type_ = optional_text(body, "type") or DEFAULT_TYPE
    memory, created = app.store.save(
        Scope(call.rows_key()),
        "institutional",
        type_,
        optional_text(body, "about"),
        content,
        call.actor,
        source=optional_text(body, "source"),
    )
    return ok(memory_json(memory, complete=True), 201 if created else 200)


def institutional_list(app: MemoryApiEmulator, call: Call) -> Response:
    return paged(app, call, Scope(call.rows_key(), tiers=("institutional",)))


def institutional_delete(app: MemoryApiEmulator, call: Call) -> Response:
    app.store.hard_delete(call.rows_key(), call.values["id"], "institutional", call.actor)
    return ok({"id": call.values["id"], "deleted": True})


def _document(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Refused(400, "a document is an object {source, about, title, sections}")
    text(value, "source")
    text(value, "about")
    sections = value.get("sections") or []
    if not isinstance(sections, list) or not all(
        isinstance(s, dict) and isinstance(s.get("chunks") or [], list) for s in sections
    ):
        raise Refused(400, "sections must be a list of {title, chunks: [text]}")
    return value


def ingest(app: MemoryApiEmulator, call: Call) -> Response:
    document_id = app.store.ingest_document(call.rows_key(), _document(call.body.get("document")))
    return ok({"document_id": document_id, "status": "accepted"}, 202)


def _list(body: dict[str, Any], name: str) -> list[Any]:
    value = body.get(name) or []
    if not isinstance(value, list):
        raise Refused(400, f"{name} must be a list")
    return value


def ingest_batch(app: MemoryApiEmulator, call: Call) -> Response:
    """documents[], items[], edges[] and a present manifest, applied in that order."""
    body = call.body
    documents = [_document(d) for d in _list(body, "documents")]
    items, edges = _list(body, "items"), _list(body, "edges")
    if len(documents) > MAX_DOCUMENTS or len(items) > MAX_ITEMS:
        raise Refused(  # M20
            400, f"a request carries at most {MAX_DOCUMENTS} documents or {MAX_ITEMS} items"
        )
    checked_items = []
    for item in items:
        if not isinstance(item, dict):
            raise Refused(400, "items[] must be objects {about, content, type, source}")
        text(item, "about")
        text(item, "content")
        checked_items.append(item)
    for edge in edges:
        if not isinstance(edge, dict):
            raise Refused(400, "edges[] must be objects {from, to, relation}")
        for name in ("from", "to", "relation"):
            text(edge, name)
    present = body.get("present")
    if present is not None and not (
        isinstance(present, dict)
        and isinstance(present.get("source"), str)
        and isinstance(present.get("abouts"), list)
    ):
        raise Refused(400, "present is {source, abouts: [about]}")
    key = call.rows_key()
    for document in documents:
        app.store.ingest_document(key, document)
    app.store.upsert_items(key, checked_items)
    linked = sum(
        app.store.relate_abouts(key, edge["from"], edge["to"], edge["relation"]) for edge in edges
    )
    forgotten = app.store.forget(key, present["source"], present["abouts"]) if present else 0
    return ok(
        {
            "documents": len(documents),
            "items": len(checked_items),
            "edges": linked,
            "forgotten": forgotten,
        },
        202,
    )


def documents(app: MemoryApiEmulator, call: Call) -> Response:
    return ok({"documents": app.store.documents(call.rows_key())})


def document_tree(app: MemoryApiEmulator, call: Call) -> Response:
    return ok(app.store.document(call.rows_key(), call.values["id"]))


def forget_source(app: MemoryApiEmulator, call: Call) -> Response:
    source = call.values["source"]
    return ok({"source": source, "forgotten": app.store.forget(call.rows_key(), source)})


# --- agent-scoped memory (Core and Enterprise) -----------------------------------------


def agent_save(app: MemoryApiEmulator, call: Call) -> Response:
    body = call.body
    agent, content = text(body, "agent"), text(body, "content")
    type_ = schema_type(body.get("type"))
    memory, created = app.store.save(
        Scope(call.rows_key(), None, agent),
        "agent",
        type_,
        optional_text(body, "about"),
        content,
        call.actor,
    )
    return ok(memory_json(memory, complete=True), 201 if created else 200)


def agent_list(app: MemoryApiEmulator, call: Call) -> Response:
    return paged(app, call, Scope(call.rows_key(), None, call.arg("agent"), ("agent",)))


# Agent memories are soft-deleted like a person's; institutional ones removed (M24).
def agent_delete(app: MemoryApiEmulator, call: Call) -> Response:
    memory = app.store.soft_delete(call.rows_key(), call.values["id"], "agent", call.actor)
    return ok({"id": memory.id, "deleted_at": memory.deleted_at})


# --- administration (no workspace) -----------------------------------------------------


def dimension_change(app: MemoryApiEmulator, call: Call) -> Response:
    target = call.body.get("target_dim")
    if isinstance(target, bool) or not isinstance(target, int):
        raise Refused(400, "target_dim must be an integer")
    if not 1 <= target <= MAX_DIMENSION:
        raise Refused(400, f"target_dim must be between 1 and {MAX_DIMENSION}")
    app.store.set_meta("pending_target_dimension", str(target))
    return ok({"consent": "recorded", "target_dim": target})


def embedding_status(app: MemoryApiEmulator, call: Call) -> Response:
    pending = app.store.meta("pending_target_dimension")
    backlog = app.store.backlog()
    state = "restart_required" if pending else "reembedding" if backlog else "ready"  # M21
    return ok(
        {
            "state": state,
            "current_dimension": CONFIGURED_DIMENSION,
            "current_type": "halfvec" if CONFIGURED_DIMENSION > HALFVEC_ABOVE else "vector",
            "configured_dimension": CONFIGURED_DIMENSION,
            "pending_target_dimension": int(pending) if pending else None,
            "reembed_backlog": backlog,
        }
    )


def reembed(app: MemoryApiEmulator, call: Call) -> Response:
    raw = call.body.get("max_batches")
    if raw is not None and (isinstance(raw, bool) or not isinstance(raw, int)):
        raise Refused(400, "max_batches must be an integer")
    max_batches = number(raw, "max_batches", 1, 1, MAX_BATCHES)
    embedded = batches = 0
    for _ in range(max_batches):
        done = app.store.embed(EMBED_BATCH)
        if not done:
            break  # seed 001: stops early when a batch embeds nothing
        embedded += done
        batches += 1
    result: dict[str, int] = {"embedded": embedded, "batches": batches}
    if app.workspace_resolved:  # seed 001: omitted when the workspace is unknown
        result["remaining"] = app.store.backlog()
    return ok(result)


def calibrate(app: MemoryApiEmulator, call: Call) -> Response:
    return ok({"concurrency": 4, "batch_size": EMBED_BATCH})  # M22
