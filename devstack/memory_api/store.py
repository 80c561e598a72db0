"""Memories, their observations, relations, ingested documents and the audit log in SQLite
(`{home}/memory-api.sqlite3`), rows keyed by the Workspace UID as the real store's UUID
column is. Writes run in devstack.sqlite's write transaction, audit row included.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import tomllib
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devstack.memory_api.identity import FIXTURES_PATH, Settings
from devstack.sqlite import Database

DB_FILENAME = "memory-api.sqlite3"

_SCHEMA = """
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

_MEMORY_COLUMNS = (
    "id, workspace_id, tier, virtual_user_id, agent, type, about, source, created_at,"
    " updated_at, deleted_at"
)
_OBSERVATION_COLUMNS = "id, memory_id, content, status, created_at, superseded_at, supersedes"


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


class MemoryStore:
    def __init__(self, home: Path, settings: Settings) -> None:
        self.db = Database(home / DB_FILENAME, _SCHEMA)
        self.settings = settings

    # --- reads ------------------------------------------------------------------------

    def memory(self, workspace_id: str, memory_id: str, include_deleted: bool = False) -> Memory:
        with self.db.connection() as conn:
            return _one(conn, workspace_id, memory_id, include_deleted)

    def memories(self, scope: Scope, after: tuple[str, str] | None = None, limit: int = -1):
        """Rows of `scope` in (created_at, id) order after the cursor `after`."""
        where, params = _where(scope)
        if after is not None:
            where += " AND (created_at, id) > (?, ?)"
            params += after
        with self.db.connection() as conn:
            rows = conn.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE {where}"
                " ORDER BY created_at, id LIMIT ?",
                (*params, limit),
            ).fetchall()
            return _with_observations(conn, rows)

    def relations(self, workspace_id: str) -> list[dict[str, str]]:
        rows = self.db.rows(
            "SELECT id, source_id, target_id, relation, created_at FROM relations"
            " WHERE workspace_id = ? ORDER BY created_at, id",
            (workspace_id,),
        )
        keys = ("id", "source_id", "target_id", "relation", "created_at")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def audit_events(
        self, workspace_id: str, virtual_user_id: str | None, after: int, limit: int
    ) -> list[dict[str, Any]]:
        where, params = "workspace_id = ? AND seq > ?", [workspace_id, after]
        if virtual_user_id is not None:
            where += " AND virtual_user_id = ?"
            params.append(virtual_user_id)
        rows = self.db.rows(
            "SELECT seq, at, action, memory_id, virtual_user_id, agent, actor FROM audit"
            f" WHERE {where} ORDER BY seq LIMIT ?",
            (*params, limit),
        )
        keys = ("seq", "at", "action", "memory_id", "virtual_user_id", "agent", "actor")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    # --- writes -----------------------------------------------------------------------

    def save(
        self,
        scope: Scope,
        tier: str,
        type_: str,
        about: str | None,
        content: str,
        actor: str,
        source: str | None = None,
    ) -> tuple[Memory, bool]:
        """Create a memory, or add an active observation to the live one with the same
        `about` in the same scope (M7); (memory, created)."""
        at = now()
        with self.db.write() as conn:
            existing = None
            if about is not None:
                existing = conn.execute(
                    "SELECT id FROM memories WHERE workspace_id = ? AND tier = ?"
                    " AND virtual_user_id IS ? AND agent IS ? AND about = ? AND deleted_at IS NULL",
                    (scope.workspace_id, tier, scope.virtual_user_id, scope.agent, about),
                ).fetchone()
            if existing is None:
                memory_id = str(uuid.uuid4())
                conn.execute(
                    f"INSERT INTO memories ({_MEMORY_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,NULL)",
                    (
                        memory_id,
                        scope.workspace_id,
                        tier,
                        scope.virtual_user_id,
                        scope.agent,
                        type_,
                        about,
                        source,
                        at,
                        at,
                    ),
                )
            else:
                memory_id = existing[0]
                conn.execute(
                    "UPDATE memories SET type = ?, updated_at = ? WHERE id = ?",
                    (type_, at, memory_id),
                )
            current = _one(conn, scope.workspace_id, memory_id)
            if content not in (o.content for o in current.active):
                _observe(conn, memory_id, content, at, ())
            _audit(conn, current, "create" if existing is None else "update", actor, at)
            return _one(conn, scope.workspace_id, memory_id), existing is None

    def supersede(
        self, workspace_id: str, memory_id: str, content: str, type_: str | None, actor: str
    ) -> Memory:
        """Every active observation becomes superseded by one new active one (M8)."""
        at = now()
        with self.db.write() as conn:
            current = _one(conn, workspace_id, memory_id)
            replaced = tuple(o.id for o in current.active)
            conn.execute(
                "UPDATE observations SET status = 'superseded', superseded_at = ?"
                " WHERE memory_id = ? AND status = 'active'",
                (at, memory_id),
            )
            _observe(conn, memory_id, content, at, replaced)
            conn.execute(
                "UPDATE memories SET type = COALESCE(?, type), updated_at = ? WHERE id = ?",
                (type_, at, memory_id),
            )
            _audit(conn, current, "supersede", actor, at)
            return _one(conn, workspace_id, memory_id)

    def soft_delete(self, workspace_id: str, memory_id: str, tier: str, actor: str) -> Memory:
        at = now()
        with self.db.write() as conn:
            current = _one(conn, workspace_id, memory_id)
            if current.tier != tier:
                raise NotFound
            conn.execute("UPDATE memories SET deleted_at = ? WHERE id = ?", (at, memory_id))
            _audit(conn, current, "delete", actor, at)
            return _one(conn, workspace_id, memory_id, include_deleted=True)

    def hard_delete(self, workspace_id: str, memory_id: str, tier: str, actor: str) -> None:
        with self.db.write() as conn:
            current = _one(conn, workspace_id, memory_id)
            if current.tier != tier:
                raise NotFound
            _erase(conn, [memory_id])
            _audit(conn, current, "delete", actor, now())

    def erase(self, scope: Scope, limit: int, actor: str) -> tuple[int, int]:
        """DSAR: remove up to `limit` of the subject's rows, soft-deleted ones included
        (-1: all); (deleted, remaining)."""
        everything = Scope(scope.workspace_id, scope.virtual_user_id, scope.agent, ("user",), True)
        where, params = _where(everything)
        at = now()
        with self.db.write() as conn:
            rows = conn.execute(
                f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE {where}"
                " ORDER BY created_at, id LIMIT ?",
                (*params, limit),
            ).fetchall()
            doomed = [_memory(row) for row in rows]
            _erase(conn, [m.id for m in doomed])
            for memory in doomed:
                _audit(conn, memory, "erase", actor, at)
            remaining = conn.execute(
                f"SELECT COUNT(*) FROM memories WHERE {where}", params
            ).fetchone()[0]
            return len(doomed), remaining

    def relate(
        self, workspace_id: str, source_id: str, target_id: str, relation: str, actor: str
    ) -> dict[str, str]:
        at = now()
        with self.db.write() as conn:
            source = _one(conn, workspace_id, source_id)
            _one(conn, workspace_id, target_id)
            relation_id = str(uuid.uuid4())
            conn.execute(
                "INSERT INTO relations VALUES (?,?,?,?,?,?)",
                (relation_id, workspace_id, source_id, target_id, relation, at),
            )
            _audit(conn, source, "relate", actor, at)
        return {
            "id": relation_id,
            "source_id": source_id,
            "target_id": target_id,
            "relation": relation,
            "created_at": at,
        }

    def relate_abouts(self, workspace_id: str, source: str, target: str, relation: str) -> int:
        """An ingested edge between institutional items named by `about`, once (1 if it is
        there now, 0 when an end is missing)."""
        with self.db.write() as conn:
            ends = []
            for about in (source, target):
                row = conn.execute(
                    "SELECT id FROM memories WHERE workspace_id = ? AND tier = 'institutional'"
                    " AND about = ?",
                    (workspace_id, about),
                ).fetchone()
                if row is None:
                    return 0
                ends.append(row[0])
            exists = conn.execute(
                "SELECT 1 FROM relations WHERE source_id = ? AND target_id = ? AND relation = ?",
                (*ends, relation),
            ).fetchone()
            if exists is None:
                conn.execute(
                    "INSERT INTO relations VALUES (?,?,?,?,?,?)",
                    (str(uuid.uuid4()), workspace_id, *ends, relation, now()),
                )
            return 1

    def record(
        self, workspace_id: str, action: str, actor: str, virtual_user_id: str | None = None
    ) -> None:
        """An audit row for a call that changes no memory (an export)."""
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO audit (workspace_id, at, action, memory_id, virtual_user_id, agent,"
                " actor) VALUES (?,?,?,NULL,?,NULL,?)",
                (workspace_id, now(), action, virtual_user_id, actor),
            )

    # --- ingestion and embeddings -----------------------------------------------------

    def ingest_document(self, workspace_id: str, document: dict[str, Any]) -> str:
        """Keyed by (source, about): ingesting the same document again replaces it."""
        sections = document.get("sections") or []
        chunks = sum(len(s.get("chunks") or []) for s in sections)
        document_id = str(
            uuid.uuid5(
                uuid.NAMESPACE_URL, f"{workspace_id}/{document['source']}/{document['about']}"
            )
        )
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO documents VALUES (?,?,?,?,?,?,?,?) ON CONFLICT"
                " (workspace_id, source, about) DO UPDATE SET title = excluded.title,"
                " sections = excluded.sections, pending = excluded.pending",
                (
                    document_id,
                    workspace_id,
                    document["source"],
                    document["about"],
                    document.get("title") or document["about"],
                    json.dumps(sections),
                    chunks,
                    now(),
                ),
            )
        return document_id

    def upsert_items(self, workspace_id: str, items: list[dict[str, Any]]) -> None:
        """Institutional items keyed by `about`: a changed content supersedes the old one,
        an unchanged one is left alone. One transaction for the whole batch."""
        at = now()
        with self.db.write() as conn:
            for item in items:
                row = conn.execute(
                    "SELECT id FROM memories WHERE workspace_id = ? AND tier = 'institutional'"
                    " AND about = ?",
                    (workspace_id, item["about"]),
                ).fetchone()
                if row is None:
                    memory_id = str(uuid.uuid4())
                    conn.execute(
                        f"INSERT INTO memories ({_MEMORY_COLUMNS})"
                        " VALUES (?,?,'institutional',NULL,NULL,?,?,?,?,?,NULL)",
                        (
                            memory_id,
                            workspace_id,
                            item.get("type") or "fact",
                            item["about"],
                            item.get("source"),
                            at,
                            at,
                        ),
                    )
                    _observe(conn, memory_id, item["content"], at, ())
                    continue
                current = _one(conn, workspace_id, row[0], include_deleted=True)
                if [o.content for o in current.active] != [item["content"]]:
                    conn.execute(
                        "UPDATE observations SET status = 'superseded', superseded_at = ?"
                        " WHERE memory_id = ? AND status = 'active'",
                        (at, current.id),
                    )
                    replaced = tuple(o.id for o in current.active)
                    _observe(conn, current.id, item["content"], at, replaced)

    def forget(self, workspace_id: str, source: str, keep: Iterable[str] | None = None) -> int:
        """Remove a source's documents and items, except the `keep` abouts; how many."""
        kept = tuple(keep or ())
        # `about NOT IN ()` is not SQL, and NOT IN (NULL) matches nothing: no clause instead.
        spare = f" AND about NOT IN ({','.join('?' * len(kept))})" if kept else ""
        with self.db.write() as conn:
            ids = [
                row[0]
                for row in conn.execute(
                    "SELECT id FROM memories WHERE workspace_id = ? AND tier = 'institutional'"
                    f" AND source = ?{spare}",
                    (workspace_id, source, *kept),
                )
            ]
            _erase(conn, ids)
            documents = conn.execute(
                f"DELETE FROM documents WHERE workspace_id = ? AND source = ?{spare}",
                (workspace_id, source, *kept),
            ).rowcount
            return len(ids) + documents

    def documents(self, workspace_id: str) -> list[dict[str, Any]]:
        rows = self.db.rows(
            "SELECT id, source, about, title, sections, created_at FROM documents"
            " WHERE workspace_id = ? ORDER BY created_at, id",
            (workspace_id,),
        )
        return [_document(row) for row in rows]

    def document(self, workspace_id: str, document_id: str) -> dict[str, Any]:
        row = self.db.row(
            "SELECT id, source, about, title, sections, created_at FROM documents"
            " WHERE workspace_id = ? AND id = ?",
            (workspace_id, document_id),
        )
        if row is None:
            raise NotFound
        return _document(row, with_tree=True)

    def backlog(self) -> int:
        with self.db.connection() as conn:
            return _backlog(conn)

    def embed(self, batch_size: int) -> int:
        """Embed one batch of pending observations and chunks; how many."""
        with self.db.write() as conn:
            ids = [
                row[0]
                for row in conn.execute(
                    "SELECT id FROM observations WHERE embedded = 0 LIMIT ?", (batch_size,)
                )
            ]
            conn.executemany(
                "UPDATE observations SET embedded = 1 WHERE id = ?", [(i,) for i in ids]
            )
            left = batch_size - len(ids)
            for document_id, pending in conn.execute(
                "SELECT id, pending FROM documents WHERE pending > 0"
            ).fetchall():
                if left <= 0:
                    break
                done = min(left, pending)
                conn.execute(
                    "UPDATE documents SET pending = pending - ? WHERE id = ?", (done, document_id)
                )
                left -= done
            return batch_size - left

    def meta(self, key: str) -> str | None:
        row = self.db.row("SELECT value FROM meta WHERE key = ?", (key,))
        return row[0] if row else None

    def drop_meta(self, key: str) -> None:
        with self.db.write() as conn:
            conn.execute("DELETE FROM meta WHERE key = ?", (key,))

    def set_meta(self, key: str, value: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = ?",
                (key, value, value),
            )

    # --- demo data --------------------------------------------------------------------

    def seed_once(self, fixtures_path: Path = FIXTURES_PATH) -> bool:
        with fixtures_path.open("rb") as fh:
            raw = tomllib.load(fh)
        settings = self.settings
        with self.db.write() as conn:
            if conn.execute("SELECT 1 FROM meta WHERE key = 'seeded'").fetchone():
                return False
            for item in raw.get("memories", ()):
                workspace = (
                    settings.other_workspace
                    if item.get("workspace") == "other"
                    else settings.workspace
                )
                user = settings.virtual_user_id(item["upn"]) if "upn" in item else None
                tier = item.get("tier") or ("user" if user else "agent")
                created = _fixture_time(item["created_at"])
                observations = item["observations"]
                updated = _fixture_time(observations[-1].get("at", item["created_at"]))
                conn.execute(
                    f"INSERT INTO memories ({_MEMORY_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,NULL)",
                    (
                        item["id"],
                        workspace.uid,
                        tier,
                        user,
                        item.get("agent"),
                        item["type"],
                        item.get("about"),
                        item.get("source"),
                        created,
                        updated,
                    ),
                )
                previous: tuple[str, ...] = ()
                for index, observation in enumerate(observations):
                    at = _fixture_time(observation.get("at", item["created_at"]))
                    observation_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{item['id']}/{index}"))
                    superseded = observation["status"] == "superseded"
                    conn.execute(
                        f"INSERT INTO observations ({_OBSERVATION_COLUMNS}, embedded)"
                        " VALUES (?,?,?,?,?,?,?,1)",
                        (
                            observation_id,
                            item["id"],
                            observation["content"],
                            observation["status"],
                            at,
                            updated if superseded else None,
                            json.dumps(previous),
                        ),
                    )
                    previous = (observation_id,) if superseded else ()
            conn.execute("INSERT INTO meta VALUES ('seeded', ?)", (now(),))
            return True


def _fixture_time(text: str) -> str:
    return stamp(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))


def _where(scope: Scope) -> tuple[str, tuple[Any, ...]]:
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


def _memory(row: tuple[Any, ...], observations: tuple[Observation, ...] = ()) -> Memory:
    return Memory(*row, observations=observations)


def _observation(row: tuple[Any, ...]) -> Observation:
    return Observation(*row[:6], supersedes=tuple(json.loads(row[6])))


def _one(
    conn: sqlite3.Connection, workspace_id: str, memory_id: str, include_deleted: bool = False
) -> Memory:
    row = conn.execute(
        f"SELECT {_MEMORY_COLUMNS} FROM memories WHERE id = ? AND workspace_id = ?"
        + ("" if include_deleted else " AND deleted_at IS NULL"),
        (memory_id, workspace_id),
    ).fetchone()
    if row is None:
        raise NotFound
    return _with_observations(conn, [row])[0]


def _with_observations(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> list[Memory]:
    ids = [row[0] for row in rows]
    found: dict[str, list[Observation]] = {i: [] for i in ids}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        for row in conn.execute(
            f"SELECT {_OBSERVATION_COLUMNS} FROM observations WHERE memory_id IN"
            f" ({','.join('?' * len(part))}) ORDER BY created_at, id",
            part,
        ):
            found[row[1]].append(_observation(row))
    return [_memory(row, tuple(found[row[0]])) for row in rows]


def _observe(
    conn: sqlite3.Connection, memory_id: str, content: str, at: str, supersedes: tuple[str, ...]
) -> None:
    conn.execute(
        f"INSERT INTO observations ({_OBSERVATION_COLUMNS}, embedded) VALUES (?,?,?,'active',?,"
        "NULL,?,0)",
        (str(uuid.uuid4()), memory_id, content, at, json.dumps(supersedes)),
    )


def _erase(conn: sqlite3.Connection, ids: list[str]) -> None:
    for memory_id in ids:
        conn.execute("DELETE FROM observations WHERE memory_id = ?", (memory_id,))
        conn.execute(
            "DELETE FROM relations WHERE source_id = ? OR target_id = ?", (memory_id, memory_id)
        )
        conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))


# Actions: create, update, supersede, delete, erase (DSAR, consent), relate, export (M27).
def _audit(conn: sqlite3.Connection, memory: Memory, action: str, actor: str, at: str) -> None:
    conn.execute(
        "INSERT INTO audit (workspace_id, at, action, memory_id, virtual_user_id, agent, actor)"
        " VALUES (?,?,?,?,?,?,?)",
        (memory.workspace_id, at, action, memory.id, memory.virtual_user_id, memory.agent, actor),
    )


def _backlog(conn: sqlite3.Connection) -> int:
    observations = conn.execute("SELECT COUNT(*) FROM observations WHERE embedded = 0")
    chunks = conn.execute("SELECT COALESCE(SUM(pending), 0) FROM documents")
    return observations.fetchone()[0] + chunks.fetchone()[0]


def _document(row: tuple[Any, ...], with_tree: bool = False) -> dict[str, Any]:
    sections = json.loads(row[4])
    result: dict[str, Any] = {
        "id": row[0],
        "source": row[1],
        "about": row[2],
        "title": row[3],
        "sections": len(sections),
        "chunks": sum(len(s.get("chunks") or []) for s in sections),
        "created_at": row[5],
    }
    if with_tree:
        result["tree"] = [
            {"title": s.get("title") or "", "chunks": list(s.get("chunks") or [])} for s in sections
        ]
    return result
