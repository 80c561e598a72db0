"""A support deletion request across every memory source, beside CoreAPI's memories: the
legacy stores' files in the request's export, and their erasure as one result row per
source and target (erased, partly, not possible, and why), kept with the request in the
session like CoreAPI's outcomes. Only a request for every memory covers them."""

from __future__ import annotations

from typing import Any

from memory_ui.legacy import LegacyStoreError
from memory_ui.memory.legacy_ops import legacy_enabled, legacy_erase_subject, legacy_export_all
from memory_ui.memory.operations import Actor

SOURCE_LABEL = "Legacy memory stores"
RESULT_WORDS = {"erased": "erased", "partly": "partly", "not possible": "not possible"}


def legacy_export_files(actor: Actor) -> list[tuple[str, str]]:
    """The subject's legacy files for the request's zip (path in the zip, markdown)."""
    if not legacy_enabled():
        return []
    return [(f"legacy/{file.name}", file.text) for file in legacy_export_all(actor)]


def legacy_erasure_rows(actor: Actor) -> list[dict[str, Any]]:
    """Erases the subject's legacy files; one row per store, and one for what cannot be
    reached at all (conversations). A failure before any store is one row saying why."""
    if not legacy_enabled():
        return []
    try:
        erasure = legacy_erase_subject(actor)
    except LegacyStoreError as exc:
        return [_row("every store", "not erased", exc.message)]
    rows = []
    for outcome in erasure.outcomes:
        target = outcome.target.title if outcome.target is not None else outcome.key.capitalize()
        result = RESULT_WORDS.get(outcome.result, "not erased")
        rows.append(_row(target, result, outcome.reason))
    return rows


def _row(target: str, result: str, reason: str) -> dict[str, Any]:
    return {"source": SOURCE_LABEL, "target": target, "result": result, "reason": reason}
