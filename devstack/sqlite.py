"""The emulators' SQLite access: one connection per operation, writes under BEGIN IMMEDIATE.

Shared by the CoreAPI emulator's memory store and the legacy emulator's stores and
conversations, which must behave alike under concurrency. Each operation opens its own
connection (werkzeug serves each request on its own thread), and every read-modify-write runs
inside BEGIN IMMEDIATE, so concurrent writes serialise on the write lock instead of
overwriting each other. WAL lets readers proceed meanwhile.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

Row = tuple[Any, ...]

BUSY_TIMEOUT_SECONDS = 15


class Database:
    """One SQLite file; `schema` (CREATE ... IF NOT EXISTS) is applied on opening."""

    def __init__(self, path: Path, schema: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        with self.connection() as conn:
            conn.execute("PRAGMA journal_mode=WAL")  # persistent: recorded in the file
            conn.executescript(schema)

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves.
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        with closing(conn):
            yield conn

    def rows(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[Row]:
        """All rows of one read-only query."""
        with self.connection() as conn:
            return conn.execute(sql, parameters).fetchall()

    def row(self, sql: str, parameters: tuple[Any, ...] = ()) -> Row | None:
        """The first row of one read-only query, None if it has none."""
        with self.connection() as conn:
            return conn.execute(sql, parameters).fetchone()

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A transaction that holds the write lock from its start; rolled back on any error."""
        with self.connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
