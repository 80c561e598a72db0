"""CoreAPI's error bodies, so the portal meets every shape it must handle
(docs/architecture.md, What the real CoreAPI does beyond the contract).

- ProblemDetails (`application/problem+json`): type, title, status, traceId, detail.
- ValidationProblemDetails: the same plus `errors: {field: [messages]}`; every 400 uses it.
- Plain text: the 403 for a wrong instance id in the path.
- Quota JSON: the 429 body, with a `Retry-After` header.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from werkzeug.wrappers import Response

PROBLEM_JSON = "application/problem+json"
INVALID_INSTANCE_TEXT = "Access denied. Invalid instance ID."

# The RFC 9110 section links and titles ASP.NET Core puts in its ProblemDetails.
_RFC9110 = "https://tools.ietf.org/html/rfc9110#section-"
_KINDS: dict[int, tuple[str, str]] = {
    400: ("15.5.1", "One or more validation errors occurred."),
    401: ("15.5.2", "Unauthorized"),
    403: ("15.5.4", "Forbidden"),
    404: ("15.5.5", "Not Found"),
    405: ("15.5.6", "Method Not Allowed"),
    412: ("15.5.13", "Precondition Failed"),  # conditional writes (docs/conditional-writes.md)
    413: ("15.5.14", "Content Too Large"),
    415: ("15.5.16", "Unsupported Media Type"),
    500: ("15.6.1", "An error occurred while processing your request."),
    503: ("15.6.4", "Service Unavailable"),
}


def new_trace_id() -> str:
    """W3C traceparent form, as ASP.NET reports it in `traceId`."""
    return f"00-{secrets.token_hex(16)}-{secrets.token_hex(8)}-00"


def json_response(
    body: Any,
    status: int = 200,
    mimetype: str = "application/json",
    headers: dict[str, str] | None = None,
) -> Response:
    return Response(json.dumps(body), status=status, mimetype=mimetype, headers=headers or {})


def problem(
    status: int,
    trace_id: str,
    detail: str | None = None,
    errors: dict[str, list[str]] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    section, title = _KINDS.get(status, ("", "Error"))
    body: dict[str, Any] = {
        "type": f"{_RFC9110}{section}" if section else "about:blank",
        "title": title,
        "status": status,
    }
    if detail:
        body["detail"] = detail
    if errors is not None:
        body["errors"] = errors
    body["traceId"] = trace_id
    return json_response(body, status, PROBLEM_JSON, headers)


def quota_exceeded(retry_after_seconds: int, quota_context: str) -> Response:
    return json_response(
        {
            "quota_name": "devstack-fault-injection",
            "quota_context": quota_context,
            "quota_exceeded": True,
            "time_until_retry_seconds": retry_after_seconds,
        },
        status=429,
        headers={"Retry-After": str(retry_after_seconds)},
    )


class ApiError(Exception):
    """Raised anywhere in request handling; turned into one error response."""

    def __init__(
        self,
        status: int,
        detail: str,
        errors: dict[str, list[str]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors
        self.headers = headers

    def response(self, trace_id: str) -> Response:
        return problem(self.status, trace_id, self.detail, self.errors, self.headers)


class InvalidInstance(ApiError):
    """Real CoreAPI answers a foreign instance id with a bare text 403, not ProblemDetails."""

    def __init__(self) -> None:
        super().__init__(403, INVALID_INSTANCE_TEXT)

    def response(self, trace_id: str) -> Response:
        return Response(INVALID_INSTANCE_TEXT, status=403, mimetype="text/plain")


def invalid(field: str, message: str) -> ApiError:
    """A 400 ValidationProblemDetails naming one field."""
    return ApiError(400, message, errors={field: [message]})


def invalid_fields(errors: dict[str, list[str]]) -> ApiError:
    detail = "; ".join(message for messages in errors.values() for message in messages)
    return ApiError(400, detail, errors=errors)
