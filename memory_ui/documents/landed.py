"""Whether an append or an import-append CoreAPI did not answer landed after all.

An append adds one block at the end: a `## Added …` (or `## Imported …`) heading stamped by
CoreAPI, the reason after it, then the text stripped (`documents.appended`). So an earlier
attempt is found by that block: a heading of the right kind, stamped no earlier than the
attempt began (less `CLOCK_SLACK`, since the stamp is CoreAPI's clock), with the same
reason, followed by exactly the text that was sent. The same note added deliberately days
before is not mistaken for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from memory_ui.documents import Entry, parse_document

# How far CoreAPI's clock may be behind the portal's when it stamps a block.
CLOCK_SLACK = timedelta(minutes=2)


def landed_block(
    current: str,
    kind: Literal["added", "imported"],
    text: str,
    since: datetime,
    reason: str | None = None,
) -> Entry | None:
    """The entry that starts the block an attempt begun at `since` would have written, or
    None when no such block is in `current`."""
    wanted = text.strip()
    document = parse_document(current)
    earliest = since - CLOCK_SLACK
    for entry in reversed(document.entries):
        if entry.kind != kind or (entry.reason or "") != (reason or ""):
            continue
        if entry.timestamp is None or entry.timestamp < earliest:
            continue
        if entry.body == wanted:
            return entry
        # An import may hold entry headings of its own, so its text runs past this entry.
        if kind == "imported" and wanted.startswith(entry.body.strip()):
            after_heading = "".join(document.lines[entry.start_line + 1 :]).lstrip()
            if after_heading.startswith(wanted):
                return entry
    return None


@dataclass(frozen=True)
class Block:
    """The block an append (`added`) or an import-append (`imported`) writes."""

    kind: Literal["added", "imported"]
    text: str
    reason: str | None = None

    def landed(self, current: str, since: datetime) -> bool:
        """Whether an attempt begun at `since` wrote this block into `current`."""
        return landed_block(current, self.kind, self.text, since, self.reason) is not None
