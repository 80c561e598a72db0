"""Memory stores, their grants and their entries in SQLite (`{home}/legacy.sqlite3`).

Writes run in devstack.sqlite's write transaction, so a read-modify-write (PATCH) cannot
lose a concurrent edit, as in the CoreAPI emulator's store.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import tomllib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devstack.sqlite import Database

DB_FILENAME = "legacy.sqlite3"
FIXTURES_PATH = Path(__file__).resolve().parent / "fixtures.toml"
READ = "READ MEMORY STORE"
WRITE = "WRITE MEMORY STORE"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS stores (
    full_name TEXT PRIMARY KEY,
    description TEXT NOT NULL,
    owner TEXT NOT NULL,
    created_at INTEGER NOT NULL,   -- epoch milliseconds, as the seed's store fields
    updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS grants (
    full_name TEXT NOT NULL,
    principal TEXT NOT NULL,
    privilege TEXT NOT NULL,
    PRIMARY KEY (full_name, principal, privilege)
);
CREATE TABLE IF NOT EXISTS entries (
    store TEXT NOT NULL,
    scope TEXT NOT NULL,
    path TEXT NOT NULL,
    contents TEXT NOT NULL,
    description TEXT NOT NULL,
    create_time TEXT NOT NULL,     -- ISO 8601, UTC
    update_time TEXT NOT NULL,
    PRIMARY KEY (store, scope, path)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class AlreadyExists(Exception):
    """create(): an entry with this scope and path exists; nothing was written."""


class NotFound(Exception):
    """update()/delete(): no entry with this scope and path."""


@dataclass(frozen=True)
class StoreRow:
    full_name: str
    description: str
    owner: str
    created_at: int
    updated_at: int

    @property
    def memory_store_id(self) -> str:
        # Stable across resets, so links and logs stay comparable between runs.
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"memory-store:{self.full_name}"))


@dataclass(frozen=True)
class Entry:
    store: str
    scope: str
    path: str
    contents: str
    description: str
    create_time: dt.datetime
    update_time: dt.datetime


Edit = Callable[[Entry], Entry]  # current entry -> new entry (raises to refuse)


def _entry(row: tuple[Any, ...]) -> Entry:
    return Entry(row[0], row[1], row[2], row[3], row[4], _parse(row[5]), _parse(row[6]))


def _parse(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def _epoch_ms(text: str) -> int:
    return int(_parse(text.replace("Z", "+00:00")).timestamp() * 1000)


_ENTRY_COLUMNS = "store, scope, path, contents, description, create_time, update_time"
_STORE_COLUMNS = "full_name, description, owner, created_at, updated_at"


class LegacyStore:
    def __init__(self, home: Path) -> None:
        self.db = Database(home / DB_FILENAME, _SCHEMA)

    # --- stores and grants -----------------------------------------------------------

    def store(self, full_name: str) -> StoreRow | None:
        row = self.db.row(f"SELECT {_STORE_COLUMNS} FROM stores WHERE full_name = ?", (full_name,))
        return StoreRow(*row) if row else None

    def stores(self) -> list[StoreRow]:
        rows = self.db.rows(f"SELECT {_STORE_COLUMNS} FROM stores ORDER BY full_name")
        return [StoreRow(*row) for row in rows]

    def privileges(self, full_name: str, principal: str) -> frozenset[str]:
        rows = self.db.rows(
            "SELECT privilege FROM grants WHERE full_name = ? AND principal = ?",
            (full_name, principal),
        )
        return frozenset(row[0] for row in rows)

    # --- entries ---------------------------------------------------------------------

    def entry(self, store: str, scope: str, path: str) -> Entry | None:
        with self.db.connection() as conn:
            return _select(conn, store, scope, path)

    def entries(
        self, store: str, scope: str, path_prefix: str, after: str, limit: int
    ) -> list[Entry]:
        """Entries of a scope in path order, paths > `after`, at most `limit`."""
        rows = self.db.rows(
            f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE store = ? AND scope = ?"
            " AND substr(path, 1, ?) = ? AND path > ? ORDER BY path LIMIT ?",
            (store, scope, len(path_prefix), path_prefix, after, limit),
        )
        return [_entry(row) for row in rows]

    def create(self, entry: Entry) -> Entry:
        with self.db.write() as conn:
            if _select(conn, entry.store, entry.scope, entry.path) is not None:
                raise AlreadyExists
            _insert(conn, entry)
        return entry

    def update(self, store: str, scope: str, path: str, edit: Edit) -> Entry:
        with self.db.write() as conn:
            current = _select(conn, store, scope, path)
            if current is None:
                raise NotFound
            updated = edit(current)
            conn.execute(
                "UPDATE entries SET contents = ?, description = ?, update_time = ?"
                " WHERE store = ? AND scope = ? AND path = ?",
                (
                    updated.contents,
                    updated.description,
                    updated.update_time.isoformat(),
                    store,
                    scope,
                    path,
                ),
            )
        return updated

    def delete(self, store: str, scope: str, path: str) -> None:
        with self.db.write() as conn:
            deleted = conn.execute(
                "DELETE FROM entries WHERE store = ? AND scope = ? AND path = ?",
                (store, scope, path),
            ).rowcount
        if not deleted:
            raise NotFound

    def seed_once(self, fixtures_path: Path = FIXTURES_PATH) -> bool:
        """Load the demo stores, grants and entries unless seeded before; True if it ran now."""
        with fixtures_path.open("rb") as fh:
            raw = tomllib.load(fh)
        with self.db.write() as conn:
            if conn.execute("SELECT 1 FROM meta WHERE key = 'seeded'").fetchone():
                return False
            for item in raw.get("stores", ()):
                created = _epoch_ms(item["created_at"])
                conn.execute(
                    "INSERT INTO stores VALUES (?, ?, ?, ?, ?)",
                    (item["full_name"], item["description"], item["owner"], created, created),
                )
                for principal, privileges in item.get("grants", {}).items():
                    for privilege in privileges:
                        conn.execute(
                            "INSERT INTO grants VALUES (?, ?, ?)",
                            (item["full_name"], principal, privilege),
                        )
            for item in raw.get("entries", ()):
                at = _parse(item["at"].replace("Z", "+00:00"))
                contents = item["contents"].lstrip("\n")
                _insert(
                    conn,
                    Entry(
                        item["store"],
                        item["scope"],
                        item["path"],
                        contents,
                        item["description"],
                        at,
                        at,
                    ),
                )
            conn.execute(
                "INSERT INTO meta VALUES ('seeded', ?)", (dt.datetime.now(dt.UTC).isoformat(),)
            )
            return True


def audience(fixtures_path: Path = FIXTURES_PATH) -> str:
    """The token audience the stores accept (fixtures.toml `audience`)."""
    with fixtures_path.open("rb") as fh:
        return tomllib.load(fh)["audience"]


def _select(conn: sqlite3.Connection, store: str, scope: str, path: str) -> Entry | None:
    row = conn.execute(
        f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE store = ? AND scope = ? AND path = ?",
        (store, scope, path),
    ).fetchone()
    return _entry(row) if row else None


def _insert(conn: sqlite3.Connection, entry: Entry) -> None:
    conn.execute(
        f"INSERT INTO entries ({_ENTRY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            entry.store,
            entry.scope,
            entry.path,
            entry.contents,
            entry.description,
            entry.create_time.isoformat(),
            entry.update_time.isoformat(),
        ),
    )
