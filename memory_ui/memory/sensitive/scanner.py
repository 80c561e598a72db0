"""The state of one scan: the findings so far (disjoint, the first step to claim a span
keeps it) and the budget each library call is paid from."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps
from typing import Literal

from memory_ui.memory.sensitive.excerpts import excerpt
from memory_ui.memory.sensitive.kinds import Limits, Match


class Exhausted(Exception):
    """The budget ran out: stop this step, keep what was found."""


@dataclass
class Scanner:
    text: str
    limits: Limits
    # ASCII letters lower-cased, same length and offsets: word searches run on this.
    lower: str = ""
    exhausted: bool = False
    _spans: list[tuple[int, int, str]] = field(default_factory=list)  # sorted, disjoint
    _spent: dict[str, int] = field(default_factory=dict)

    def check(self, pool: Literal["checks", "phones", "keywords"] = "checks") -> None:
        """Pay for one library call from `pool`."""
        spent = self._spent[pool] = self._spent.get(pool, 0) + 1
        if spent > getattr(self.limits, pool):
            self.exhausted = True
            raise Exhausted

    def claimed(self, start: int, end: int) -> bool:
        """Some finding already covers part of [start, end)."""
        i = bisect.bisect_left(self._spans, (end,))
        return i > 0 and self._spans[i - 1][1] > start

    def add(self, start: int, end: int, kind: str) -> None:
        """A finding, unless an earlier (more specific) step found something there."""
        if start >= end or self.claimed(start, end):
            return
        if len(self._spans) >= self.limits.findings:
            self.exhausted = True
            raise Exhausted
        bisect.insort(self._spans, (start, end, kind))

    def matches(self) -> list[Match]:
        return [
            Match(kind, s, e, excerpt(self.text, s, e, self._spans)) for s, e, kind in self._spans
        ]


def step[**P](function: Callable[P, None]) -> Callable[P, None]:
    """A step stops where the budget runs out, keeping what it found; the later steps
    still run, and stop at their first library call (the word lists need none)."""

    @wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            function(*args, **kwargs)
        except Exhausted:
            pass

    return run


_CONTEXT_CHARS = 48


def named_nearby(pattern: re.Pattern[str], scan: Scanner, start: int) -> bool:
    """A word of `pattern` shortly before `start`, on the same line."""
    line_start = scan.text.rfind("\n", 0, start) + 1
    return bool(pattern.search(scan.lower, max(line_start, start - _CONTEXT_CHARS), start))
