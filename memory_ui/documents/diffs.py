"""Line diffs of two markdown documents (conflict and import previews) and the three-way
merge behind "Re-apply my changes onto the new version".

Both compare text that agents wrote or people pasted, up to a MiB of it, with difflib's
SequenceMatcher, which takes quadratic to cubic time on repetitive lines: 2,000 lines
alternating "- x" and "- y" against 2,000 lines repeating "- x", "- x", "- y" took 31 s.
So every comparison here is bounded:

- at most MAX_LINES lines a side take part (past that, the lines both sides start and end
  with are set aside first, so appending to or editing one place of a long document still
  compares);
- documents over EXACT_LINES lines are matched with difflib's autojunk heuristic, which
  makes repetitive text cheap; shorter ones get the exact match first, as before;
- the matcher's work is counted as it goes, and a comparison that would take more than
  MATCH_BUDGET steps is abandoned.

Then `diff_lines` returns None ("too large to compare") and `merge_changes` declines, as
it does when both sides changed the same lines.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Literal

MAX_LINES = 5_000
# Up to this many lines a side, the exact match (autojunk off) is tried first, with half
# the budget. Longer documents nearly always repeat some line often (blank lines), which
# makes the exact match costly, so they get difflib's autojunk heuristic straight away.
EXACT_LINES = 1_000
# Work allowed for one comparison, in steps of 50-85 ns (see _BoundedMatcher): a quarter of
# a second at most.
MATCH_BUDGET = 3_000_000
_STEPS_PER_LINE = 4  # find_longest_match's outer loop costs about 4 times its inner loop

Opcode = tuple[str, int, int, int, int]


class _OverBudget(Exception):
    pass


class _BoundedMatcher(difflib.SequenceMatcher[str]):
    """A SequenceMatcher that gives up (_OverBudget) rather than take more than `budget` steps.

    find_longest_match(alo, ahi, …) loops over the lines a[alo:ahi] and, for each, over the
    positions in b where that line occurs (b2j), so the work of a call is known before it
    starts: prefix sums over `a` give it in constant time.
    """

    def __init__(self, a: list[str], b: list[str], *, autojunk: bool, budget: int) -> None:
        super().__init__(None, a, b, autojunk=autojunk)
        self.budget = budget
        steps = (_STEPS_PER_LINE + len(self.b2j.get(line, ())) for line in a)
        self._steps = [0, *accumulate(steps)]

    def find_longest_match(
        self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None
    ) -> difflib.Match:
        ahi = len(self.a) if ahi is None else ahi
        bhi = len(self.b) if bhi is None else bhi
        self.budget -= self._steps[ahi] - self._steps[alo] + _STEPS_PER_LINE
        if self.budget < 0:
            raise _OverBudget
        return super().find_longest_match(alo, ahi, blo, bhi)


class _Opcodes(difflib.SequenceMatcher[str]):
    """difflib's grouping into hunks (get_grouped_opcodes), over opcodes computed here."""

    def __init__(self, opcodes: list[Opcode]) -> None:
        super().__init__()
        self._computed = opcodes

    def get_opcodes(self) -> list[Opcode]:
        return list(self._computed)


def _match(a: list[str], b: list[str]) -> list[Opcode] | None:
    # Autojunk leaves out lines that make up more than 1% of b (from 200 lines of b on),
    # such as blank lines or a repeated bullet: far less work, a little less exact. Without
    # such lines, it is the exact match.
    matcher = _BoundedMatcher(a, b, autojunk=True, budget=MATCH_BUDGET)
    if matcher.bpopular and max(len(a), len(b)) <= EXACT_LINES:
        exact = _BoundedMatcher(a, b, autojunk=False, budget=MATCH_BUDGET // 2)
        try:
            return exact.get_opcodes()
        except _OverBudget:
            matcher.budget = MATCH_BUDGET - MATCH_BUDGET // 2
    try:
        return matcher.get_opcodes()
    except _OverBudget:
        return None


def _opcodes(a: list[str], b: list[str]) -> list[Opcode] | None:
    """difflib opcodes turning `a` into `b`, or None when comparing them costs too much."""
    prefix = suffix = 0
    if len(a) > MAX_LINES or len(b) > MAX_LINES:
        # Only for long documents: difflib's own matching is more natural where lines
        # repeat (see the caution in find_longest_match), so shorter ones keep it.
        shorter = min(len(a), len(b))
        while prefix < shorter and a[prefix] == b[prefix]:
            prefix += 1
        while suffix < shorter - prefix and a[-1 - suffix] == b[-1 - suffix]:
            suffix += 1
    middle_a, middle_b = a[prefix : len(a) - suffix], b[prefix : len(b) - suffix]
    if len(middle_a) > MAX_LINES or len(middle_b) > MAX_LINES:
        return None
    middle = _match(middle_a, middle_b)
    if middle is None:
        return None
    opcodes: list[Opcode] = [("equal", 0, prefix, 0, prefix)] if prefix else []
    opcodes += [
        (tag, i1 + prefix, i2 + prefix, j1 + prefix, j2 + prefix) for tag, i1, i2, j1, j2 in middle
    ]
    if suffix:
        opcodes.append(("equal", len(a) - suffix, len(a), len(b) - suffix, len(b)))
    return opcodes


# --- Diffs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffLine:
    kind: Literal["same", "removed", "added", "gap"]
    text: str
    old_number: int | None
    new_number: int | None


def diff_lines(old: str, new: str, context: int = 3) -> list[DiffLine] | None:
    """Changed lines with `context` lines around them; "gap" marks skipped unchanged lines.

    An empty list when nothing changed; None when the documents are too large or too
    repetitive to compare line by line in reasonable time.
    """
    a, b = old.splitlines(), new.splitlines()
    opcodes = _opcodes(a, b)
    if opcodes is None:
        return None
    lines: list[DiffLine] = []
    for group in _Opcodes(opcodes).get_grouped_opcodes(context):
        if lines:
            lines.append(DiffLine("gap", "", None, None))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines.extend(DiffLine("same", a[i], i + 1, j1 + i - i1 + 1) for i in range(i1, i2))
                continue
            if tag in ("replace", "delete"):
                lines.extend(DiffLine("removed", a[i], i + 1, None) for i in range(i1, i2))
            if tag in ("replace", "insert"):
                lines.extend(DiffLine("added", b[j], None, j + 1) for j in range(j1, j2))
    return lines


# --- Three-way merge ---------------------------------------------------------------------

_LINES = re.compile(r"[^\n]*\n|[^\n]+")

Change = tuple[int, int, tuple[str, ...]]


def merge_changes(base: str, theirs: str, yours: str) -> str | None:
    """A line-based three-way merge: both sides' changes to `base` applied together, or
    None when they touch the same lines (then a person has to decide), or when the
    documents are too large or too repetitive to compare."""
    base_lines = _LINES.findall(base)
    their_changes = _changes(base_lines, _LINES.findall(theirs))
    your_changes = _changes(base_lines, _LINES.findall(yours))
    if their_changes is None or your_changes is None:
        return None
    if _conflict(their_changes, your_changes):
        return None
    merged: list[str] = []
    position = 0
    for start, end, lines in sorted({*their_changes, *your_changes}):
        merged += base_lines[position:start]
        merged += lines
        position = end
    merged += base_lines[position:]
    return "".join(merged)


def _changes(base: list[str], other: list[str]) -> list[Change] | None:
    opcodes = _opcodes(base, other)
    if opcodes is None:
        return None
    return [(i1, i2, tuple(other[j1:j2])) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]


def _conflict(theirs: list[Change], yours: list[Change]) -> bool:
    """Whether a change on one side overlaps a different change on the other.

    Each side's changes are in order and apart (difflib puts unchanged lines between
    them), so one pass meets every overlapping pair: whichever change ends first cannot
    overlap anything after the other side's current change.
    """
    i = j = 0
    while i < len(theirs) and j < len(yours):
        if theirs[i] != yours[j] and _overlap(theirs[i], yours[j]):
            return True
        if theirs[i][1] <= yours[j][1]:
            i += 1
        else:
            j += 1
    return False


def _overlap(a: Change, b: Change) -> bool:
    # Two insertions at one place, or ranges sharing a line, or an insertion inside a range.
    return a[0] == b[0] or (a[0] < b[1] and b[0] < a[1])
