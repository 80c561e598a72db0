"""The one transport to MemoryOS (seed 002; docs/memoryos.md).

The portal calls it with its tenant's API key (`Authorization: ApiKey mem_live_…`, from
the secrets store through settings: `api_key` is a callable so a rotated key is read on
the next call) and names the person by `external_user_id`, which the caller makes from
the verified identity (types.external_user_id_for).

Faults: connect and read timeouts on every call, cut to what is left of the portal
request's deadline (`remaining`, memory_ui.budget.remaining in the portal). A retrieval
is a read and is retried on failures to connect, dropped connections and 502/503/504;
feedback is sent once, since a retry after a lost answer could report a correction twice.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable
from typing import Any

import requests

from memory_ui.sources.memoryos.errors import (
    MemoryOsError,
    MemoryOsOutcomeUnknown,
    MemoryOsRefused,
    MemoryOsUnavailable,
    parse_error,
)
from memory_ui.sources.memoryos.types import FeedbackReceipt, Retrieval
from memory_ui.transport import MIN_ATTEMPT_SECONDS, exchange, pooled_session, timeout_within

logger = logging.getLogger("memory_ui.sources.memoryos")

RETRIEVE = "/v1/memories/retrieve"
FEEDBACK = "/v1/memories/retrieval-feedback"
LIMIT_MAX = 50  # seed 002
DEFAULT_CONNECT_TIMEOUT = 3.05
DEFAULT_READ_TIMEOUT = 10.0
DEFAULT_RETRIES = 2


class MemoryOsClient:
    """Calls to one MemoryOS endpoint over one pooled session; safe to share."""

    def __init__(
        self,
        base_url: str,
        api_key: Callable[[], str],
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        backoff: float = 0.2,
        verify: bool | str = True,
        pool_size: int = 10,
        remaining: Callable[[], float | None] | None = None,
        session: requests.Session | None = None,
    ) -> None:
        if not base_url:
            raise ValueError("base_url is required")
        if retries < 0 or backoff < 0:
            raise ValueError("retries and backoff must not be negative")
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._timeout = (connect_timeout, read_timeout)
        self._retries = retries
        self._backoff = backoff
        self._verify = verify
        self._remaining = remaining
        self._owns_session = session is None
        self._session = session if session is not None else pooled_session(pool_size, self.base_url)

    def close(self) -> None:
        if self._owns_session:
            self._session.close()

    def retrieve(
        self,
        external_user_id: str,
        query: str,
        *,
        agent_id: str | None = None,
        limit: int = 10,
        format: str = "bullets",
        context_max_tokens: int | None = None,
    ) -> Retrieval:
        """What the service gives `agent_id` about the person for `query`. It moves the
        returned memories' last_accessed and counts against quota: call it only when a
        person asks."""
        if not 1 <= limit <= LIMIT_MAX:
            raise ValueError(f"limit must be between 1 and {LIMIT_MAX}")
        body = _fields(
            external_user_id=external_user_id,
            query=query,
            agent_id=agent_id,
            limit=limit,
            format=format,
            context_max_tokens=context_max_tokens,
        )
        data = self._json(RETRIEVE, body, read=True)
        return _parsed(lambda: Retrieval.from_json(data))

    def report_correction(
        self, retrieval_id: str, memory_id: str, correction: str, metadata: dict[str, str]
    ) -> FeedbackReceipt:
        """`user_corrected` feedback on one memory of a retrieval: the service queues a
        re-extraction (`correction_job_id`); nothing is corrected yet."""
        if not correction.strip():
            raise ValueError("a correction must not be empty")
        body = {
            "retrieval_id": retrieval_id,
            "outcome": "user_corrected",
            "used_memory_ids": [memory_id],
            "correction": correction,
            "metadata": metadata,
        }
        data = self._json(FEEDBACK, body, read=False)
        return _parsed(lambda: FeedbackReceipt.from_json(data))

    def _json(self, path: str, body: dict[str, Any], *, read: bool) -> Any:
        response = self._send(path, body, read)
        try:
            return response.json()
        except ValueError as exc:
            raise MemoryOsError(status=response.status_code, detail="not JSON") from exc

    def _send(self, path: str, body: dict[str, Any], read: bool) -> requests.Response:
        headers = {
            "Authorization": f"ApiKey {self._api_key()}",
            "Accept": "application/json",
            "Content-Type": "application/json",
        }
        data = json.dumps(body).encode("utf-8")

        def send(attempt: int) -> requests.Response:
            return self._session.post(
                f"{self.base_url}{path}",
                data=data,
                headers=headers,
                timeout=self._timeout_within_deadline(),
                verify=self._verify,
                allow_redirects=False,  # a redirect would resend the API key elsewhere
            )

        response = exchange(
            send,
            retries=self._retries if read else 0,
            write=not read,
            outcome_unknown=lambda exc: MemoryOsOutcomeUnknown(detail=type(exc).__name__),
            unavailable=lambda exc: MemoryOsUnavailable(detail=type(exc).__name__),
            pause=self._pause,
        )
        if 200 <= response.status_code < 300:
            return response
        error = parse_error(response.status_code, response.content)
        if isinstance(error, MemoryOsRefused):
            logger.error("MemoryOS refused the portal's API key: %s", error.code)
        raise error

    def _timeout_within_deadline(self) -> tuple[float, float]:
        left = self._remaining() if self._remaining is not None else None
        timeout = timeout_within(self._timeout, left)
        if timeout is None:
            raise MemoryOsUnavailable(detail="deadline")
        return timeout

    def _pause(self, attempt: int) -> None:
        # Exponential backoff with full jitter, never past the request's deadline.
        delay = random.uniform(0, self._backoff * 2 ** (attempt - 1))
        left = self._remaining() if self._remaining is not None else None
        if left is not None:
            delay = min(delay, max(0.0, left - MIN_ATTEMPT_SECONDS))
        time.sleep(delay)


def _fields(**fields: Any) -> dict[str, Any]:
    """Body fields without the ones left out (None)."""
    return {name: value for name, value in fields.items() if value is not None}


def _parsed[T](parse: Callable[[], T]) -> T:
    try:
        return parse()
    except (KeyError, ValueError, TypeError) as exc:
        raise MemoryOsError(detail=str(exc)[:200]) from exc
