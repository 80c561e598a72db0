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
from django.core.cache.backends.base import DEFAULT_TIMEOUT
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

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._either(
            lambda: super(RedisWithDatabaseFallback, self).add(key, value, timeout, version),
            lambda: self._durable.add(key, value, timeout, version),
        )

    def get(self, key, default=None, version=None):
        return self._either(
            lambda: super(RedisWithDatabaseFallback, self).get(key, default, version),
            lambda: self._durable.get(key, default, version),
        )

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._either(
            lambda: super(RedisWithDatabaseFallback, self).set(key, value, timeout, version),
            lambda: self._durable.set(key, value, timeout, version),
        )

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._either(
            lambda: super(RedisWithDatabaseFallback, self).touch(key, timeout, version),
            lambda: self._durable.touch(key, timeout, version),
        )

    def delete(self, key, version=None):
        return self._either(
            lambda: super(RedisWithDatabaseFallback, self).delete(key, version),
            lambda: self._durable.delete(key, version),
        )

    def get_many(self, keys, version=None):
        return self._either(
            lambda: super(RedisWithDatabaseFallback, self).get_many(keys, version),
            lambda: self._durable.get_many(keys, version),
        )

    def has_key(self, key, version=None):
        return self._either(
            lambda: super(RedisWithDatabaseFallback, self).has_key(key, version),
            lambda: self._durable.has_key(key, version),
        )

    def incr(self, key, delta=1, version=None):
        return self._either(
            lambda: super(RedisWithDatabaseFallback, self).incr(key, delta, version),
            lambda: self._durable.incr(key, delta, version),
        )

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return self._either(
            lambda: super(RedisWithDatabaseFallback, self).set_many(data, timeout, version),
            lambda: self._durable.set_many(data, timeout, version),
        )

    def delete_many(self, keys, version=None):
        return self._either(
            lambda: super(RedisWithDatabaseFallback, self).delete_many(keys, version),
            lambda: self._durable.delete_many(keys, version),
        )
