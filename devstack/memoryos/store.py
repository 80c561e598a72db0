"""Tenants (from fixtures.toml), and memories, clarifications, retrievals and feedback in
SQLite (`{home}/memoryos.sqlite3`), seeded once from fixtures.toml.

Writes run in devstack.sqlite's write transaction, so answering a clarification twice at
once resolves it once (the other answer is a 409).
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import tomllib
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from devstack.sqlite import Database

DB_FILENAME = "memoryos.sqlite3"
FIXTURES_PATH = Path(__file__).resolve().parent / "fixtures.toml"
QUOTA_MODES = ("FULL", "PASSTHROUGH", "DEGRADED_RETRIEVE", "BLOCKED")
ANSWERS = ("A", "B", "both", "neither")
# What each answer keeps of the conflict's two memories (docs/memoryos.md, S14).
_KEEPS = {"A": (True, False), "B": (False, True), "both": (True, True), "neither": (False, False)}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    external_user_id TEXT NOT NULL,
    agent_id TEXT,
    category TEXT NOT NULL,
    content TEXT NOT NULL,
    importance REAL NOT NULL,
    created_at TEXT NOT NULL,      -- ISO 8601, UTC
    superseded_at TEXT,            -- end of its validity (as_of), NULL while valid
    last_accessed TEXT,
    source_event_id TEXT,
    provenance TEXT                -- JSON object or NULL
);
CREATE TABLE IF NOT EXISTS clarifications (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    external_user_id TEXT NOT NULL,
    conflict_id TEXT NOT NULL,
    question TEXT NOT NULL,
    memory_a TEXT NOT NULL,
    memory_b TEXT NOT NULL,
    option_a TEXT NOT NULL,
    option_b TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    resolution TEXT,               -- NULL while pending
    free_text TEXT,
    resolved_at TEXT
);
CREATE TABLE IF NOT EXISTS retrievals (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    external_user_id TEXT NOT NULL,
    memory_ids TEXT NOT NULL,      -- JSON array, in rank order
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS feedback (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    retrieval_id TEXT NOT NULL,
    external_user_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    used_memory_ids TEXT NOT NULL, -- JSON array
    correction TEXT,
    agent_confidence REAL,
    metadata TEXT,                 -- JSON object or NULL
    correction_job_id TEXT,
    received_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class NotFound(Exception):
    """No such clarification for this tenant and user."""


class Conflict(Exception):
    """The clarification was answered before, or has expired."""


@dataclass(frozen=True)
class Tenant:
    name: str
    api_key: str
    quota_mode: str
    users: dict[str, str]  # demo UPN -> external_user_id


@dataclass(frozen=True)
class Memory:
    id: str
    tenant: str
    external_user_id: str
    agent_id: str | None
    category: str
    content: str
    importance: float
    created_at: dt.datetime
    superseded_at: dt.datetime | None
    last_accessed: dt.datetime | None
    source_event_id: str | None
    provenance: dict[str, Any] | None

    def valid_at(self, moment: dt.datetime) -> bool:
        return self.created_at <= moment and (
            self.superseded_at is None or self.superseded_at > moment
        )


@dataclass(frozen=True)
class Clarification:
    id: str
    tenant: str
    external_user_id: str
    conflict_id: str
    question: str
    memory_a: str
    memory_b: str
    option_a: str
    option_b: str
    created_at: dt.datetime
    expires_at: dt.datetime
    resolution: str | None

    def pending(self, now: dt.datetime) -> bool:
        return self.resolution is None and self.expires_at > now


@dataclass(frozen=True)
class Feedback:
    id: str
    tenant: str
    retrieval_id: str
    external_user_id: str
    outcome: str
    used_memory_ids: list[str]
    correction: str | None
    agent_confidence: float | None
    metadata: dict[str, Any] | None
    correction_job_id: str | None
    received_at: dt.datetime


def stable_id(*parts: str) -> str:
    """Ids derived from the fixtures' keys: the same after every reset, so tests and docs
    can name them."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "memoryos:" + ":".join(parts)))


def memory_id(tenant: str, key: str) -> str:
    return stable_id(tenant, "memory", key)


def clarification_id(tenant: str, key: str) -> str:
    return stable_id(tenant, "clarification", key)


@cache
def _raw(path: Path = FIXTURES_PATH) -> dict[str, Any]:
    with path.open("rb") as fh:
        return tomllib.load(fh)


def tenants() -> tuple[Tenant, ...]:
    return tuple(
        Tenant(t["name"], t["api_key"], t["quota_mode"], dict(t["users"]))
        for t in _raw()["tenants"]
    )


def tenant(name: str) -> Tenant:
    return next(t for t in tenants() if t.name == name)


def agent_ids(tenant_name: str) -> list[str]:
    """The agents that wrote `tenant_name`'s demo memories, in first-seen order."""
    return list(
        dict.fromkeys(m["agent_id"] for m in _raw()["memories"] if m["tenant"] == tenant_name)
    )


def _time(text: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(text) if text else None


def _iso(moment: dt.datetime | None) -> str | None:
    return moment.isoformat() if moment else None


_MEMORY_COLUMNS = (
    "id, tenant, external_user_id, agent_id, category, content, importance, created_at,"
    " superseded_at, last_accessed, source_event_id, provenance"
)
_CLARIFICATION_COLUMNS = (
    "id, tenant, external_user_id, conflict_id, question, memory_a, memory_b, option_a,"
    " option_b, created_at, expires_at, resolution"
)
_FEEDBACK_COLUMNS = (
    "id, tenant, retrieval_id, external_user_id, outcome, used_memory_ids, correction,"
    " agent_confidence, metadata, correction_job_id, received_at"
)


def _memory(row: tuple[Any, ...]) -> Memory:
    return Memory(
        *row[:7],
        created_at=dt.datetime.fromisoformat(row[7]),
        superseded_at=_time(row[8]),
        last_accessed=_time(row[9]),
        source_event_id=row[10],
        provenance=json.loads(row[11]) if row[11] else None,
    )


def _clarification(row: tuple[Any, ...]) -> Clarification:
    return Clarification(
        *row[:9],
        created_at=dt.datetime.fromisoformat(row[9]),
        expires_at=dt.datetime.fromisoformat(row[10]),
        resolution=row[11],
    )


def _feedback(row: tuple[Any, ...]) -> Feedback:
    return Feedback(
        *row[:5],
        used_memory_ids=json.loads(row[5]),
        correction=row[6],
        agent_confidence=row[7],
        metadata=json.loads(row[8]) if row[8] else None,
        correction_job_id=row[9],
        received_at=dt.datetime.fromisoformat(row[10]),
    )


class MemoryStore:
    def __init__(self, home: Path) -> None:
        self.db = Database(home / DB_FILENAME, _SCHEMA)

    # --- memories ------------------------------------------------------------------------

    def memories(self, tenant: str, external_user_id: str) -> list[Memory]:
        rows = self.db.rows(
            f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE tenant = ? AND external_user_id = ?",
            (tenant, external_user_id),
        )
        return [_memory(row) for row in rows]

    def record_retrieval(
        self, tenant: str, external_user_id: str, memory_ids: list[str], now: dt.datetime
    ) -> str:
        """Keep what a retrieval returned (feedback names it) and mark those memories
        accessed now (docs/memoryos.md, S6)."""
        retrieval_id = str(uuid.uuid4())
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO retrievals VALUES (?, ?, ?, ?, ?)",
                (retrieval_id, tenant, external_user_id, json.dumps(memory_ids), _iso(now)),
            )
            conn.executemany(
                "UPDATE memories SET last_accessed = ? WHERE tenant = ? AND id = ?",
                [(_iso(now), tenant, memory_id) for memory_id in memory_ids],
            )
        return retrieval_id

    def retrieval(self, tenant: str, retrieval_id: str) -> tuple[str, list[str]] | None:
        """(external_user_id, returned memory ids) of one of `tenant`'s retrievals."""
        row = self.db.row(
            "SELECT external_user_id, memory_ids FROM retrievals WHERE tenant = ? AND id = ?",
            (tenant, retrieval_id),
        )
        return (row[0], json.loads(row[1])) if row else None

    # --- clarifications ------------------------------------------------------------------

    def clarifications(self, tenant: str, external_user_id: str) -> list[Clarification]:
        rows = self.db.rows(
            f"SELECT {_CLARIFICATION_COLUMNS} FROM clarifications"
            " WHERE tenant = ? AND external_user_id = ? ORDER BY created_at",
            (tenant, external_user_id),
        )
        return [_clarification(row) for row in rows]

    def resolve(
        self,
        tenant: str,
        external_user_id: str,
        clarification_id: str,
        answer: str,
        free_text: str | None,
        now: dt.datetime,
    ) -> Clarification:
        """Apply `answer` to a pending clarification of this tenant's user: the memories
        the answer does not keep stop being valid now."""
        with self.db.write() as conn:
            row = conn.execute(
                f"SELECT {_CLARIFICATION_COLUMNS} FROM clarifications"
                " WHERE tenant = ? AND external_user_id = ? AND id = ?",
                (tenant, external_user_id, clarification_id),
            ).fetchone()
            if row is None:
                raise NotFound
            found = _clarification(row)
            if found.resolution is not None or found.expires_at <= now:
                raise Conflict("answered before" if found.resolution else "expired")
            for memory, kept in zip((found.memory_a, found.memory_b), _KEEPS[answer], strict=True):
                if not kept:
                    conn.execute(
                        "UPDATE memories SET superseded_at = ?"
                        " WHERE tenant = ? AND id = ? AND superseded_at IS NULL",
                        (_iso(now), tenant, memory),
                    )
            conn.execute(
                "UPDATE clarifications SET resolution = ?, free_text = ?, resolved_at = ?"
                " WHERE id = ?",
                (answer, free_text, _iso(now), clarification_id),
            )
        return found

    # --- feedback ------------------------------------------------------------------------

    def record_feedback(self, feedback: Feedback) -> None:
        with self.db.write() as conn:
            conn.execute(
                f"INSERT INTO feedback ({_FEEDBACK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    feedback.id,
                    feedback.tenant,
                    feedback.retrieval_id,
                    feedback.external_user_id,
                    feedback.outcome,
                    json.dumps(feedback.used_memory_ids),
                    feedback.correction,
                    feedback.agent_confidence,
                    json.dumps(feedback.metadata) if feedback.metadata is not None else None,
                    feedback.correction_job_id,
                    _iso(feedback.received_at),
                ),
            )

    def feedback(self, tenant: str) -> list[Feedback]:
        """Everything `tenant`'s agents sent, oldest first (the devstack's inspection)."""
        rows = self.db.rows(
            f"SELECT {_FEEDBACK_COLUMNS} FROM feedback WHERE tenant = ?"
            " ORDER BY received_at, rowid",
            (tenant,),
        )
        return [_feedback(row) for row in rows]

    # --- demo data -----------------------------------------------------------------------

    def seed_once(self, now: dt.datetime | None = None) -> bool:
        """Load the demo memories and clarifications unless seeded before, their times
        relative to `now`; True if it ran now."""
        now = now or dt.datetime.now(dt.UTC)
        raw = _raw()
        with self.db.write() as conn:
            if conn.execute("SELECT 1 FROM meta WHERE key = 'seeded'").fetchone():
                return False
            for item in raw["memories"]:
                _insert_memory(conn, item, now)
            for item in raw["clarifications"]:
                _insert_clarification(conn, item, now)
            conn.execute("INSERT INTO meta VALUES ('seeded', ?)", (_iso(now),))
            return True


def _days_before(now: dt.datetime, days: float | None) -> dt.datetime | None:
    return None if days is None else now - dt.timedelta(days=days)


def _insert_memory(conn: sqlite3.Connection, item: dict[str, Any], now: dt.datetime) -> None:
    owner = tenant(item["tenant"])
    created = now - dt.timedelta(days=item["age_days"])
    event = item.get("event_id")
    provenance = None
    if event:
        provenance = {
            "service": item["service"],
            "event_id": event,
            "observed_at": wire_time(created - dt.timedelta(minutes=5)),
            "writer_id": stable_id(owner.name, "writer", item["agent_id"]),
        }
    conn.execute(
        f"INSERT INTO memories ({_MEMORY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            memory_id(owner.name, item["key"]),
            owner.name,
            owner.users[item["user"]],
            item["agent_id"],
            item["category"],
            item["content"],
            item["importance"],
            _iso(created),
            _iso(_days_before(now, item.get("superseded_days_ago"))),
            _iso(_days_before(now, item.get("accessed_days_ago"))),
            stable_id(owner.name, "event", event) if event else None,
            json.dumps(provenance) if provenance else None,
        ),
    )


def _insert_clarification(conn: sqlite3.Connection, item: dict[str, Any], now: dt.datetime) -> None:
    owner = tenant(item["tenant"])
    conn.execute(
        f"INSERT INTO clarifications ({_CLARIFICATION_COLUMNS})"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
        (
            clarification_id(owner.name, item["key"]),
            owner.name,
            owner.users[item["user"]],
            stable_id(owner.name, "conflict", item["key"]),
            item["question"],
            memory_id(owner.name, item["memory_a"]),
            memory_id(owner.name, item["memory_b"]),
            item["option_a"],
            item["option_b"],
            _iso(now - dt.timedelta(days=item["age_days"])),
            _iso(now + dt.timedelta(days=item["expires_in_days"])),
        ),
    )


def wire_time(moment: dt.datetime) -> str:
    """The seed's timestamps: UTC, whole seconds, Z."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
