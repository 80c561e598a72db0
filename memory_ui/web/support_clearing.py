"""Support's clear of a deletion request, one CoreAPI memory at a time: cleared only while
it is still the version its export handed over, then read back, so a row says "cleared"
only where that read found it empty (docs/architecture.md, Erasure receipts)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.utils import timezone

from memory_ui.documents import content_hash, count_entries
from memory_ui.documents.versions import Version
from memory_ui.identity import Actor
from memory_ui.sources.agent_memory import Memory, MemoryChanged, Target
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_store
from memory_ui.web.stores.support import ClearOutcome, Exported


def clear_one(actor: Actor, target: Target, exported: Exported) -> ClearOutcome:
    """Clear one memory if it is still the version its export handed over."""
    version = Version.parse(exported.version)
    before = {
        "bytes_before": exported.size,
        "sha256_before": version.sha256 if version else "",
        "entries_before": exported.entries,
    }
    outcome = {"key": target.key, "label": target.label, **before}
    if version is None:
        return ClearOutcome(**outcome, status="changed", message="Export it again, then clear.")
    try:
        after = memory_store().clear(actor, target, started_from=version)
    except MemoryChanged as exc:
        if exc.current.content_markdown == "":
            # Emptied meanwhile (a retry of a clear whose answer was lost, or the user).
            after = exc.current
        else:
            message = (
                "It changed since the export, so nothing was cleared: download the export "
                "again, then clear."
            )
            return ClearOutcome(**outcome, status="changed", message=message)
    except SourceError as exc:
        status = "unknown" if exc.outcome_unknown else "failed"
        return ClearOutcome(**outcome, status=status, message=exc.message)
    return ClearOutcome(**outcome, status="cleared", **found_after(after))


def found_after(memory: Memory) -> dict[str, Any]:
    """A memory as a clear's outcome keeps it after: counts, size, hash, version."""
    text = memory.content_markdown
    return {
        "entries_after": count_entries(text),
        "bytes_after": len(text.encode()),
        "sha256_after": content_hash(text),
        "version_after": Version.of(memory).token(),
    }


def read_back(
    actor: Actor, targets: list[Target], outcomes: list[ClearOutcome]
) -> list[ClearOutcome]:
    """Each memory the clear emptied, read again: "cleared" only where the read finds it
    still empty (an agent may write to it right after; else "left"), with what was read
    and when."""
    cleared = [t for t, o in zip(targets, outcomes, strict=True) if o.status == "cleared"]
    read = {loaded.key: loaded for loaded in memory_store().load_many(actor, cleared)}
    read_at = timezone.now().isoformat()
    checked = []
    for outcome in outcomes:
        loaded = read.get(outcome.key)
        if loaded is None:
            checked.append(outcome)
        elif loaded.memory is None:
            why = loaded.error.message if loaded.error else ""
            message = f"It was cleared, but reading it back failed: {why}"
            checked.append(replace(outcome, status="unknown", message=message, read_at=read_at))
        else:
            after = {**found_after(loaded.memory), "read_at": read_at}
            if loaded.memory.has_content:
                message = (
                    "Read back after the clear, it holds something again (an agent wrote to "
                    "it since): erase again."
                )
                checked.append(replace(outcome, status="left", message=message, **after))
            else:
                checked.append(replace(outcome, **after))
    return checked
