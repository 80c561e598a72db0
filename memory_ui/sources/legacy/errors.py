"""Every failure of a legacy memory store call as one exception hierarchy.

Chosen by HTTP status; the Databricks body `{"error_code": "...", "message": "..."}` is
kept on the exception (`error_code`, `detail`) for logs and for callers that need to tell
cases apart (e.g. RESOURCE_ALREADY_EXISTS). `message` is safe to show users: fixed text,
never the store's own message (it may quote memory paths or contents). `portal_status` is
what a portal page answers with when the call failed, as for CoreAPI errors.
"""

from __future__ import annotations

import json
from typing import Any

from memory_ui.sources.protocol import SourceError

MAX_ERROR_BODY_BYTES = 64 * 1024
MAX_DETAIL_CHARS = 1000

UNAVAILABLE_MESSAGE = "The legacy memory store is unavailable, try again."
OUTCOME_UNKNOWN_MESSAGE = (
    "The legacy memory store did not answer in time; the change may or may not have been "
    "made. Reload before you try again."
)
UNEXPECTED_MESSAGE = "The legacy memory store returned an unexpected response; try again later."


class LegacyStoreError(SourceError):
    """Base of every legacy store failure; `str(error)` is `error.message`. Trying again
    helps only where the stores did not answer (in time), were busy, or answered something
    unreadable: a refusal would only be refused again."""

    portal_status = 502
    default_message = UNEXPECTED_MESSAGE
    retry_helps = False

    def __init__(
        self,
        message: str | None = None,
        *,
        status: int | None = None,
        error_code: str | None = None,
        detail: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.message = message or self.default_message
        super().__init__(self.message)
        self.status = status
        self.error_code = error_code
        self.detail = detail
        self.retry_after = retry_after


class LegacyBadRequest(LegacyStoreError):
    portal_status = 400
    default_message = "The legacy memory store refused the change as invalid."


REFUSED_MESSAGE = (
    "The portal's own access to the legacy memory stores was refused; contact support."
)


class LegacyUnauthorized(LegacyStoreError):
    portal_status = 502  # the portal's own credentials: not something the user can fix
    # Never "Sign in again" (CoreAPI's 401): the stores refused the portal, not the person,
    # who can only tell support (the client logs it at ERROR for the operators).
    default_message = REFUSED_MESSAGE


class LegacyForbidden(LegacyStoreError):
    portal_status = 403
    default_message = "The portal is not allowed to do this in that legacy memory store."


class LegacyNotFound(LegacyStoreError):
    portal_status = 404
    default_message = "The legacy memory store or entry does not exist (any more)."


class LegacyConflict(LegacyStoreError):
    portal_status = 409
    default_message = "An entry with that path already exists in the legacy memory store."


class LegacyRateLimited(LegacyStoreError):
    portal_status = 503
    retry_helps = True
    default_message = "The legacy memory store is busy; try again in a moment."


class LegacyUnavailable(LegacyStoreError):
    portal_status = 503
    retry_helps = True
    default_message = UNAVAILABLE_MESSAGE


class LegacyOutcomeUnknown(LegacyStoreError):
    """A write was sent and no answer came back: it may have been applied."""

    portal_status = 504
    default_message = OUTCOME_UNKNOWN_MESSAGE
    outcome_unknown = True


class LegacyUnexpectedResponse(LegacyStoreError):
    portal_status = 502
    retry_helps = True


_BY_STATUS: dict[int, type[LegacyStoreError]] = {
    400: LegacyBadRequest,
    401: LegacyUnauthorized,
    403: LegacyForbidden,
    404: LegacyNotFound,
    409: LegacyConflict,
    429: LegacyRateLimited,
}


def parse_error(status: int, body: bytes, headers: Any) -> LegacyStoreError:
    """The exception for a non-2xx response, whatever its body (Databricks JSON, a
    gateway's HTML, nothing)."""
    error_code, detail = _databricks_body(body[:MAX_ERROR_BODY_BYTES])
    if status in _BY_STATUS:
        kind = _BY_STATUS[status]
    elif status >= 500:
        kind = LegacyUnavailable
    else:
        kind = LegacyUnexpectedResponse
    return kind(
        status=status,
        error_code=error_code,
        detail=detail,
        retry_after=_retry_after(headers.get("Retry-After")) if status == 429 else None,
    )


def _databricks_body(body: bytes) -> tuple[str | None, str | None]:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, None
    if not isinstance(data, dict):
        return None, None
    code, message = data.get("error_code"), data.get("message")
    return (
        code[:100] if isinstance(code, str) else None,
        message[:MAX_DETAIL_CHARS] if isinstance(message, str) else None,
    )


def _retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds < 3600 else None
