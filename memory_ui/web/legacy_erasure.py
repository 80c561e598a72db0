"""The legacy memory stores in requests that cover every memory source: "Export
everything" (the user's, and support's for a deletion request) and support's erasure.

An export that cannot reach the stores still hands over what it could (CoreAPI's
memories): the archive's manifest and the page say which source is missing. Erasure
covers only files still as that export handed them over (`LegacyExport.versions`, kept
with the request in the session), as CoreAPI's clear refuses a memory changed since its
export; its result is one row per source and target (erased, partly, changed, not
possible, and why). Before the clear the request page shows the same rows as a plan:
every store with the person's files counted, every store known but not reachable with
whom to ask, and whom to ask about stores the portal was never told of."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from memory_ui.legacy import LegacyStoreError
from memory_ui.memory.backends import Erasure
from memory_ui.memory.legacy_ops import (
    legacy_enabled,
    legacy_erase_subject,
    legacy_erasure_plan,
    legacy_export_all,
)
from memory_ui.memory.operations import Actor

logger = logging.getLogger("memory_ui.web.legacy")

SOURCE_LABEL = "Legacy memory stores"
MISSING_MESSAGE = (
    "The legacy memory stores could not be reached; their memories are not in this file."
)
RESULT_WORDS = {
    "to erase": "to erase",
    "erased": "erased",
    "partly": "partly",
    "changed": "changed since the export",
    "not possible": "not possible",
    "failed": "failed",
}
# The stores service lists only the stores the portal may read: nothing tells it of others.
OTHER_STORES = (
    "Other legacy memory stores may keep memory about this person: the portal only knows "
    "of those listed here. Ask {contact} which others exist."
)


@dataclass(frozen=True)
class LegacyExport:
    """The legacy part of an "Export everything": files for the zip (path, markdown), the
    version of every exported file (store -> path -> version; None: the stores were not
    exported), and the manifest's entry when they could not be reached."""

    files: list[tuple[str, str]] = field(default_factory=list)
    versions: dict[str, dict[str, str]] | None = field(default_factory=dict)
    missing: list[dict[str, str]] = field(default_factory=list)

    @property
    def message(self) -> str:
        """What the page that began the download says, when a source is missing."""
        return MISSING_MESSAGE if self.missing else ""


def legacy_export(actor: Actor) -> LegacyExport:
    """The subject's legacy files, read before the first byte of the zip is sent; when
    the stores fail, an export without them that says so (never a failed download)."""
    if not legacy_enabled():
        return LegacyExport()
    try:
        exported = legacy_export_all(actor)
    except LegacyStoreError as exc:
        logger.warning("Export everything without the legacy stores: %s", type(exc).__name__)
        missing = {"source": "legacy", "label": SOURCE_LABEL, "message": MISSING_MESSAGE}
        return LegacyExport(versions=None, missing=[missing])
    return LegacyExport(
        files=[(f"legacy/{file.name}", file.text) for file in exported],
        versions={file.store: file.versions for file in exported},
    )


def legacy_erasure_plan_rows(actor: Actor) -> list[dict[str, Any]]:
    """What the request covers in the legacy stores, before the clear: one row per store
    the portal knows of (its files counted, or why they cannot be erased from here) and
    one for conversations; or one row saying why none could be reached."""
    return _rows(legacy_erasure_plan(actor)) if legacy_enabled() else []


def legacy_erasure_rows(
    actor: Actor, exported: dict[str, dict[str, str]] | None
) -> list[dict[str, Any]]:
    """Erases the subject's legacy files that are still as `exported` (the request's
    export) handed them over; one row per store (how many files were erased, of how many,
    and what was left and why), one per store the portal knows of but cannot reach, and
    one for conversations. A failure before any store is one row saying why."""
    if not legacy_enabled():
        return []
    try:
        return _rows(legacy_erase_subject(actor, exported))
    except LegacyStoreError as exc:
        return [_row("every store", "failed", exc.message)]


def other_stores_note() -> str:
    """Whom to ask about stores the portal was never told of ("" when the source is off)."""
    if not legacy_enabled():
        return ""
    contact = settings.LEGACY_STORES_CONTACT or "the Databricks workspace's administrators"
    return OTHER_STORES.format(contact=contact)


def _rows(erasure: Erasure) -> list[dict[str, Any]]:
    rows = []
    for outcome in erasure.outcomes:
        target = outcome.target.title if outcome.target is not None else outcome.key.capitalize()
        result = RESULT_WORDS.get(outcome.result, "failed")
        rows.append(_row(target, result, outcome.reason, outcome.erased, outcome.total))
    return rows


def _row(
    target: str, result: str, reason: str, erased: int = 0, total: int | None = None
) -> dict[str, Any]:
    """A row as the session keeps it: `erased` files of `total` (None: not known)."""
    return {
        "source": SOURCE_LABEL,
        "target": target,
        "result": result,
        "reason": reason,
        "erased": erased,
        "total": total,
    }
