"""HTTP mechanics shared by the portal's outbound clients (each source package's `client`):
the pooled session, timeouts cut to a deadline, the retry loop
and its backoff. Each client keeps its own error types and messages; this module raises
none of them, it tells the client which case it is in (callables the client supplies).

It imports nothing from memory_ui (tests/unit/test_layers.py), so both clients can use it
without depending on each other.
"""

from __future__ import annotations

from collections.abc import Callable

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import NewConnectionError

RETRYABLE_STATUSES = frozenset({502, 503, 504})
# Not worth starting an exchange with less than this left of the deadline.
MIN_ATTEMPT_SECONDS = 0.25


def pooled_session(pool_size: int, base_url: str) -> requests.Session:
    """A session with one connection pool of `pool_size` per host, for one base URL."""
    session = requests.Session()
    # The environment is read once, here: with trust_env requests would look for a .netrc
    # file and read the proxy variables on every call (a profiled tenth of a call's CPU),
    # and a .netrc entry for the service's host would replace the Authorization header.
    session.proxies = requests.utils.get_environ_proxies(base_url)
    session.trust_env = False
    # max_retries=0: urllib3 must never resend on its own; the client decides (reads only).
    adapter = HTTPAdapter(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


def may_have_arrived(exc: requests.RequestException) -> bool:
    """Whether a write that failed this way may still have been applied: the request was
    sent (or may have been) and no answer came back. Failing to connect sends nothing."""
    if isinstance(exc, requests.exceptions.ConnectTimeout | requests.exceptions.SSLError):
        return False
    if isinstance(exc, requests.ConnectionError):
        reason = getattr(exc.args[0], "reason", exc.args[0]) if exc.args else None
        return not isinstance(reason, NewConnectionError | ConnectionRefusedError)
    return True


def is_transient(exc: requests.RequestException) -> bool:
    """Whether a read that failed this way is worth retrying."""
    # A certificate problem will not go away on retry; a dropped connection may. A read
    # timeout means the service is slow, and a retry would be as slow: the request's
    # deadline is better spent telling the user.
    if isinstance(exc, requests.exceptions.SSLError | requests.exceptions.ReadTimeout):
        return False
    return isinstance(
        exc, requests.ConnectionError | requests.Timeout | requests.exceptions.ChunkedEncodingError
    )


def timeout_within(timeout: tuple[float, float], left: float | None) -> tuple[float, float] | None:
    """The (connect, read) timeouts shortened to `left` seconds of a deadline (None: no
    deadline); None when too little is left to start an exchange (the caller refuses)."""
    if left is None:
        return timeout
    if left < MIN_ATTEMPT_SECONDS:
        return None
    connect, read = timeout
    return min(connect, left), min(read, left)


def exchange(
    send: Callable[[int], requests.Response],
    *,
    retries: int,
    write: bool,
    outcome_unknown: Callable[[requests.RequestException], Exception],
    unavailable: Callable[[requests.RequestException], Exception],
    pause: Callable[[int], None],
) -> requests.Response:
    """`send(attempt)` tried up to `retries` more times on transient failures and 502/503/504.

    Returns the first response that is not retryable, or the last one; a transport
    failure raises `outcome_unknown(exc)` for a write that may have been applied, else
    `unavailable(exc)` once retries are spent or the failure is not transient. `pause`
    waits before attempt n + 1 (the client's backoff). Writes get `retries=0`.
    """
    attempt = 1
    while True:
        try:
            response = send(attempt)
        except requests.RequestException as exc:
            if write and may_have_arrived(exc):
                raise outcome_unknown(exc) from exc
            if attempt > retries or not is_transient(exc):
                raise unavailable(exc) from exc
        else:
            if attempt > retries or response.status_code not in RETRYABLE_STATUSES:
                return response
        pause(attempt)
        attempt += 1
