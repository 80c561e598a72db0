"""What the sources' clients take from the work in progress, without importing web code
(the ground floor: any source's client may use it; CoreAPI's does).

- `correlation_id`: the id of the portal request being served; every CoreAPI call made for
  it sends this as X-Correlation-ID, so the portal's log lines and CoreAPI's tie together.
  Whoever serves a request sets it (portal/requestid.py); threads that fan calls out run in
  a copy of the caller's context (`contextvars.copy_context`), so they send it too.
- `call_observers`: functions told about every HTTP exchange with CoreAPI (for metrics):
  method, the endpoint path below the instance (`/memory/append`, never a query or an id
  of a user), the outcome (status code or exception name) and the seconds it took.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

correlation_id: ContextVar[str | None] = ContextVar("coreapi_correlation_id", default=None)

CallObserver = Callable[[str, str, str, float], None]
call_observers: list[CallObserver] = []
