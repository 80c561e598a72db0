"""Health probes for load balancers and orchestrators, answered before anything else.

- `/livez`: the process answers (liveness: restart it if not).
- `/readyz` (and `/healthz`, its older name): this instance takes traffic, that is it is
  not shutting down (readiness). After SIGTERM it answers 503 while gunicorn keeps serving
  for PORTAL_DRAIN_SECONDS (deploy/gunicorn.conf.py), so load balancers stop sending new
  requests before the workers stop taking them.

Neither looks at the database or Redis: every instance shares them, so an outage would
take all instances out of rotation (or restart them) at once, and the whole site would
answer "no server available" instead of the pages that still work and a clear 503 for the
rest (portal/outages.py). Their health is a gauge and a log line instead
(portal/health.py).

They run in MIDDLEWARE before ALLOWED_HOSTS (a probe addressed by pod IP carries that IP
as its Host), telemetry, the https redirect, sessions and the request log, after only the
request id, and reveal nothing: "ok" or "draining".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import add_never_cache_headers

LIVE_PATHS = frozenset({"/livez"})
READY_PATHS = frozenset({"/readyz", "/healthz"})

# Set when this process (not under gunicorn) is told to stop; gunicorn's master marks every
# worker at once through the file named by PORTAL_DRAIN_FILE instead.
_draining = False


def start_draining() -> None:
    """From now on /readyz answers 503 in this process and, when PORTAL_DRAIN_FILE is set,
    in every process sharing that file (the workers of one gunicorn)."""
    global _draining
    _draining = True
    if drain_file := os.environ.get("PORTAL_DRAIN_FILE"):
        Path(drain_file).touch()


def draining() -> bool:
    drain_file = os.environ.get("PORTAL_DRAIN_FILE")
    return _draining or bool(drain_file and os.path.exists(drain_file))


def readiness() -> tuple[int, dict[str, str]]:
    if draining():
        return 503, {"status": "draining"}
    return 200, {"status": "ok"}


def _answer(status: int, body: dict[str, str]) -> HttpResponse:
    response = JsonResponse(body, status=status)
    add_never_cache_headers(response)
    # Not a "Service Unavailable" line from Django per probe while draining: gunicorn
    # logged the drain once, and the access log has each probe.
    response._has_been_logged = True  # the flag django.utils.log.log_response checks
    return response


def probes(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable:
    """Middleware: answers the probe paths (GET or HEAD, any Host) itself."""

    def middleware(request: HttpRequest) -> HttpResponse:
        if request.method in ("GET", "HEAD"):
            if request.path in LIVE_PATHS:
                return _answer(200, {"status": "ok"})
            if request.path in READY_PATHS:
                return _answer(*readiness())
        return get_response(request)

    return middleware
