"""Line diffs and the three-way merge: what they show, and that hostile text cannot make
them slow (memory is written by agents; imports and drafts are pasted, up to a MiB)."""

import pytest
from django.template.loader import render_to_string

from memory_ui.documents.diffs import MAX_LINES, DiffLine, diff_lines, merge_changes
from tests.unit.timing import timed

# Cases marked "was" took that long before comparisons were bounded (tests/unit/timing.py
# holds the deadline).


def _text(lines) -> str:
    return "".join(f"{line}\n" for line in lines)


def _sides(diff: list[DiffLine]) -> tuple[list[str], list[str]]:
    """Both documents back from a diff with unlimited context."""
    old = [line.text for line in diff if line.kind in ("same", "removed")]
    new = [line.text for line in diff if line.kind in ("same", "added")]
    return old, new


ALTERNATING = _text("- x" if i % 2 == 0 else "- y" for i in range(2_000))
X_X_Y = _text(("- x", "- x", "- y")[i % 3] for i in range(2_000))
# 100 distinct lines, each 50 times: too few repeats for difflib's autojunk to skip them.
CYCLE = [f"- fact {i % 100}" for i in range(MAX_LINES)]
CYCLE_SHUFFLED = _text(f"- fact {i * 7 % 100}" for i in range(MAX_LINES))


# --- diff_lines --------------------------------------------------------------------------


def test_identical_documents_have_no_differences() -> None:
    assert diff_lines("a\nb\n", "a\nb\n") == []
    assert diff_lines("", "") == []


def test_changed_lines_with_context_and_gaps() -> None:
    old = _text(f"line {i}" for i in range(1, 21))
    new = old.replace("line 2\n", "line two\n").replace("line 19\n", "")

    diff = diff_lines(old, new, context=1)

    assert diff == [
        DiffLine("same", "line 1", 1, 1),
        DiffLine("removed", "line 2", 2, None),
        DiffLine("added", "line two", None, 2),
        DiffLine("same", "line 3", 3, 3),
        DiffLine("gap", "", None, None),
        DiffLine("same", "line 18", 18, 18),
        DiffLine("removed", "line 19", 19, None),
        DiffLine("same", "line 20", 20, 19),
    ]


def test_repetitive_lines_compare_fast() -> None:  # was 31 s
    diff = timed(diff_lines, ALTERNATING, X_X_Y, 10**9)

    assert diff is not None
    assert _sides(diff) == (ALTERNATING.splitlines(), X_X_Y.splitlines())


def test_lines_repeated_just_too_rarely_for_autojunk_are_too_costly_to_compare() -> None:
    assert timed(diff_lines, _text(CYCLE), CYCLE_SHUFFLED) is None


def test_too_many_lines_are_not_compared() -> None:
    old = [f"old {i}" for i in range(MAX_LINES + 1)]
    new = [f"new {i}" for i in range(MAX_LINES + 1)]

    assert timed(diff_lines, _text(old), _text(new)) is None
    assert timed(diff_lines, _text(old[:MAX_LINES]), _text(new)) is None
    # At the limit they still are.
    diff = timed(diff_lines, _text(old[:MAX_LINES]), _text(new[:MAX_LINES]))
    assert diff is not None
    assert _sides(diff) == (old[:MAX_LINES], new[:MAX_LINES])


def test_one_change_or_an_append_to_a_long_document_still_compares() -> None:
    old = _text(f"- fact {i}" for i in range(4 * MAX_LINES))
    changed = old.replace("- fact 9000\n", "- changed\n")

    assert timed(diff_lines, old, changed, 0) == [
        DiffLine("removed", "- fact 9000", 9001, None),
        DiffLine("added", "- changed", None, 9001),
    ]
    assert timed(diff_lines, old, old + "- appended\n", 0) == [
        DiffLine("added", "- appended", None, 4 * MAX_LINES + 1)
    ]
    # Changes far apart leave more than MAX_LINES lines between them to compare.
    assert timed(diff_lines, old, changed + "- appended\n") is None


# --- merge_changes (more cases in test_forms.py) -----------------------------------------


def test_merging_repetitive_lines_is_fast() -> None:  # was 36 s
    merged = timed(merge_changes, ALTERNATING, X_X_Y, ALTERNATING + "- z\n")

    assert merged == X_X_Y + "- z\n"


def test_merging_what_is_too_costly_to_compare_declines() -> None:
    base = _text(CYCLE)

    assert timed(merge_changes, base, CYCLE_SHUFFLED, base + "- z\n") is None


def test_merging_too_many_lines_declines() -> None:
    base = _text(f"base {i}" for i in range(MAX_LINES + 1))
    theirs = _text(f"theirs {i}" for i in range(MAX_LINES + 1))

    assert timed(merge_changes, base, theirs, base + "- z\n") is None


def test_many_separate_changes_on_both_sides_combine() -> None:
    base = [f"- fact {i}" if i % 3 else "" for i in range(MAX_LINES)]
    theirs = [f"{line} (theirs)" if i % 40 == 1 else line for i, line in enumerate(base)]
    yours = [f"{line} (yours)" if i % 40 == 21 else line for i, line in enumerate(base)]
    expected = [
        f"{line} (theirs)" if i % 40 == 1 else f"{line} (yours)" if i % 40 == 21 else line
        for i, line in enumerate(base)
    ]

    merged = timed(merge_changes, _text(base), _text(theirs), _text(yours))

    assert merged == _text(expected)


@pytest.mark.parametrize(
    ("theirs", "yours"),
    [
        ({10: "theirs"}, {10: "yours"}),
        ({10: "theirs", 4_000: "theirs"}, {20: "yours", 4_000: "yours"}),
    ],
)
def test_changes_to_the_same_line_of_a_long_document_conflict(theirs, yours) -> None:
    base = [f"- fact {i}" for i in range(MAX_LINES)]

    def changed(edits):
        return _text(edits.get(i, line) for i, line in enumerate(base))

    assert timed(merge_changes, _text(base), changed(theirs), changed(yours)) is None


# --- components/diff.html ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("diff", "shown"),
    [
        (None, "These versions are too large to compare line by line."),
        ([], "No differences."),
        ([DiffLine("added", "<b>new</b>", None, 1)], "&lt;b&gt;new&lt;/b&gt;"),
    ],
)
def test_the_diff_partial_says_which_it_is(diff, shown) -> None:
    html = render_to_string(
        "memory_ui/components/diff.html#diff",
        {"diff": diff, "old_label": "old", "new_label": "new"},
    )

    assert shown in html
    assert ("too large" in html) == (diff is None)
    assert ("No differences" in html) == (diff == [])
