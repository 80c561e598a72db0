"""Line diffs of two markdown documents, for conflict and import previews."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class DiffLine:
    kind: Literal["same", "removed", "added", "gap"]
    text: str
    old_number: int | None
    new_number: int | None


def diff_lines(old: str, new: str, context: int = 3) -> list[DiffLine]:
    """Changed lines with `context` lines around them; "gap" marks skipped unchanged lines."""
    a, b = old.splitlines(), new.splitlines()
    lines: list[DiffLine] = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context):
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
