"""The IdP's in-memory state: pending sign-ins, authorization codes, refresh tokens.

The server is threaded, so every table guards itself with a lock. Nothing survives a
restart, which only means users sign in again.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from devstack.idp.oauth import Scopes

# A spent secret is remembered at least this long, so that a replay is recognised as
# reuse (and its grant revoked) rather than reported as an unknown value.
REUSE_MEMORY = 3600.0


class Outcome(Enum):
    VALID = "valid"
    EXPIRED = "expired"
    REUSED = "reused"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Redemption[T]:
    outcome: Outcome
    value: T | None = None


@dataclass
class OneTimeTable[T]:
    """Random secrets, each redeemable once before it expires.

    Only a hash of each secret is kept, so the table never holds a usable credential.
    """

    clock: Callable[[], float] = time.monotonic
    _live: dict[str, tuple[float, T]] = field(default_factory=dict)
    _spent: dict[str, tuple[float, T]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def issue(self, value: T, lifetime: float) -> str:
        """A new secret for `value`; lifetime 0 makes it expire at once (tests)."""
        secret = secrets.token_urlsafe(32)
        with self._lock:
            self._purge()
            self._live[_digest(secret)] = (self.clock() + lifetime, value)
        return secret

    def redeem(self, secret: str) -> Redemption[T]:
        key = _digest(secret)
        with self._lock:
            now = self.clock()
            if key in self._spent:
                return Redemption(Outcome.REUSED, self._spent[key][1])
            entry = self._live.pop(key, None)
            if entry is None:
                return Redemption(Outcome.UNKNOWN)
            expires, value = entry
            if now >= expires:
                return Redemption(Outcome.EXPIRED)
            self._spent[key] = (max(expires, now + REUSE_MEMORY), value)
            return Redemption(Outcome.VALID, value)

    def lookup(self, secret: str) -> Redemption[T]:
        """Check a secret without spending it (refresh tokens: Entra keeps them usable)."""
        key = _digest(secret)
        with self._lock:
            entry = self._live.get(key)
            if entry is None:
                return Redemption(Outcome.UNKNOWN)
            expires, value = entry
            if self.clock() >= expires:
                return Redemption(Outcome.EXPIRED)
            return Redemption(Outcome.VALID, value)

    def revoke(self, matches: Callable[[T], bool]) -> None:
        with self._lock:
            for key in [k for k, (_, value) in self._live.items() if matches(value)]:
                del self._live[key]

    def _purge(self) -> None:
        now = self.clock()
        for table in (self._live, self._spent):
            for key in [k for k, (expires, _) in table.items() if now >= expires]:
                del table[key]


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class PendingAuthorization:
    """A validated authorize request waiting for the user to be picked."""

    client_id: str
    redirect_uri: str
    response_mode: str
    scopes: Scopes
    state: str | None
    nonce: str | None
    code_challenge: str
    login_hint: str | None


@dataclass(frozen=True)
class Grant:
    """What a user allowed a client: shared by the code and every refresh token after it.

    `family` ties them together so that replaying any of them revokes them all.
    """

    client_id: str
    upn: str
    scopes: Scopes
    family: str


@dataclass(frozen=True)
class IssuedCode:
    grant: Grant
    redirect_uri: str
    code_challenge: str
    nonce: str | None


@dataclass
class Store:
    pending: OneTimeTable[PendingAuthorization] = field(default_factory=OneTimeTable)
    codes: OneTimeTable[IssuedCode] = field(default_factory=OneTimeTable)
    refresh_tokens: OneTimeTable[Grant] = field(default_factory=OneTimeTable)

    def revoke_family(self, family: str) -> None:
        self.refresh_tokens.revoke(lambda grant: grant.family == family)
