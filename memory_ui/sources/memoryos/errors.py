"""Every failure of a MemoryOS call (seed 002; docs/memoryos.md) as one exception hierarchy.

Chosen by HTTP status. The service's body (`{"error": {"code", "message"}, …}`, S1) is kept
on the exception (`code`, `detail`) for logs only: `message` is fixed text people can act
on, never the service's own words (they may quote the query or a memory).
"""

from __future__ import annotations

import json
from typing import Any

from memory_ui.sources.protocol import SourceError

MAX_ERROR_BODY_BYTES = 64 * 1024
MAX_DETAIL_CHARS = 1000


class MemoryOsError(SourceError):
    portal_status = 502
    default_message = "MemoryOS returned an unexpected response; try again later."

    def __init__(
        self,
        message: str | None = None,
        *,
        status: int | None = None,
        code: str | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(message or self.default_message, status=status)
        self.code = code
        self.detail = detail


class MemoryOsRefused(MemoryOsError):
    """401: the portal's own API key was refused; operators must act, people cannot."""

    default_message = "MemoryOS refused the portal's own access; contact support."


class MemoryOsNotFound(MemoryOsError):
    portal_status = 404
    default_message = "MemoryOS has no such retrieval."


class MemoryOsInvalid(MemoryOsError):
    portal_status = 400
    default_message = "MemoryOS refused the request as invalid."


class MemoryOsRateLimited(MemoryOsError):
    portal_status = 503
    default_message = "MemoryOS is busy; try again in a minute."


class MemoryOsUnavailable(MemoryOsError):
    portal_status = 503
    default_message = "MemoryOS is unavailable, try again."


class MemoryOsOutcomeUnknown(MemoryOsError):
    portal_status = 504
    outcome_unknown = True
    default_message = (
        "MemoryOS did not answer in time; your report may or may not have arrived. Try again later."
    )


_BY_STATUS: dict[int, type[MemoryOsError]] = {
    400: MemoryOsInvalid,
    401: MemoryOsRefused,
    404: MemoryOsNotFound,
    409: MemoryOsInvalid,
    413: MemoryOsInvalid,
    415: MemoryOsInvalid,
    422: MemoryOsInvalid,
    429: MemoryOsRateLimited,
}


def parse_error(status: int, body: bytes) -> MemoryOsError:
    """The exception for a non-2xx response, whatever its body."""
    code, detail = _error_body(body[:MAX_ERROR_BODY_BYTES])
    kind = _BY_STATUS.get(status) or (MemoryOsUnavailable if status >= 500 else MemoryOsError)
    return kind(status=status, code=code, detail=detail)


def _error_body(body: bytes) -> tuple[str | None, str | None]:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, None
    error: Any = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return None, None
    code, message = error.get("code"), error.get("message")
    return (
        code[:100] if isinstance(code, str) else None,
        message[:MAX_DETAIL_CHARS] if isinstance(message, str) else None,
    )
