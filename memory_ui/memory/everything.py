"""The sources beside the primary one in requests that cover a person's whole memory:
"Export everything" (the person's own, and support's for a deletion request) and support's
deletion request (what it covers before the clear, what it erased after). It loops over
the registry and names no source; a source no person's memory can be reached in gets a
row saying so, and whom to ask, instead of being left out.

An export that cannot reach a source still hands over what it could: the archive's
manifest and the page name each source that is missing (`OthersExport.missing`), and the
download goes on. What each source handed over (`OthersExport.exported`: source -> target
-> item -> version) is what its erasure must still find."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from django.utils import timezone

from memory_ui.identity import Actor
from memory_ui.memory.at_once import at_once
from memory_ui.sources import registry
from memory_ui.sources.protocol import (
    Capability,
    Erasure,
    Exported,
    ExportedFile,
    Outcome,
    Source,
    SourceError,
    Steps,
)

logger = logging.getLogger("memory_ui.memory.everything")


def missing_message(source: Source) -> str:
    """What the manifest and the page say of a source the export could not reach."""
    return f"{source.title} could not be reached; their memories are not in this file."


@dataclass(frozen=True)
class OthersExport:
    """The other sources' part of an "Export everything": files for the zip (path inside
    it, markdown; one folder per source), what each source handed over (None: not
    exported), and one manifest entry per source that could not be reached."""

    files: list[tuple[str, str]] = field(default_factory=list)
    exported: dict[str, Exported] = field(default_factory=dict)
    missing: list[dict[str, str]] = field(default_factory=list)

    @property
    def message(self) -> str:
        """What the page that began the download says, when a source is missing."""
        return " ".join(entry["message"] for entry in self.missing)


def exportable() -> list[Source]:
    """The other sources "Export everything" reads."""
    return [source for source in registry.others() if not not_exported_reason(source)]


def not_exported_reason(source: Source) -> str:
    """Why "Export everything" leaves a source out ("" where it reads it): the page names
    each such source with this, so the file is never taken for all there is."""
    if source.steps is None:
        return source.unreachable or source.missing_reason(Capability.EXPORT)
    for capability in (Capability.EXPORT, Capability.LIST):
        if not source.can(capability):
            return source.missing_reason(capability)
    return ""


def not_exported() -> list[tuple[Source, str]]:
    """The other sources "Export everything" cannot include, each with why."""
    return [(s, why) for s in registry.others() if (why := not_exported_reason(s))]


def others_export(actor: Actor) -> OthersExport:
    """The subject's memory in every other source, read before the first byte of the zip
    is sent, every source at the same time within its own deadline (`at_once`); a source
    that fails or does not answer in time is named as missing (never a failed download)."""
    sources = exportable()
    result = OthersExport()
    exports = at_once(*(partial(_export, actor, source) for source in sources))
    for source, files in zip(sources, exports, strict=True):
        if files is None:
            result.missing.append(
                {"source": source.name, "label": source.title, "message": missing_message(source)}
            )
            result.exported[source.name] = None
            continue
        result.files.extend((f"{source.name}/{file.name}", file.text) for file in files)
        result.exported[source.name] = {file.target: file.versions for file in files}
    return result


def _export(actor: Actor, source: Source) -> list[ExportedFile] | None:
    """Everything `source` holds for the subject, or None when it cannot give it."""
    assert source.steps is not None  # exportable() keeps sources with steps only
    try:
        return source.steps.export_all(actor)
    except SourceError as exc:
        logger.warning("Export everything without %s: %s", source.name, type(exc).__name__)
        return None


# --- a deletion request's other systems ------------------------------------------------

RESULT_WORDS = {
    "to erase": "to erase",
    "erased": "erased",
    "partly": "partly",
    "changed": "changed since the export",
    "not possible": "not possible",
    "failed": "failed",
}


def others_plan(actor: Actor) -> list[dict[str, Any]]:
    """What a deletion request covers in every other source, before the clear: a row per
    target (its items counted, or why they cannot be erased from here) and a row per source
    no person's memory can be reached in; nothing is changed and no content read."""
    return _each_other(lambda source, steps: steps.plan(actor))


def others_erase(actor: Actor, exported: dict[str, Exported]) -> list[dict[str, Any]]:
    """Erases what each other source handed over in the request's export (`exported`:
    source -> what `others_export` kept) and is unchanged since; a row per target, erased,
    partly, changed, not possible or failed, and why. A target is "erased" only when the
    source, read back afterwards, holds nothing more in it."""

    def erase(source: Source, steps: Steps) -> Erasure:
        erasure = steps.erase_all(actor, exported.get(source.name))
        try:
            left = steps.plan(actor)
        except SourceError as exc:
            return _read_back(erasure, None, exc.message)
        return _read_back(erasure, left)

    return _each_other(erase)


def _read_back(erasure: Erasure, left: Erasure | None, why: str = "") -> Erasure:
    """The erasure's "erased" rows checked against what a plan read afterwards finds
    (`left`; None when that read failed, for `why`); each target's row says how many items
    that read found (`Outcome.left`) and the erasure when it was read."""
    found = {o.key: o.total or 0 for o in left.outcomes if o.target} if left else {}
    rows = []
    for outcome in erasure.outcomes:
        if left is not None and outcome.target is not None:
            outcome = replace(outcome, left=found.get(outcome.key, 0))
        if outcome.result == "erased" and outcome.target is not None:
            if left is None:
                reason = f"Erased, but it could not be read back to check: {why}"
                outcome = replace(outcome, result="partly", reason=reason)
            elif remaining := found.get(outcome.key, 0):
                reason = f"Read back after the erasure, {remaining} still there: erase again."
                outcome = replace(outcome, result="partly", reason=reason)
        rows.append(outcome)
    return Erasure(tuple(rows), timezone.now().isoformat() if left is not None else "")


def _each_other(step: Callable[[Source, Steps], Erasure]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for source in registry.others():
        if source.steps is None:
            rows.append(_unreachable_row(source))
            continue
        try:
            rows += _rows(source, step(source, source.steps))
        except SourceError as exc:
            rows.append(_row(source, "every target", "failed", exc.message))
    return rows


def others_notes() -> list[str]:
    """Whom to ask about memory in the other sources that the portal was never told of."""
    return [source.others_note for source in registry.others() if source.others_note]


def _unreachable_row(source: Source) -> dict[str, Any]:
    ask = f" Ask {source.owner}." if source.owner else ""
    return _row(source, "everything", "not possible", source.unreachable + ask)


def _rows(source: Source, erasure: Erasure) -> list[dict[str, Any]]:
    return [
        _row(
            source,
            _target_title(source, outcome),
            RESULT_WORDS.get(outcome.result, "failed"),
            outcome.reason,
            outcome.erased,
            outcome.total,
            left=outcome.left,
            read_at=erasure.read_at,
        )
        for outcome in erasure.outcomes
    ]


def _target_title(source: Source, outcome: Outcome) -> str:
    """What a row names: its target, "everything" for the whole source, else the part."""
    if outcome.target is not None:
        return outcome.target.title
    return "everything" if outcome.key == source.name else outcome.key.capitalize()


def _row(
    source: Source,
    target: str,
    result: str,
    reason: str,
    erased: int = 0,
    total: int | None = None,
    *,
    left: int | None = None,
    read_at: str = "",
) -> dict[str, Any]:
    """A row as the session keeps it: `erased` items of `total` (None: not known), and
    how many a read-back found `left` at `read_at` (None, "": not read back)."""
    return {
        "source": source.title,
        "target": target,
        "result": result,
        "reason": reason,
        "erased": erased,
        "total": total,
        "left": left,
        "read_at": read_at,
    }
