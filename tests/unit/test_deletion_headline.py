"""The heading of a deletion request's result (`DeletionRequest.headline`): what was really
erased, and never "all" while any memory, file or system is left."""

from __future__ import annotations

import pytest

from memory_ui.web.stores.support import ClearOutcome, DeletionRequest


def _request(cleared: int, of: int, others: list[dict]) -> DeletionRequest:
    keys = [f"agent:{n}" for n in range(of)]
    outcomes = [
        ClearOutcome(key, key, "cleared" if n < cleared else "failed") for n, key in enumerate(keys)
    ]
    return DeletionRequest(
        "id", "alice@contoso.com", "r", "T-1", keys, True, "", {}, "", "now", outcomes, others
    )


def _row(result: str, erased: int = 0, total: int | None = None) -> dict:
    return {
        "source": "S",
        "target": "t",
        "result": result,
        "reason": "",
        "erased": erased,
        "total": total,
    }


@pytest.mark.parametrize(
    ("cleared", "of", "others", "headline"),
    [
        (4, 4, [], "All 4 cleared"),  # CoreAPI only, as before
        (1, 2, [], "Partly cleared: 1 of 2"),
        (4, 4, [_row("erased", 3, 3)], "All cleared: 4 memories, 3 files in other systems"),
        (
            4,
            4,
            [_row("erased", 3, 3), _row("not possible", 0, 1), _row("not possible")],
            "Partly cleared: 4 of 4 memories, 3 of 4 files in other systems; "
            "what is left is listed below",
        ),
        (
            4,
            4,
            [_row("failed")],  # the stores could not be reached at all
            "Partly cleared: 4 of 4 memories, none in other systems; what is left is listed below",
        ),
        (0, 1, [_row("not possible", 0, 1)], "Nothing was cleared"),
    ],
)
def test_the_heading_counts_what_was_erased(cleared, of, others, headline) -> None:
    assert _request(cleared, of, others).headline == headline


def test_rows_kept_before_the_counts_were_recorded_still_give_a_heading() -> None:
    old = {"source": "S", "target": "t", "result": "partly", "reason": "3 files"}

    assert _request(2, 2, [old]).headline.startswith("Partly cleared: 2 of 2 memories")
