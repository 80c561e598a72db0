"""The health of the portal's shared dependencies (the database, Redis), for operators.

Not part of readiness: every instance shares them, so failing readiness on their account
takes the whole site out of rotation at once (the load balancer then answers "no server
available" for every page, even those that would work). Instead each process checks them
in a background thread every PORTAL_DEPENDENCY_CHECK_SECONDS, publishes the result as the
`portal_dependency_up` gauge in /metrics, and logs a line when a dependency goes away and
when it is back. What users see meanwhile: without Redis nothing (the cache falls back to
the database, portal/caches.py); without the database a 503 page (portal/outages.py).
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.core.cache import caches
from django.db import connections
from prometheus_client import Gauge

logger = logging.getLogger("portal.health")

DEPENDENCY_UP = Gauge(
    "portal_dependency_up",
    "Whether a shared dependency answered this process's last check (1) or not (0).",
    ["dependency"],
    multiprocess_mode="livemin",  # down if any live worker sees it down
)

_lock = threading.Lock()
_thread: threading.Thread | None = None
_state: dict[str, bool] = {}


def _database_ok() -> bool:
    connection = connections["default"]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:  # any driver error means "down"; the exception type goes to the log
        return False
    finally:
        # This thread's own connection: not kept between checks (one per process at most).
        connection.close()
    return True


def _redis_ok() -> bool:
    return caches["default"].redis_ok()


def checks() -> dict[str, bool]:
    """Each configured dependency and whether it answers now."""
    results = {"database": _database_ok()}
    if settings.REDIS_URL:
        results["redis"] = _redis_ok()
    return results


def record(results: dict[str, bool]) -> None:
    """The gauge, and a log line whenever a dependency changes state (or is down at first)."""
    for name, up in results.items():
        DEPENDENCY_UP.labels(name).set(1 if up else 0)
        before = _state.get(name)
        if up and before is False:
            logger.warning("Dependency available again: %s", name, extra={"dependency": name})
        elif not up and before is not False:
            logger.error("Dependency unavailable: %s", name, extra={"dependency": name})
        _state[name] = up


def _watch() -> None:
    while True:
        record(checks())
        time.sleep(settings.PORTAL_DEPENDENCY_CHECK_SECONDS)


def start_watching() -> None:
    """Starts this process's checker once (portal/wsgi.py: in each gunicorn worker)."""
    global _thread
    if _thread is not None or settings.PORTAL_DEPENDENCY_CHECK_SECONDS <= 0:
        return
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_watch, name="dependency-health", daemon=True)
            _thread.start()
