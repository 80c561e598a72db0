"""The memory-api emulator's tables and the row-level steps its stores share: rows keyed by
the Workspace UID, as the real store's UUID column is; every write step runs inside the
caller's write transaction (devstack.sqlite)."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import uuid
from dataclasses import dataclass, field
from typing import Any

DB_FILENAME = "memory-api.sqlite3"

SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    tier TEXT NOT NULL,              -- user, agent or institutional
    virtual_user_id TEXT,
    agent TEXT,
    type TEXT NOT NULL,
    about TEXT,
    source TEXT,                     -- the populator source of institutional rows
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deleted_at TEXT
);
CREATE TABLE IF NOT EXISTS observations (
    id TEXT PRIMARY KEY,
    memory_id TEXT NOT NULL,
    content TEXT NOT NULL,
    status TEXT NOT NULL,            -- active or superseded
    created_at TEXT NOT NULL,
    superseded_at TEXT,
    supersedes TEXT NOT NULL,        -- JSON list of observation ids
    embedded INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS relations (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    relation TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    source TEXT NOT NULL,
    about TEXT NOT NULL,
    title TEXT NOT NULL,
    sections TEXT NOT NULL,          -- JSON [{"title", "chunks": [text]}]
    pending INTEGER NOT NULL,        -- chunks awaiting an embedding
    created_at TEXT NOT NULL,
    UNIQUE (workspace_id, source, about)
);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id TEXT NOT NULL,
    at TEXT NOT NULL,
    action TEXT NOT NULL,
    memory_id TEXT,
    virtual_user_id TEXT,
    agent TEXT,
    actor TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

MEMORY_COLUMNS = (
    "id, workspace_id, tier, virtual_user_id, agent, type, about, source, created_at,"
    " updated_at, deleted_at"
)
OBSERVATION_COLUMNS = "id, memory_id, content, status, created_at, superseded_at, supersedes"


class NotFound(Exception):
    """No live memory with this id in this workspace."""


def now() -> str:
    return stamp(dt.datetime.now(dt.UTC))


def stamp(moment: dt.datetime) -> str:
    # One fixed width, so text order is time order.
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class Observation:
    id: str
    memory_id: str
    content: str
    status: str
    created_at: str
    superseded_at: str | None
    supersedes: tuple[str, ...]


@dataclass(frozen=True)
class Memory:
    id: str
    workspace_id: str
    tier: str
    virtual_user_id: str | None
    agent: str | None
    type: str
    about: str | None
    source: str | None
    created_at: str
    updated_at: str
    deleted_at: str | None
    observations: tuple[Observation, ...] = field(default=())

    @property
    def active(self) -> tuple[Observation, ...]:
        return tuple(o for o in self.observations if o.status == "active")


@dataclass(frozen=True)
class Scope:
    """Which rows a query matches; None matches any."""

    workspace_id: str
    virtual_user_id: str | None = None
    agent: str | None = None
    tiers: tuple[str, ...] = ("user",)
    include_deleted: bool = False


def scope_where(scope: Scope) -> tuple[str, tuple[Any, ...]]:
    marks = ",".join("?" * len(scope.tiers))
    where = f"workspace_id = ? AND tier IN ({marks})"
    params: list[Any] = [scope.workspace_id, *scope.tiers]
    if scope.virtual_user_id is not None:
        # Shared tiers belong to nobody: a user's scope adds them without a user filter.
        where += " AND (virtual_user_id = ? OR tier != 'user')"
        params.append(scope.virtual_user_id)
    if scope.agent is not None:
        where += " AND (agent = ? OR tier = 'institutional')"
        params.append(scope.agent)
    if not scope.include_deleted:
        where += " AND deleted_at IS NULL"
    return where, tuple(params)


def memory_of(row: tuple[Any, ...], observations: tuple[Observation, ...] = ()) -> Memory:
    return Memory(*row, observations=observations)


def observation_of(row: tuple[Any, ...]) -> Observation:
    return Observation(*row[:6], supersedes=tuple(json.loads(row[6])))


def one(
    conn: sqlite3.Connection, workspace_id: str, memory_id: str, include_deleted: bool = False
) -> Memory:
    row = conn.execute(
        f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ? AND workspace_id = ?"
        + ("" if include_deleted else " AND deleted_at IS NULL"),
        (memory_id, workspace_id),
    ).fetchone()
    if row is None:
        raise NotFound
    return with_observations(conn, [row])[0]


def with_observations(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> list[Memory]:
    ids = [row[0] for row in rows]
    found: dict[str, list[Observation]] = {i: [] for i in ids}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        for row in conn.execute(
            f"SELECT {OBSERVATION_COLUMNS} FROM observations WHERE memory_id IN"
            f" ({','.join('?' * len(part))}) ORDER BY created_at, id",
            part,
        ):
            found[row[1]].append(observation_of(row))
    return [memory_of(row, tuple(found[row[0]])) for row in rows]


def observe(
    conn: sqlite3.Connection, memory_id: str, content: str, at: str, supersedes: tuple[str, ...]
) -> None:
    conn.execute(
        f"INSERT INTO observations ({OBSERVATION_COLUMNS}, embedded) VALUES (?,?,?,'active',?,"
        "NULL,?,0)",
        (str(uuid.uuid4()), memory_id, content, at, json.dumps(supersedes)),
    )


def erase_rows(conn: sqlite3.Connection, ids: list[str]) -> None:
    for memory_id in ids:
        conn.execute("DELETE FROM observations WHERE memory_id = ?", (memory_id,))
        conn.execute(
            "DELETE FROM relations WHERE source_id = ? OR target_id = ?", (memory_id, memory_id)
        )
        conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))


# Actions: create, update, supersede, delete, erase (DSAR, consent), relate, export (M27).
def audit_row(conn: sqlite3.Connection, memory: Memory, action: str, actor: str, at: str) -> None:
    conn.execute(
        "INSERT INTO audit (workspace_id, at, action, memory_id, virtual_user_id, agent, actor)"
        " VALUES (?,?,?,?,?,?,?)",
        (memory.workspace_id, at, action, memory.id, memory.virtual_user_id, memory.agent, actor),
    )
