"""`POST /v1/memories/retrieve`: the seed's request fields, which memories qualify, how
they rank, and the response's top-level and `MemorySearchResult` fields."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from devstack.memoryos import render
from devstack.memoryos.fields import Fields
from devstack.memoryos.store import Clarification, Memory, MemoryStore, Tenant, wire_time

LIMIT_DEFAULT = 10
LIMIT_MAX = 50
CONTEXT_TOKENS_DEFAULT = 500
CONTEXT_TOKENS_MAX = 8000  # docs/memoryos.md, S3
TIME_FILTER_DAYS_MAX = 36500
QUERY_MAX = 4000
USER_ID_MAX = 256
# docs/memoryos.md, S4: the seed names `preference` and `goal`; the rest is ours.
CATEGORIES = ("preference", "goal", "fact", "constraint", "skill", "relationship", "event")
HOT_TIER_WINDOW = dt.timedelta(hours=1)  # S6

_WORD = re.compile(r"\w+")
# Words that say nothing about which memory fits (S7).
_STOPWORDS = frozenset(
    "a an and are about be can do does for from has have her his how i in is it me my of on"
    " or should she that the their this to user was what when where which who with you your".split()
)


@dataclass(frozen=True)
class Retrieve:
    external_user_id: str
    query: str
    limit: int
    categories: list[str]
    agent_id: str | None
    time_filter_days: int | None
    as_of: dt.datetime | None
    format: str
    context_max_tokens: int


def parse(body: dict[str, Any]) -> Retrieve:
    fields = Fields(body)
    request = Retrieve(
        external_user_id=fields.string("external_user_id", USER_ID_MAX, required=True) or "",
        query=fields.string("query", QUERY_MAX, required=True) or "",
        limit=fields.integer("limit", LIMIT_DEFAULT, 1, LIMIT_MAX) or LIMIT_DEFAULT,
        categories=fields.strings("categories", CATEGORIES),
        agent_id=fields.string("agent_id", USER_ID_MAX),
        time_filter_days=fields.integer("time_filter_days", None, 1, TIME_FILTER_DAYS_MAX),
        as_of=fields.timestamp("as_of"),
        format=fields.choice("format", render.FORMATS, "bullets"),
        context_max_tokens=fields.integer(
            "context_max_tokens", CONTEXT_TOKENS_DEFAULT, 1, CONTEXT_TOKENS_MAX
        )
        or CONTEXT_TOKENS_DEFAULT,
    )
    fields.check()
    return request


def _terms(text: str) -> set[str]:
    # A trailing plural "s" is dropped so "flights" finds "flight" (S7).
    words = (word.lower() for word in _WORD.findall(text))
    return {
        word[:-1] if len(word) > 3 and word.endswith("s") else word
        for word in words
        if word not in _STOPWORDS
    }


def relevance(query: str, memory: Memory, degraded: bool) -> float:
    """docs/memoryos.md, S7: 0.7 x the share of the query's words the memory contains +
    0.3 x its importance out of 10; degraded retrieval ranks by importance alone."""
    if degraded:
        return round(memory.importance / 10, 6)
    wanted = _terms(query)
    overlap = len(wanted & _terms(memory.content)) / len(wanted) if wanted else 0.0
    return round(0.7 * overlap + 0.3 * memory.importance / 10, 6)


def qualifies(memory: Memory, request: Retrieve, now: dt.datetime) -> bool:
    """The request's filters; `time_filter_days` counts back from `as_of` when one is given
    (docs/memoryos.md, S12)."""
    moment = request.as_of or now
    if not memory.valid_at(moment):
        return False
    if request.agent_id is not None and memory.agent_id != request.agent_id:
        return False
    if request.categories and memory.category not in request.categories:
        return False
    days = request.time_filter_days
    return days is None or memory.created_at >= moment - dt.timedelta(days=days)


@dataclass(frozen=True)
class Ranked:
    memory: Memory
    relevance: float

    @property
    def line(self) -> render.Line:
        m = self.memory
        return render.Line(m.category, m.content, m.importance, self.relevance)


def rank(
    memories: list[Memory], request: Retrieve, now: dt.datetime, degraded: bool
) -> list[Ranked]:
    scored = [
        Ranked(m, relevance(request.query, m, degraded))
        for m in memories
        if qualifies(m, request, now)
    ]
    scored.sort(
        key=lambda r: (
            -r.relevance,
            -r.memory.importance,
            -r.memory.created_at.timestamp(),
            r.memory.id,
        )
    )
    return scored[: request.limit]


def result_json(ranked: Ranked, form: str) -> dict[str, Any]:
    """The nine fields of a `MemorySearchResult`; `last_accessed` is the access before this
    retrieval (S6)."""
    m = ranked.memory
    return {
        "id": m.id,
        "content": m.content,
        "category": m.category,
        "importance_score": m.importance,
        "last_accessed": wire_time(m.last_accessed) if m.last_accessed else None,
        "relevance_score": ranked.relevance,
        "context_snippet": render.snippet(ranked.line, form),
        "source_event_id": m.source_event_id,
        "provenance": m.provenance,
    }


def clarification_json(found: Clarification) -> dict[str, Any]:
    """MemoryClarification: id, question, expiry and the answer options (S13)."""
    return {
        "id": found.id,
        "question": found.question,
        "expires_at": wire_time(found.expires_at),
        "options": [
            {"answer": "A", "label": found.option_a},
            {"answer": "B", "label": found.option_b},
            {"answer": "both", "label": "Both"},
            {"answer": "neither", "label": "Neither"},
        ],
    }


def _pending_clarification(
    store: MemoryStore, tenant: Tenant, request: Retrieve, returned: set[str], now: dt.datetime
) -> Clarification | None:
    """The oldest pending clarification about one of the returned memories (S13)."""
    return next(
        (
            c
            for c in store.clarifications(tenant.name, request.external_user_id)
            if c.pending(now) and {c.memory_a, c.memory_b} & returned
        ),
        None,
    )


def retrieve(
    store: MemoryStore, tenant: Tenant, request: Retrieve, now: dt.datetime
) -> dict[str, Any]:
    """The response body without request_id and timestamp."""
    if tenant.quota_mode in ("PASSTHROUGH", "BLOCKED"):
        # S8: no memory is read, so nothing is recorded and there is nothing to give
        # feedback on (retrieval_id null).
        return {
            "retrieval_id": None,
            "data": [],
            "cached": False,
            "system_prompt_addition": "",
            "context_token_count": None,
            "memories_from_hot_tier": 0,
            "clarification_question": None,
            "clarification": None,
        }
    degraded = tenant.quota_mode == "DEGRADED_RETRIEVE"
    # S5: an external_user_id the tenant has no memories of, known or not, gets none.
    ranked = rank(store.memories(tenant.name, request.external_user_id), request, now, degraded)
    text, tokens = render.context(
        [r.line for r in ranked], request.format, request.context_max_tokens
    )
    hot = sum(
        1
        for r in ranked
        if r.memory.last_accessed and now - r.memory.last_accessed <= HOT_TIER_WINDOW
    )
    ids = [r.memory.id for r in ranked]
    clarification = _pending_clarification(store, tenant, request, set(ids), now)
    return {
        "retrieval_id": store.record_retrieval(tenant.name, request.external_user_id, ids, now),
        "data": [result_json(r, request.format) for r in ranked],
        "cached": False,  # S6: no response cache is emulated
        "system_prompt_addition": text,
        "context_token_count": tokens,
        "memories_from_hot_tier": hot,
        "clarification_question": clarification.question if clarification else None,
        "clarification": clarification_json(clarification) if clarification else None,
    }


def quota_flags(tenant: Tenant) -> dict[str, Any]:
    """quota_mode, is_degraded and is_passthrough, from the tenant's fixture (S8)."""
    return {
        "quota_mode": tenant.quota_mode,
        "is_degraded": tenant.quota_mode == "DEGRADED_RETRIEVE",
        "is_passthrough": tenant.quota_mode in ("PASSTHROUGH", "BLOCKED"),
    }
