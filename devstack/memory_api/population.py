"""Institutional population (documents, items keyed by `about`, edges, forgetting a
source) and the embedding backlog of the memory-api emulator: MemoryStore's half that
ingestion and /admin use."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable
from typing import Any

from devstack.memory_api.rows import (
    MEMORY_COLUMNS,
    NotFound,
    erase_rows,
    now,
    observe,
    one,
)
from devstack.sqlite import Database


class Population:
    db: Database

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
                        f"INSERT INTO memories ({MEMORY_COLUMNS})"
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
                    observe(conn, memory_id, item["content"], at, ())
                    continue
                current = one(conn, workspace_id, row[0], include_deleted=True)
                if [o.content for o in current.active] != [item["content"]]:
                    conn.execute(
                        "UPDATE observations SET status = 'superseded', superseded_at = ?"
                        " WHERE memory_id = ? AND status = 'active'",
                        (at, current.id),
                    )
                    replaced = tuple(o.id for o in current.active)
                    observe(conn, current.id, item["content"], at, replaced)

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
            erase_rows(conn, ids)
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
        return [document_of(row) for row in rows]

    def document(self, workspace_id: str, document_id: str) -> dict[str, Any]:
        row = self.db.row(
            "SELECT id, source, about, title, sections, created_at FROM documents"
            " WHERE workspace_id = ? AND id = ?",
            (workspace_id, document_id),
        )
        if row is None:
            raise NotFound
        return document_of(row, with_tree=True)

    def backlog(self) -> int:
        with self.db.connection() as conn:
            return backlog_of(conn)

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


def backlog_of(conn: sqlite3.Connection) -> int:
    observations = conn.execute("SELECT COUNT(*) FROM observations WHERE embedded = 0")
    chunks = conn.execute("SELECT COALESCE(SUM(pending), 0) FROM documents")
    return observations.fetchone()[0] + chunks.fetchone()[0]


def document_of(row: tuple[Any, ...], with_tree: bool = False) -> dict[str, Any]:
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
