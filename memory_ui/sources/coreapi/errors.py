"""Every CoreAPI failure as one exception hierarchy, parsed from whatever the response body
was, with a message safe to show users and the status the portal answers with.

Every failure is a `CoreAPIError` subclass chosen by HTTP status. Its `message` is safe to
show to users (no tokens, no memory content, no HTML from proxies); CoreAPI's own `title`,
`detail`, `errors` and `trace_id` stay on the exception for logs. Its class's
`portal_status` is what a page answers with when the call failed: adding a class here is
the only step a new kind of failure needs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from requests.structures import CaseInsensitiveDict

from memory_ui.sources.coreapi.types import as_optional_text, as_text
from memory_ui.sources.protocol import SourceError

# Error bodies come from CoreAPI, gateways and proxies; parse only this much of them and
# keep only this much of any text they carry.
MAX_ERROR_BODY_BYTES = 64 * 1024
MAX_DETAIL_CHARS = 1000
MAX_REASON_CHARS = 300

UNAVAILABLE_MESSAGE = "CoreAPI is unavailable, try again."
OUTCOME_UNKNOWN_MESSAGE = (
    "CoreAPI did not answer in time. It has not been done so far, but CoreAPI may still do "
    "it: check again in a moment before you try again."
)
UNEXPECTED_MESSAGE = "CoreAPI returned an unexpected response; try again later."
FIXED_MESSAGES = {
    401: "Your session with CoreAPI has expired; sign in again.",
    403: "You do not have access to this memory.",
    404: "CoreAPI could not find this agent or memory.",
    409: "The memory was changed elsewhere; reload it and try again.",
    412: "The memory changed meanwhile, so nothing was written; reload it and try again.",
    413: (
        "This memory is larger than CoreAPI accepts in one write, so nothing was written. "
        "You can still add notes to it, download it and clear it."
    ),
}
BUSY_MESSAGE = "The portal is busy with other CoreAPI calls; nothing was sent. Try again."


class CoreAPIError(SourceError):
    """Base of every CoreAPI failure; `str(error)` is `error.message`."""

    portal_status = 502  # what the portal answers with when this call failed
    outcome_unknown = False  # a write that may have been applied all the same

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        title: str = "",
        detail: str = "",
        errors: dict[str, list[str]] | None = None,
        retry_after: int | None = None,
        correlation_id: str = "",
        trace_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.title = title
        self.detail = detail
        self.errors = errors or {}
        self.retry_after = retry_after
        self.correlation_id = correlation_id
        self.trace_id = trace_id


class CoreAPIBadRequest(CoreAPIError):
    """400: CoreAPI rejected the arguments."""

    portal_status = 400


class CoreAPIUnauthorized(CoreAPIError):
    """401: the token is missing, expired or not accepted; the user signs in again."""

    portal_status = 401
    sign_in_helps = True


class CoreAPIForbidden(CoreAPIError):
    """403: authenticated, but not allowed (or a wrong instance id)."""

    portal_status = 403


class CoreAPINotFound(CoreAPIError):
    """404: unknown agent or resource."""

    portal_status = 404


class CoreAPIConflict(CoreAPIError):
    """409: the resource changed concurrently."""

    portal_status = 409


class CoreAPIPreconditionFailed(CoreAPIError):
    """412: a conditional write found the document at another version than If-Match named
    (docs/conditional-writes.md); nothing was written."""

    portal_status = 409


class CoreAPIRequestTooLarge(CoreAPIError):
    """413: the body is larger than CoreAPI takes (the client refuses before sending one
    it knows is too large: MAX_BODY_BYTES); nothing was written."""

    portal_status = 413


class CoreAPIRateLimited(CoreAPIError):
    """429: quota exceeded; `retry_after` says when to try again, if CoreAPI said."""

    portal_status = 429


class CoreAPIRejected(CoreAPIError):
    """Any other 4xx: a request CoreAPI will not take, which the portal should not have sent
    (a bad gateway from the user's point of view)."""

    portal_status = 502


class CoreAPIUnavailable(CoreAPIError):
    """5xx, timeouts and connection failures (`status` is None for transport failures)."""

    portal_status = 503


class CoreAPIOutcomeUnknown(CoreAPIUnavailable):
    """A write was sent but no answer came (a read timeout, a dropped connection): CoreAPI
    may have applied it, now or a little later. Never report it as "nothing changed"."""

    portal_status = 504
    outcome_unknown = True


class CoreAPIUnexpectedResponse(CoreAPIUnavailable):
    """A response the client cannot use: a success body of the wrong shape, or a redirect."""

    portal_status = 502


ERROR_CLASSES: dict[int, type[CoreAPIError]] = {
    400: CoreAPIBadRequest,
    401: CoreAPIUnauthorized,
    403: CoreAPIForbidden,
    404: CoreAPINotFound,
    409: CoreAPIConflict,
    412: CoreAPIPreconditionFailed,
    413: CoreAPIRequestTooLarge,
    429: CoreAPIRateLimited,
}


def error_class_for_status(status: int) -> type[CoreAPIError]:
    if status in ERROR_CLASSES:
        return ERROR_CLASSES[status]
    if 500 <= status <= 599:
        return CoreAPIUnavailable
    if 400 <= status <= 499:
        return CoreAPIRejected
    return CoreAPIUnexpectedResponse


@dataclass(frozen=True)
class _ErrorBody:
    title: str = ""
    detail: str = ""
    errors: dict[str, list[str]] = field(default_factory=dict)
    trace_id: str | None = None
    retry_after: int | None = None

    def reason(self) -> str:
        """CoreAPI's own explanation, the validation messages first."""
        messages = [
            message for field_messages in self.errors.values() for message in field_messages
        ]
        return _clip("; ".join(messages) or self.detail or self.title, MAX_REASON_CHARS)


def parse_error_response(
    status: int, headers: Mapping[str, str], body: bytes, *, correlation_id: str = ""
) -> CoreAPIError:
    """The exception for a non-2xx response, whatever shape its body has."""
    headers = CaseInsensitiveDict(headers)
    parsed = _parse_error_body(headers.get("Content-Type", ""), body)
    retry_after = _parse_retry_after(headers.get("Retry-After"))
    if retry_after is None:
        retry_after = parsed.retry_after
    error_class = error_class_for_status(status)
    return error_class(
        _user_message(status, parsed, retry_after),
        status=status,
        title=parsed.title,
        detail=parsed.detail,
        errors=parsed.errors,
        retry_after=retry_after,
        correlation_id=correlation_id,
        trace_id=parsed.trace_id,
    )


def _user_message(status: int, parsed: _ErrorBody, retry_after: int | None) -> str:
    if status in FIXED_MESSAGES:
        return FIXED_MESSAGES[status]
    if status == 429:
        if retry_after is None:
            return "CoreAPI is busy; try again shortly."
        return f"CoreAPI is busy; try again in {max(retry_after, 1)} s."
    if 500 <= status <= 599:
        return UNAVAILABLE_MESSAGE
    if 400 <= status <= 499:
        # Validation messages help the user fix the request; CoreAPI writes them, not agents.
        base = (
            "CoreAPI rejected the request"
            if status == 400
            else f"CoreAPI refused the request (HTTP {status})"
        )
        reason = parsed.reason()
        return f"{base}: {reason}" if reason else f"{base}."
    return UNEXPECTED_MESSAGE


def _parse_error_body(content_type: str, body: bytes) -> _ErrorBody:
    truncated = len(body) > MAX_ERROR_BODY_BYTES
    text = body[:MAX_ERROR_BODY_BYTES].decode("utf-8", errors="replace").strip()
    # Proxies and gateways answer with HTML (or XML) pages: nothing in them is for users.
    if not text or text.startswith("<") or "html" in content_type.lower():
        return _ErrorBody()
    if "json" in content_type.lower() or text.startswith(("{", "[")):
        if truncated:
            return _ErrorBody()
        try:
            return _error_body_from_json(json.loads(text))
        except ValueError:
            return _ErrorBody()
    return _ErrorBody(detail=_clip(text, MAX_DETAIL_CHARS))


def _error_body_from_json(data: object) -> _ErrorBody:
    if not isinstance(data, dict):
        return _ErrorBody()
    if "quota_name" in data or "time_until_retry_seconds" in data:
        quota = _clip(as_text(data.get("quota_name")), MAX_REASON_CHARS)
        return _ErrorBody(
            title=f"Quota exceeded: {quota}" if quota else "Quota exceeded",
            detail=_clip(as_text(data.get("quota_context")), MAX_DETAIL_CHARS),
            retry_after=_seconds(data.get("time_until_retry_seconds")),
        )
    return _ErrorBody(
        title=_clip(as_text(data.get("title")), MAX_DETAIL_CHARS),
        detail=_clip(as_text(data.get("detail")), MAX_DETAIL_CHARS),
        errors=_validation_errors(data.get("errors")),
        trace_id=as_optional_text(data.get("traceId")),
    )


def _validation_errors(value: object) -> dict[str, list[str]]:
    if not isinstance(value, dict):
        return {}
    errors: dict[str, list[str]] = {}
    for name, messages in value.items():
        items = [messages] if isinstance(messages, str) else messages
        if isinstance(items, list):
            errors[str(name)] = [_clip(m, MAX_REASON_CHARS) for m in items if isinstance(m, str)]
    return errors


def _parse_retry_after(value: str | None) -> int | None:
    """`Retry-After` as delta seconds or an HTTP-date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return int(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0, math.ceil((when - datetime.now(UTC)).total_seconds()))


def _seconds(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return max(0, math.ceil(seconds)) if math.isfinite(seconds) else None


def _clip(text: str, limit: int) -> str:
    """One line, at most `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
