"""What MemoryOS answers (seed 002), as typed values: a retrieval with its ranked memories,
their provenance and a pending clarification, and a feedback receipt. Parsing raises
ValueError/TypeError on a malformed answer (the client turns that into a MemoryOsError)."""

from __future__ import annotations

import datetime as dt
import string
from dataclasses import dataclass
from typing import Any

QUOTA_MODES = ("FULL", "PASSTHROUGH", "DEGRADED_RETRIEVE", "BLOCKED")


def _time(value: Any) -> dt.datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError("a timestamp is not a string")
    moment = dt.datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError("a timestamp has no timezone")
    return moment


def _str(data: dict[str, Any], name: str) -> str:
    value = data[name]
    if not isinstance(value, str):
        raise TypeError(f"{name} is not a string")
    return value


def _optional_str(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} is not a string")
    return value


@dataclass(frozen=True)
class Provenance:
    """Where a memory came from: the service, its event, when it was observed, and who
    wrote it."""

    service: str | None
    event_id: str | None
    observed_at: dt.datetime | None
    writer_id: str | None

    @classmethod
    def from_json(cls, data: Any) -> Provenance | None:
        if data is None:
            return None
        if not isinstance(data, dict):
            raise TypeError("provenance is not an object")
        return cls(
            service=_optional_str(data, "service"),
            event_id=_optional_str(data, "event_id"),
            observed_at=_time(data.get("observed_at")),
            writer_id=_optional_str(data, "writer_id"),
        )


@dataclass(frozen=True)
class RetrievedMemory:
    """One `MemorySearchResult`."""

    id: str
    content: str
    category: str
    importance: float
    last_accessed: dt.datetime | None
    relevance: float
    snippet: str
    source_event_id: str | None
    provenance: Provenance | None

    @classmethod
    def from_json(cls, data: Any) -> RetrievedMemory:
        if not isinstance(data, dict):
            raise TypeError("a result is not an object")
        return cls(
            id=_str(data, "id"),
            content=_str(data, "content"),
            category=_str(data, "category"),
            importance=float(data["importance_score"]),
            last_accessed=_time(data.get("last_accessed")),
            relevance=float(data["relevance_score"]),
            snippet=_str(data, "context_snippet"),
            source_event_id=_optional_str(data, "source_event_id"),
            provenance=Provenance.from_json(data.get("provenance")),
        )


@dataclass(frozen=True)
class PendingClarification:
    """A conflict the service will ask the person about in an agent's conversation. The
    portal shows that it exists, never its answer buttons (the seed: no separate
    clarification screen)."""

    id: str
    question: str
    expires_at: dt.datetime | None

    @classmethod
    def from_json(cls, data: Any) -> PendingClarification | None:
        if data is None:
            return None
        if not isinstance(data, dict):
            raise TypeError("clarification is not an object")
        return cls(_str(data, "id"), _str(data, "question"), _time(data.get("expires_at")))


@dataclass(frozen=True)
class Retrieval:
    """What the service gives an agent for one question: the exact context
    (`system_prompt_addition`) and the ranked memories behind it."""

    retrieval_id: str | None
    memories: tuple[RetrievedMemory, ...]
    context: str
    context_tokens: int | None
    clarification: PendingClarification | None
    quota_mode: str
    degraded: bool
    passthrough: bool
    timestamp: dt.datetime | None

    @classmethod
    def from_json(cls, data: Any) -> Retrieval:
        if not isinstance(data, dict):
            raise TypeError("the retrieval is not an object")
        results = data["data"]
        if not isinstance(results, list):
            raise TypeError("data is not a list")
        quota_mode = _str(data, "quota_mode")
        if quota_mode not in QUOTA_MODES:
            raise ValueError(f"unknown quota_mode {quota_mode[:40]!r}")
        tokens = data.get("context_token_count")
        return cls(
            retrieval_id=_optional_str(data, "retrieval_id"),
            memories=tuple(RetrievedMemory.from_json(item) for item in results),
            context=_str(data, "system_prompt_addition"),
            context_tokens=None if tokens is None else int(tokens),
            clarification=PendingClarification.from_json(data.get("clarification")),
            quota_mode=quota_mode,
            degraded=bool(data["is_degraded"]),
            passthrough=bool(data["is_passthrough"]),
            timestamp=_time(data.get("timestamp")),
        )

    @property
    def blocked(self) -> bool:
        return self.quota_mode == "BLOCKED"


@dataclass(frozen=True)
class FeedbackReceipt:
    """The service took the feedback; `correction_job_id` when it queued a re-extraction
    (which is not a correction yet)."""

    feedback_id: str
    retrieval_id: str
    outcome: str
    correction_job_id: str | None

    @classmethod
    def from_json(cls, body: Any) -> FeedbackReceipt:
        data = body["data"] if isinstance(body, dict) else None
        if not isinstance(data, dict):
            raise TypeError("the feedback answer has no data object")
        return cls(
            feedback_id=_str(data, "feedback_id"),
            retrieval_id=_str(data, "retrieval_id"),
            outcome=_str(data, "outcome"),
            correction_job_id=_optional_str(data, "correction_job_id"),
        )


def needs_oid(template: str) -> bool:
    """Whether the template names the object id ("{oid}", "{oid!s}", "{oid:.36}" alike)."""
    return any(field == "oid" for _, field, _, _ in string.Formatter().parse(template))


def external_user_id_for(template: str, upn: str, oid: str) -> str:
    """The service's `external_user_id` from the verified identity, by the configured
    template (`{oid}`, `{upn}`); never anything the browser sent."""
    if needs_oid(template) and not oid:  # "user-{oid}" would name "user-": nobody, or anybody
        raise ValueError("MEMORYOS_USER_ID_TEMPLATE needs the object id, and there is none")
    value = template.format(upn=upn.casefold(), oid=oid)
    if not value:
        raise ValueError("MEMORYOS_USER_ID_TEMPLATE gives an empty external_user_id")
    return value
