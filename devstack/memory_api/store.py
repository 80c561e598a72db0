"""Memories, their observations, relations and the audit log of the memory-api emulator
(`{home}/memory-api.sqlite3`), seeded from devstack/memory_api/fixtures.toml; ingestion and
embeddings are population.py's. Writes run in devstack.sqlite's write transaction, audit
row included.
"""

from __future__ import annotations

import datetime as dt
import json
import tomllib
import uuid
from pathlib import Path
from typing import Any

from devstack.memory_api.identity import FIXTURES_PATH, Settings
from devstack.memory_api.population import Population
from devstack.memory_api.rows import (
    DB_FILENAME,
    MEMORY_COLUMNS,
    OBSERVATION_COLUMNS,
    SCHEMA,
    Memory,
    NotFound,
    Observation,
    Scope,
    audit_row,
    erase_rows,
    memory_of,
    now,
    observe,
    one,
    scope_where,
    stamp,
    with_observations,
)
from devstack.sqlite import Database

__all__ = ["Memory", "MemoryStore", "NotFound", "Observation", "Scope", "now"]


class MemoryStore(Population):
    def __init__(self, home: Path, settings: Settings) -> None:
        self.db = Database(home / DB_FILENAME, SCHEMA)
        self.settings = settings

    # --- reads ------------------------------------------------------------------------

    def memory(self, workspace_id: str, memory_id: str, include_deleted: bool = False) -> Memory:
        with self.db.connection() as conn:
            return one(conn, workspace_id, memory_id, include_deleted)

    def memories(self, scope: Scope, after: tuple[str, str] | None = None, limit: int = -1):
        """Rows of `scope` in (created_at, id) order after the cursor `after`."""
        where, params = scope_where(scope)
        if after is not None:
            where += " AND (created_at, id) > (?, ?)"
            params += after
        with self.db.connection() as conn:
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {where}"
                " ORDER BY created_at, id LIMIT ?",
                (*params, limit),
            ).fetchall()
            return with_observations(conn, rows)

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
                    f"INSERT INTO memories ({MEMORY_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,NULL)",
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
            current = one(conn, scope.workspace_id, memory_id)
            if content not in (o.content for o in current.active):
                observe(conn, memory_id, content, at, ())
            audit_row(conn, current, "create" if existing is None else "update", actor, at)
            return one(conn, scope.workspace_id, memory_id), existing is None

    def supersede(
        self, workspace_id: str, memory_id: str, content: str, type_: str | None, actor: str
    ) -> Memory:
        """Every active observation becomes superseded by one new active one (M8)."""
        at = now()
        with self.db.write() as conn:
            current = one(conn, workspace_id, memory_id)
            replaced = tuple(o.id for o in current.active)
            conn.execute(
                "UPDATE observations SET status = 'superseded', superseded_at = ?"
                " WHERE memory_id = ? AND status = 'active'",
                (at, memory_id),
            )
            observe(conn, memory_id, content, at, replaced)
            conn.execute(
                "UPDATE memories SET type = COALESCE(?, type), updated_at = ? WHERE id = ?",
                (type_, at, memory_id),
            )
            audit_row(conn, current, "supersede", actor, at)
            return one(conn, workspace_id, memory_id)

    def soft_delete(self, workspace_id: str, memory_id: str, tier: str, actor: str) -> Memory:
        at = now()
        with self.db.write() as conn:
            current = one(conn, workspace_id, memory_id)
            if current.tier != tier:
                raise NotFound
            conn.execute("UPDATE memories SET deleted_at = ? WHERE id = ?", (at, memory_id))
            audit_row(conn, current, "delete", actor, at)
            return one(conn, workspace_id, memory_id, include_deleted=True)

    def hard_delete(self, workspace_id: str, memory_id: str, tier: str, actor: str) -> None:
        with self.db.write() as conn:
            current = one(conn, workspace_id, memory_id)
            if current.tier != tier:
                raise NotFound
            erase_rows(conn, [memory_id])
            audit_row(conn, current, "delete", actor, now())

    def erase(self, scope: Scope, limit: int, actor: str) -> tuple[int, int]:
        """DSAR: remove up to `limit` of the subject's rows, soft-deleted ones included
        (-1: all); (deleted, remaining)."""
        everything = Scope(scope.workspace_id, scope.virtual_user_id, scope.agent, ("user",), True)
        where, params = scope_where(everything)
        at = now()
        with self.db.write() as conn:
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {where}"
                " ORDER BY created_at, id LIMIT ?",
                (*params, limit),
            ).fetchall()
            doomed = [memory_of(row) for row in rows]
            erase_rows(conn, [m.id for m in doomed])
            for memory in doomed:
                audit_row(conn, memory, "erase", actor, at)
            remaining = conn.execute(
                f"SELECT COUNT(*) FROM memories WHERE {where}", params
            ).fetchone()[0]
            return len(doomed), remaining

    def relate(
        self, workspace_id: str, source_id: str, target_id: str, relation: str, actor: str
    ) -> dict[str, str]:
        at = now()
        with self.db.write() as conn:
            source = one(conn, workspace_id, source_id)
            one(conn, workspace_id, target_id)
            relation_id = str(uuid.uuid4())
            conn.execute(
                "INSERT INTO relations VALUES (?,?,?,?,?,?)",
                (relation_id, workspace_id, source_id, target_id, relation, at),
            )
            audit_row(conn, source, "relate", actor, at)
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
                    f"INSERT INTO memories ({MEMORY_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,NULL)",
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
                        f"INSERT INTO observations ({OBSERVATION_COLUMNS}, embedded)"
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
