"""How long CoreAPI calls may take, all together, for one portal request.

The web layer opens `deadline(seconds)` around each request; every CoreAPI call made within
it, retries and backoff included, fits in what is left. A request therefore holds a worker
thread for at most about that long, however slow CoreAPI is. Worker threads started for a
request (`memory_ui.memory.operations.fan_out`) copy the context, so they share its deadline.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_ENDS_AT: ContextVar[float | None] = ContextVar("coreapi_deadline", default=None)


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """CoreAPI calls made inside this block end, at the latest, `seconds` from now."""
    token = _ENDS_AT.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _ENDS_AT.reset(token)


def remaining() -> float | None:
    """Seconds left for CoreAPI calls, or None when no deadline is set (scripts, tests)."""
    ends_at = _ENDS_AT.get()
    return None if ends_at is None else ends_at - time.monotonic()
