"""The lines of a History page (`views.history` for CoreAPI's memories, `views.source_history`
for an item of the generic source pages): who did what and when, the person's own changes
each with its diff (`templates/memory_ui/components/history_line.html` shows one)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory_ui.documents.diffs import DiffLine, diff_lines
from memory_ui.history import Change
from memory_ui.models import AuditEvent


@dataclass(frozen=True)
class Happened:
    """One line of the History, newest first: `who` did `what` at `at`; a change of the
    person's own carries its `change` (and `diff`), which can be restored."""

    at: datetime
    who: str
    what: str
    change: Change | None = None
    diff: list[DiffLine] | None = None


def action_labels() -> dict[str, str]:
    return dict(AuditEvent.Action.choices)


def your_changes(changes: list[Change]) -> list[Happened]:
    """The person's own changes as History lines, each with its diff."""
    labels = action_labels()
    return [
        Happened(
            change.at,
            "You",
            labels.get(change.action, change.action),
            change,
            None if change.unreadable else diff_lines(change.before, change.after),
        )
        for change in changes
    ]
