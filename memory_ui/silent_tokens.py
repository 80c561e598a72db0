"""Access tokens msal gave silently, remembered in the worker process so that most requests
find the session's delegated token with a hash and a dictionary lookup instead of building
an msal application and parsing the session's token cache (`memory_ui.auth.coreapi_token`;
docs/performance.md)."""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any

from memory_ui.identity import Identity

# msal hands out a cached access token until 5 minutes before it expires (or until its
# refresh_on, when the IdP gave a refresh_in); the remembered token stops being used at that point.
_EXPIRY_MARGIN_SECONDS = 300


class SilentTokens:
    """Access tokens msal gave silently, keyed by a hash of the session's serialized msal
    cache and the account: a changed cache (a refresh, another sign-in, a cache removed
    or aged by hand) is a different key, so msal is asked again. Only the access token
    and its deadline are kept, never the cache with its refresh token; a bounded number,
    all forgotten when full (a miss costs one msal call)."""

    def __init__(self, limit: int = 4096) -> None:
        self._tokens: dict[bytes, tuple[str, float]] = {}
        self._limit = limit
        self._lock = threading.Lock()

    @staticmethod
    def key(serialized: str, identity: Identity) -> bytes:
        account = f"{identity.upn}\0{identity.home_account_id}\0"
        return hashlib.sha256((account + serialized).encode()).digest()

    def get(self, key: bytes) -> str | None:
        found = self._tokens.get(key)
        if found is None or found[1] <= time.monotonic():
            return None
        return found[0]

    def put(self, key: bytes, result: dict[str, Any]) -> None:
        try:
            seconds = int(result.get("expires_in") or 0) - _EXPIRY_MARGIN_SECONDS
            if result.get("refresh_on"):  # epoch seconds: when msal refreshes early
                seconds = min(seconds, int(result["refresh_on"]) - int(time.time()))
        except (TypeError, ValueError):
            return
        if seconds <= 0:
            return
        with self._lock:
            if len(self._tokens) >= self._limit:
                self._tokens.clear()
            self._tokens[key] = (result["access_token"], time.monotonic() + seconds)

    def clear(self) -> None:
        with self._lock:
            self._tokens.clear()
