"""Bounding the work hostile text causes (memory is written by agents; imports and drafts
are pasted, up to a MiB): a call must finish within a CPU-time deadline."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

# Generous: each bounded case takes well under half a second now.
DEADLINE_SECONDS = 2.0


def timed(call: Callable[..., Any], *args: Any, deadline: float = DEADLINE_SECONDS) -> Any:
    """`call(*args)`, failing unless it took under `deadline` seconds of CPU time."""
    # CPU time of this thread: the work done, whatever else the machine is running.
    started = time.thread_time()
    result = call(*args)
    elapsed = time.thread_time() - started
    assert elapsed < deadline, f"took {elapsed:.1f} s"
    return result
