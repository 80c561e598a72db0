"""Health probes for load balancers and orchestrators, answered before anything else.

- `/livez`: the process answers (liveness: restart it if not). Touches nothing else, so a
  database or Redis outage never gets healthy pods restarted.
- `/readyz` (and `/healthz`, its older name): the database and the cache answer, and the
  process is not shutting down (readiness: send it traffic). After SIGTERM it answers 503
  while gunicorn keeps serving for PORTAL_DRAIN_SECONDS (deploy/gunicorn.conf.py), so load
  balancers stop sending new requests before the workers stop taking them.

They run first in MIDDLEWARE, ahead of ALLOWED_HOSTS (a probe addressed by pod IP carries
that IP as its Host), the https redirect, sessions and the request log, and reveal no
configuration: only "ok", "unavailable" or "draining" per check.
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Callable
from pathlib import Path

from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import add_never_cache_headers

logger = logging.getLogger("portal.probes")

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


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:  # any driver error means "not ready"; the type goes to the log
        logger.warning("Readiness: the database is unavailable", exc_info=True)
        return False
    return True


def _cache_ok() -> bool:
    # A round trip, not a ping: sign-in and every page need the cache to take writes.
    probe = secrets.token_hex(8)
    try:
        cache.set("readyz", probe, 30)
        return cache.get("readyz") is not None
    except Exception:  # Redis and database errors alike
        logger.warning("Readiness: the cache is unavailable", exc_info=True)
        return False


def readiness() -> tuple[int, dict[str, str]]:
    if draining():
        return 503, {"status": "draining"}
    checks = {
        "database": "ok" if _database_ok() else "unavailable",
        "cache": "ok" if _cache_ok() else "unavailable",
    }
    ready = all(value == "ok" for value in checks.values())
    return (200 if ready else 503), {"status": "ok" if ready else "error", **checks}


def _answer(status: int, body: dict[str, str]) -> HttpResponse:
    response = JsonResponse(body, status=status)
    add_never_cache_headers(response)
    # Not another "Service Unavailable" line from Django per probe while draining: a
    # failed check has been logged above with its cause.
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
