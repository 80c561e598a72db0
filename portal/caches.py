"""Redis as the portal's cache, with the database cache standing in while Redis is away.

Nothing the portal keeps in Redis is the only copy of anything: agent lists and names are
fetched again, and sessions always live in the database (portal/settings.py). So a Redis
outage must not fail requests: every operation that Redis cannot answer goes to the
database cache ("durable") instead, and for PORTAL_REDIS_RETRY_SECONDS after a failure
Redis is not tried at all, so a Redis that times out costs one timeout, not one per call.
Single-use keys (cache.add) keep working in the database meanwhile. The outage itself is
reported by portal/health.py (gauge and log line), not per call.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

logger = logging.getLogger("portal.caches")


class RedisWithDatabaseFallback(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._retry_at = 0.0
        self._lock = threading.Lock()

    def _either(self, redis_call: Callable[[], Any], fallback_call: Callable[[], Any]) -> Any:
        if time.monotonic() >= self._retry_at:
            try:
                return redis_call()
            except RedisError as exc:
                with self._lock:
                    if time.monotonic() >= self._retry_at:
                        logger.warning(
                            "Redis failed (%s); the database cache stands in",
                            type(exc).__name__,
                        )
                    self._retry_at = time.monotonic() + settings.PORTAL_REDIS_RETRY_SECONDS
        return fallback_call()

    def redis_ok(self) -> bool:
        """Whether Redis answers a ping now (portal/health.py), whatever the back-off."""
        try:
            return bool(self._cache.get_client(write=True).ping())
        except RedisError:
            return False

    @property
    def _durable(self):
        return caches["durable"]


def _redis_or_database(operation: str) -> Callable[..., Any]:
    """The cache operation on Redis, or on the database cache while Redis is away."""

    def call(self: RedisWithDatabaseFallback, *args: Any, **kwargs: Any) -> Any:
        return self._either(
            lambda: getattr(super(RedisWithDatabaseFallback, self), operation)(*args, **kwargs),
            lambda: getattr(self._durable, operation)(*args, **kwargs),
        )

    call.__name__ = call.__qualname__ = operation
    return call


# Every operation of Django's cache API that reads or writes entries.
for _operation in (
    "add",
    "get",
    "set",
    "touch",
    "delete",
    "get_many",
    "has_key",
    "incr",
    "set_many",
    "delete_many",
):
    setattr(RedisWithDatabaseFallback, _operation, _redis_or_database(_operation))
