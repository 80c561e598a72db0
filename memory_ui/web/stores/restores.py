"""Staged zip restores, waiting for the user's go-ahead."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field

from django.core.cache import caches

from memory_ui.memory.archive import ParsedArchive

# --- Staged zip restores: the validated archive waits in the cache, bound to the user,
# while they review what goes where. The "durable" cache is always the database, so a Redis
# restart between the preview and the go-ahead loses nothing.

STAGE_SECONDS = 30 * 60
STAGE_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")


@dataclass
class RestoreOutcome:
    ok: bool
    message: str
    unknown: bool = False  # no answer came: it may still be restored (retrying re-checks)


@dataclass
class StagedRestore:
    """An uploaded, validated archive waiting for the user's go-ahead."""

    archive: ParsedArchive
    source: str
    mode: str = "replace"
    outcomes: dict[str, RestoreOutcome] = field(default_factory=dict)
    # What the last apply set out to restore: those without an outcome were not reached
    # (the request stopped midway), and applying the preview again finishes them.
    chosen: list[str] = field(default_factory=list)
    # When a write of each memory was first sent (ISO 8601), kept until it is known to have
    # landed: applying again checks the memory for it first (`exports.restore_file`).
    attempted: dict[str, str] = field(default_factory=dict)

    @property
    def interrupted(self) -> list[str]:
        return [key for key in self.chosen if key not in self.outcomes]


def _stage_key(owner_oid: str, token: str) -> str:
    return f"import-archive:{owner_oid}:{token}"


def restore_keep(owner_oid: str, staged: StagedRestore, token: str | None = None) -> str:
    """Keep (or keep again, after an attempt) a staged restore; its token."""
    token = token or secrets.token_urlsafe(16)
    caches["durable"].set(_stage_key(owner_oid, token), staged, STAGE_SECONDS)
    return token


def restore_find(owner_oid: str, token: str) -> StagedRestore | None:
    if not STAGE_TOKEN.fullmatch(token):
        return None
    staged = caches["durable"].get(_stage_key(owner_oid, token))
    return staged if isinstance(staged, StagedRestore) else None
