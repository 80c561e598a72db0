"""Memory documents in SQLite (`{home}/coreapi.sqlite3`), one row per (owner, scope, agent).

Concurrent appends serialise on the write lock of devstack.sqlite's write transaction. A
conditional write's precondition is checked inside that same transaction, after the lock is
taken, so no other write can land between the check and the write.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from devstack.sqlite import Database

DB_FILENAME = "coreapi.sqlite3"
USER_SCOPE_KEY = ""  # agent_object_id column value of a user-scope document

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    owner TEXT NOT NULL,            -- casefolded UPN
    agent_object_id TEXT NOT NULL,  -- '' for user scope
    content_markdown TEXT NOT NULL,
    created_on TEXT NOT NULL,       -- ISO 8601, UTC
    updated_on TEXT NOT NULL,
    PRIMARY KEY (owner, agent_object_id)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

Transform = Callable[[str], str]
Precondition = Callable[[str], bool]  # current content -> may the write go ahead?


class PreconditionFailed(Exception):
    """update()'s precondition refused the current document; nothing was written."""


@dataclass(frozen=True)
class MemoryDoc:
    content_markdown: str
    created_on: dt.datetime | None
    updated_on: dt.datetime | None


EMPTY = MemoryDoc("", None, None)


@dataclass(frozen=True)
class Write:
    owner: str
    agent_object_id: str
    transform: Transform
    at: dt.datetime


class MemoryStore:
    def __init__(self, home: Path) -> None:
        self._db = Database(home / DB_FILENAME, _SCHEMA)
        self.path = self._db.path

    def read(self, owner: str, agent_object_id: str) -> MemoryDoc:
        with self._db.connection() as conn:
            return _select(conn, owner, agent_object_id)

    def update(
        self,
        owner: str,
        agent_object_id: str,
        transform: Transform,
        at: dt.datetime,
        precondition: Precondition | None = None,
    ) -> MemoryDoc:
        """Atomically replace the document with transform(current content).

        With a precondition: only if precondition(current content) holds, judged under the
        write lock; otherwise PreconditionFailed and the document (or its absence) stays.
        """
        with self._db.write() as conn:
            return _apply(conn, Write(owner, agent_object_id, transform, at), precondition)

    def seed_once(self, writes: Iterable[Write]) -> bool:
        """Apply the demo writes unless this database was seeded before; True if it ran now."""
        with self._db.write() as conn:
            if conn.execute("SELECT 1 FROM meta WHERE key = 'seeded'").fetchone():
                return False
            for write in writes:
                _apply(conn, write)
            conn.execute("INSERT INTO meta (key, value) VALUES ('seeded', ?)", (_now_text(),))
            return True


def _now_text() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


def _parse(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def _select(conn: sqlite3.Connection, owner: str, agent_object_id: str) -> MemoryDoc:
    row = conn.execute(
        "SELECT content_markdown, created_on, updated_on FROM memories"
        " WHERE owner = ? AND agent_object_id = ?",
        (owner, agent_object_id),
    ).fetchone()
    if row is None:
        return EMPTY
    return MemoryDoc(row[0], _parse(row[1]), _parse(row[2]))


def _apply(
    conn: sqlite3.Connection, write: Write, precondition: Precondition | None = None
) -> MemoryDoc:
    current = _select(conn, write.owner, write.agent_object_id)
    if precondition is not None and not precondition(current.content_markdown):
        raise PreconditionFailed  # the write transaction rolls back: nothing was written
    created_on = current.created_on or write.at  # set by the first write, kept ever after
    doc = MemoryDoc(write.transform(current.content_markdown), created_on, write.at)
    conn.execute(
        "INSERT INTO memories (owner, agent_object_id, content_markdown, created_on, updated_on)"
        " VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (owner, agent_object_id) DO UPDATE SET"
        " content_markdown = excluded.content_markdown, updated_on = excluded.updated_on",
        (
            write.owner,
            write.agent_object_id,
            doc.content_markdown,
            created_on.isoformat(),
            write.at.isoformat(),
        ),
    )
    return doc
