"""Handlers of seed 001's memory operations: one function per route endpoint, each given
the emulator and a Call that passed app.py's checks. The choices they make where the seed
is silent are numbered in docs/memory-api.md (M4...)."""

from __future__ import annotations

import base64
import json
import re
from typing import TYPE_CHECKING, Any

from werkzeug.wrappers import Response

from devstack.memory_api.errors import Refused
from devstack.memory_api.store import Memory, NotFound, Observation, Scope, now

if TYPE_CHECKING:
    from devstack.memory_api.app import Call, MemoryApiEmulator

# The built-in schema that applies without a configured one (seed 001).
BUILT_IN_TYPES = (
    "document",
    "section",
    "chunk",
    "general",
    "preference",
    "fact",
    "observation",
    "temporal_summary",
)
DEFAULT_TYPE = "general"  # M6
PAGE_DEFAULT, PAGE_MAX = 50, 200  # M5
SEARCH_DEFAULT, SEARCH_MAX = 20, 100
BATCH_DEFAULT, BATCH_MAX = 100, 1000  # M10
TIER_PRECEDENCE = ("user", "agent", "institutional")  # MemoryPolicy default (M13)


def ok(body: Any, status: int = 200) -> Response:
    return Response(json.dumps(body), status=status, mimetype="application/json")


# --- shapes (M4) ---------------------------------------------------------------------


def observation_json(observation: Observation) -> dict[str, Any]:
    return {
        "id": observation.id,
        "content": observation.content,
        "status": observation.status,
        "created_at": observation.created_at,
        "superseded_at": observation.superseded_at,
        "supersedes": list(observation.supersedes),
    }


def memory_json(memory: Memory, complete: bool = False) -> dict[str, Any]:
    """A listed memory carries its active observations; a complete one (read, export,
    lineage) every observation it keeps."""
    shown = memory.observations if complete else memory.active
    active = memory.active
    return {
        "id": memory.id,
        "workspace_id": memory.workspace_id,
        "tier": memory.tier,
        "virtual_user_id": memory.virtual_user_id,
        "agent": memory.agent,
        "type": memory.type,
        "about": memory.about,
        "content": active[-1].content if active else None,
        "observations": [observation_json(o) for o in shown],
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
        "deleted_at": memory.deleted_at,
    }


# --- parameters ----------------------------------------------------------------------


def number(raw: Any, name: str, default: int, low: int, high: int) -> int:
    if raw is None or raw == "":
        return default
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        raise Refused(400, f"{name} must be an integer")
    try:
        value = int(raw)
    except ValueError as exc:
        raise Refused(400, f"{name} must be an integer") from exc
    if not low <= value <= high:
        raise Refused(400, f"{name} must be between {low} and {high}")
    return value


def text(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value.strip():
        raise Refused(400, f"{name} is required and must be a non-empty string")
    return value


def optional_text(body: dict[str, Any], name: str) -> str | None:
    return None if body.get(name) is None else text(body, name)


def schema_type(value: Any) -> str:
    """The built-in schema, enforced on writes and supersedes (seed 001); none given is
    "general" (M6)."""
    if value is None:
        return DEFAULT_TYPE
    if value not in BUILT_IN_TYPES:
        raise Refused(
            400,
            f"type {json.dumps(value)} is not in the memory schema ({', '.join(BUILT_IN_TYPES)})",
        )
    return value


def cursor_in(raw: str | None) -> tuple[str, str] | None:
    if not raw:
        return None
    try:
        created_at, _, memory_id = base64.urlsafe_b64decode(raw.encode()).decode().partition("|")
    except (ValueError, UnicodeDecodeError) as exc:
        raise Refused(400, "cursor is not one this service gave") from exc
    if not memory_id:
        raise Refused(400, "cursor is not one this service gave")
    return created_at, memory_id


def cursor_out(memory: Memory) -> str:
    return base64.urlsafe_b64encode(f"{memory.created_at}|{memory.id}".encode()).decode()


def paged(app: MemoryApiEmulator, call: Call, scope: Scope) -> Response:
    """`limit` rows after `cursor`, and the next cursor while more remain (M5)."""
    limit = number(call.arg("limit"), "limit", PAGE_DEFAULT, 1, PAGE_MAX)
    found = app.store.memories(scope, cursor_in(call.arg("cursor")), limit + 1)
    shown = found[:limit]
    more = len(found) > limit
    return ok(
        {
            "memories": [memory_json(m) for m in shown],
            "next_cursor": cursor_out(shown[-1]) if more else None,
        }
    )


def flag(call: Call, name: str) -> bool:
    raw = (call.arg(name) or "false").lower()
    if raw not in ("true", "false"):
        raise Refused(400, f"{name} must be true or false")
    return raw == "true"


def owned(call: Call, memory: Memory) -> Memory:
    """An id route given a virtual_user_id serves only that user's memory (M9)."""
    user = call.arg("virtual_user_id")
    if user is not None and memory.virtual_user_id != user:
        raise NotFound
    return memory


def score(query: str, memory: Memory) -> int:
    terms = {t for t in re.findall(r"\w+", query.casefold())}
    words = set(
        re.findall(
            r"\w+", " ".join([memory.about or "", *(o.content for o in memory.active)]).casefold()
        )
    )
    return len(terms & words)


# --- routes --------------------------------------------------------------------------


def save(app: MemoryApiEmulator, call: Call) -> Response:
    body = call.body
    scope = body.get("scope")
    if not isinstance(scope, dict):
        raise Refused(400, "scope is required: {virtual_user_id, agent}")
    user = text(scope, "virtual_user_id")  # M6: POST /memories writes a person's memory
    agent = optional_text(scope, "agent")
    type_ = schema_type(body.get("type"))
    content = text(body, "content")
    about = optional_text(body, "about")
    memory, created = app.store.save(
        Scope(call.rows_key(), user, agent), "user", type_, about, content, call.actor
    )
    return ok(memory_json(memory, complete=True), 201 if created else 200)


def list_memories(app: MemoryApiEmulator, call: Call) -> Response:
    # include_shared is read here only; other routes ignore it (M25). Without a
    # virtual_user_id the list holds every person's memories: "names no user" (M26).
    tiers = ("user", "agent", "institutional") if flag(call, "include_shared") else ("user",)
    if "institutional" in tiers and app.edition == "core":
        tiers = ("user", "agent")  # M12: no institutional memory on Core
    scope = Scope(call.rows_key(), call.arg("virtual_user_id"), call.arg("agent"), tiers)
    return paged(app, call, scope)


def search(app: MemoryApiEmulator, call: Call) -> Response:
    query = call.arg("q")
    if not query:
        raise Refused(400, "q is required")  # M14
    limit = number(call.arg("limit"), "limit", SEARCH_DEFAULT, 1, SEARCH_MAX)
    scope = Scope(call.rows_key(), call.arg("virtual_user_id"), call.arg("agent"))
    ranked = sorted(
        ((score(query, m), m) for m in app.store.memories(scope)),
        key=lambda pair: (-pair[0], pair[1].created_at),
    )
    hits = [{**memory_json(m), "score": s} for s, m in ranked if s][:limit]
    return ok({"memories": hits})


def retrieve(app: MemoryApiEmulator, call: Call) -> Response:
    body = call.body
    query = text(body, "query")
    user = optional_text(body, "user_id")
    agent = optional_text(body, "agent_id")
    limit = number(body.get("limit"), "limit", 10, 1, SEARCH_MAX)
    enterprise = app.edition == "enterprise"
    tiers = TIER_PRECEDENCE if enterprise else ("user", "agent")
    if user is None:
        tiers = tuple(t for t in tiers if t != "user")
    key = call.rows_key()
    candidates = app.store.memories(Scope(key, user, agent, tiers))
    scored = [(score(query, m), m) for m in candidates]

    def rank(pair: tuple[int, Memory]) -> tuple[int, int, str]:
        # Enterprise: tier precedence first; Core: the identity ranker, score alone (M13).
        tier = TIER_PRECEDENCE.index(pair[1].tier) if enterprise else 0
        return (tier, -pair[0], pair[1].created_at)

    results = [
        {"memory": memory_json(m), "tier": m.tier, "score": s}
        for s, m in sorted(scored, key=rank)
        if s
    ][:limit]
    lookups = []
    for lookup in body.get("structured_lookups") or []:
        if not isinstance(lookup, dict):
            raise Refused(400, "structured_lookups[] must be objects")
        found = app.store.memories(Scope(key, lookup.get("user_id"), agent, ("user",)))
        matches = [
            memory_json(m)
            for m in found
            if all(lookup.get(f) in (None, getattr(m, f)) for f in ("about", "type"))
        ]
        lookups.append({**lookup, "memories": matches})
    return ok({"results": results, "tiers": list(tiers), "mode": "fts", "lookups": lookups})


_DENY_TERM = re.compile(r'^\s*memory\.(type|tier|agent|about)\s*==\s*"([^"]*)"\s*$')


def semantic(app: MemoryApiEmulator, call: Call) -> Response:
    body = call.body
    query = text(body, "query")
    deny = optional_text(body, "deny")
    rules = []
    for term in (deny or "").split("||") if deny else []:
        match = _DENY_TERM.match(term)
        if match is None:
            raise Refused(
                400, 'deny: the emulator evaluates memory.<field> == "value" || ...'
            )  # M15
        rules.append(match.groups())
    limit = number(body.get("limit"), "limit", 10, 1, SEARCH_MAX)
    tiers = TIER_PRECEDENCE if app.edition == "enterprise" else ("user", "agent")
    kept = [
        m
        for m in app.store.memories(Scope(call.rows_key(), tiers=tiers))
        if not any(getattr(m, field) == value for field, value in rules)
    ]
    ranked = sorted(((score(query, m), m) for m in kept), key=lambda p: (-p[0], p[1].created_at))
    return ok({"results": [{"memory": memory_json(m), "score": s} for s, m in ranked if s][:limit]})


def read(app: MemoryApiEmulator, call: Call) -> Response:
    memory = owned(call, app.store.memory(call.rows_key(), call.values["id"]))
    return ok(memory_json(memory, complete=True))


def supersede(app: MemoryApiEmulator, call: Call) -> Response:
    key = call.rows_key()
    owned(call, app.store.memory(key, call.values["id"]))
    content = text(call.body, "content")
    type_ = None if call.body.get("type") is None else schema_type(call.body["type"])
    memory = app.store.supersede(key, call.values["id"], content, type_, call.actor)
    return ok(memory_json(memory, complete=True))


def delete(app: MemoryApiEmulator, call: Call) -> Response:
    key = call.rows_key()
    owned(call, app.store.memory(key, call.values["id"]))
    memory = app.store.soft_delete(key, call.values["id"], "user", call.actor)
    return ok({"id": memory.id, "deleted_at": memory.deleted_at})


def _subject(call: Call) -> Scope:
    user = call.arg("virtual_user_id")
    if user is None:
        raise Refused(400, "virtual_user_id is required: the subject of the request")
    return Scope(call.rows_key(), user, call.arg("agent"))


def erase(app: MemoryApiEmulator, call: Call) -> Response:
    deleted, _ = app.store.erase(_subject(call), -1, call.actor)
    return ok({"deleted": deleted})


def erase_batch(app: MemoryApiEmulator, call: Call) -> Response:
    limit = number(call.arg("limit"), "limit", BATCH_DEFAULT, 1, BATCH_MAX)
    deleted, remaining = app.store.erase(_subject(call), limit, call.actor)
    return ok({"deleted": deleted, "remaining": remaining})


def export(app: MemoryApiEmulator, call: Call) -> Response:
    subject = _subject(call)
    everything = Scope(
        subject.workspace_id, subject.virtual_user_id, subject.agent, ("user",), True
    )
    memories = app.store.memories(everything)  # M16: soft-deleted rows too, marked
    app.store.record(subject.workspace_id, "export", call.actor, subject.virtual_user_id)
    return ok(
        {
            "workspace_id": subject.workspace_id,
            "virtual_user_id": subject.virtual_user_id,
            "exported_at": now(),
            "memories": [memory_json(m, complete=True) for m in memories],
        }
    )


def aggregate(app: MemoryApiEmulator, call: Call) -> Response:
    memories = app.store.memories(Scope(call.rows_key(), tiers=TIER_PRECEDENCE))
    counts: dict[str, dict[str, int]] = {"by_tier": {}, "by_type": {}, "by_agent": {}}
    for m in memories:
        for name, value in (("by_tier", m.tier), ("by_type", m.type), ("by_agent", m.agent)):
            if value is not None:
                counts[name][value] = counts[name].get(value, 0) + 1
    users = {m.virtual_user_id for m in memories if m.virtual_user_id}
    return ok({"total": len(memories), "users": len(users), **counts})


def conflicts(app: MemoryApiEmulator, call: Call) -> Response:
    scope = Scope(call.rows_key(), call.arg("virtual_user_id"), call.arg("agent"))
    found = [m for m in app.store.memories(scope) if len(m.active) > 1]
    return ok({"conflicts": [memory_json(m) for m in found]})


def lineage(app: MemoryApiEmulator, call: Call) -> Response:
    key = call.rows_key()
    memory = owned(call, app.store.memory(key, call.values["id"]))
    return ok(
        {
            "memory_id": memory.id,
            "observations": [observation_json(o) for o in memory.observations],
        }
    )


def relate(app: MemoryApiEmulator, call: Call) -> Response:
    body = call.body
    source, target = text(body, "source_id"), text(body, "target_id")
    relation = text(body, "relation")
    return ok(app.store.relate(call.rows_key(), source, target, relation, call.actor), 201)


def schema(app: MemoryApiEmulator, call: Call) -> Response:
    tiers = list(TIER_PRECEDENCE) if app.edition == "enterprise" else ["user", "agent"]
    return ok(
        {
            "source": "built-in",
            "types": [{"name": name, "tiers": tiers} for name in BUILT_IN_TYPES],
            "relations": [],  # M17: the built-in schema constrains no relation
        }
    )


def tool_guidance(app: MemoryApiEmulator, call: Call) -> Response:
    types = {"type": "string", "enum": list(BUILT_IN_TYPES)}
    return ok(
        {
            "tools": [
                {
                    "name": "memory_save",
                    "description": "Remember a durable fact or preference about the user.",
                    "extra_properties": {"type": types},
                },
                {
                    "name": "memory_search",
                    "description": "Search what is remembered about the user.",
                    "extra_properties": {},
                },
            ]
        }
    )


def projection(app: MemoryApiEmulator, call: Call) -> Response:
    key = call.rows_key()
    memories = app.store.memories(Scope(key, call.arg("virtual_user_id"), tiers=TIER_PRECEDENCE))
    ids = {m.id for m in memories}
    nodes = [
        {"id": m.id, "tier": m.tier, "type": m.type, "agent": m.agent, "about": m.about}
        for m in memories
    ]
    edges = [r for r in app.store.relations(key) if r["source_id"] in ids and r["target_id"] in ids]
    return ok({"nodes": nodes, "edges": edges})


def consent(app: MemoryApiEmulator, call: Call) -> Response:
    user = text(call.body, "virtual_user_id")
    deleted, _ = app.store.erase(Scope(call.rows_key(), user), -1, call.actor)
    return ok({"action": "delete", "deleted": deleted})  # M18


def audit(app: MemoryApiEmulator, call: Call) -> Response:
    limit = number(call.arg("limit"), "limit", PAGE_DEFAULT, 1, PAGE_MAX)
    after = number(call.arg("cursor"), "cursor", 0, 0, 2**62)
    events = app.store.audit_events(call.rows_key(), call.arg("virtual_user_id"), after, limit + 1)
    shown = events[:limit]
    more = len(events) > limit
    return ok({"events": shown, "next_cursor": str(shown[-1]["seq"]) if more else None})
