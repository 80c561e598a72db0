"""How long the calls to memory sources may take, all together, for one portal request,
and how many run at once (`fan_out`).

The web layer opens `deadline(seconds)` around each request; every call to a memory source
made within it, retries and backoff included, fits in what is left. A request therefore
holds a worker thread for at most about that long, however slow a source is. Worker threads
started for a request (`fan_out`) copy the context, so they share its deadline.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings

_ENDS_AT: ContextVar[float | None] = ContextVar("coreapi_deadline", default=None)


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """CoreAPI calls made inside this block end, at the latest, `seconds` from now; a
    deadline inside another never outlasts it."""
    ends_at = time.monotonic() + seconds
    outer = _ENDS_AT.get()
    token = _ENDS_AT.set(ends_at if outer is None else min(ends_at, outer))
    try:
        yield
    finally:
        _ENDS_AT.reset(token)


def remaining() -> float | None:
    """Seconds left for CoreAPI calls, or None when no deadline is set (scripts, tests)."""
    ends_at = _ENDS_AT.get()
    return None if ends_at is None else ends_at - time.monotonic()


def fan_out[T, R](
    step: Callable[[T], R], items: Iterable[T], *, at_once: int | None = None
) -> list[R]:
    """`step` over `items`, a few CoreAPI calls at a time (`at_once`, else
    PORTAL_COREAPI_FAN_OUT), results in order. Each runs in a copy of the caller's context,
    so the request's CoreAPI deadline holds for it too."""
    items = list(items)
    if len(items) <= 1:
        return [step(item) for item in items]
    workers = min(len(items), at_once or settings.PORTAL_COREAPI_FAN_OUT)
    contexts = [contextvars.copy_context() for _ in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda ctx, item: ctx.run(step, item), contexts, items))
