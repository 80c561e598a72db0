"""A legacy store's row of an erasure, from its files' rows (`legacy_backend._store_outcome`):
"partly" only when something was erased, always saying what was left and why; a store
where nothing could be erased says why, and is never "partly"."""

from __future__ import annotations

import pytest

from memory_ui.sources.legacy.adapter import CHANGED_REASON, FORBIDDEN_REASON, _store_outcome
from memory_ui.sources.protocol import Outcome, SourceTarget

STORE = SourceTarget("legacy", "main.agents.benefits_assistant_memory", "benefits")
ASK = "ask hr-platform@contoso.com"
ERASED = Outcome(STORE, "/memories/a.md", "erased")
REFUSED = Outcome(STORE, "/memories/b.md", "not possible", FORBIDDEN_REASON)
CHANGED = Outcome(STORE, "/memories/c.md", "changed", CHANGED_REASON)
FAILED = Outcome(
    STORE, "/memories/d.md", "failed", "The legacy memory store is unavailable, try again."
)
READ_ONLY = "the portal may not change this store (it lacks WRITE MEMORY STORE), " + ASK


@pytest.mark.parametrize(
    ("files", "result", "reason", "erased"),
    [
        ([], "erased", "No files about this person.", 0),
        ([ERASED, ERASED], "erased", "2 files erased.", 2),
        ([REFUSED], "not possible", f"None of 1 file erased; 1 left: {READ_ONLY}.", 0),
        (
            [CHANGED, CHANGED],
            "changed",
            "None of 2 files erased; 2 left: changed since the export, kept: export again, then erase.",
            0,
        ),
        (
            [REFUSED, FAILED],
            "failed",
            f"None of 2 files erased; 1 left: {READ_ONLY}; "
            "1 left: the legacy memory store is unavailable, try again.",
            0,
        ),
        (
            [ERASED, REFUSED, CHANGED],
            "partly",
            f"1 of 3 files erased; 1 left: {READ_ONLY}; "
            "1 left: changed since the export, kept: export again, then erase.",
            1,
        ),
    ],
)
def test_a_stores_row_says_what_was_erased_and_what_was_left_and_why(
    files: list[Outcome], result: str, reason: str, erased: int
) -> None:
    row = _store_outcome(STORE, files, ASK)

    assert (row.result, row.reason, row.erased, row.total) == (result, reason, erased, len(files))
