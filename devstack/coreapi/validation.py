"""Request parsing with ASP.NET-like strictness: JSON bodies and their typed fields.

Decisions: unknown JSON fields are ignored (System.Text.Json does that by default); wrong
types are 400 (no coercion: `"confirm": "true"` is not `true`); JSON `null` for an optional
field means absent; all field errors of one body are reported together.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Request

from devstack.coreapi.problems import ApiError, invalid, invalid_fields

MAX_BODY_BYTES = 2 * 1024 * 1024
BODY_FIELD = "$"  # ASP.NET's key for errors about the body as a whole

READABLE_SCOPES = ("user", "agent", "combined")
WRITABLE_SCOPES = ("user", "agent")


class LimitedRequest(Request):
    # Werkzeug enforces this for Content-Length and for chunked bodies alike (-> 413).
    max_content_length = MAX_BODY_BYTES


def _is_json_mimetype(mimetype: str) -> bool:
    return mimetype in ("application/json", "text/json") or (
        mimetype.startswith("application/") and mimetype.endswith("+json")
    )


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def read_json_object(request: Request) -> dict[str, Any]:
    if not _is_json_mimetype(request.mimetype):
        raise ApiError(415, "Send the body as application/json.")
    charset = request.mimetype_params.get("charset", "utf-8").lower()
    if charset not in ("utf-8", "utf8"):
        raise ApiError(415, "The body must be UTF-8 encoded JSON.")
    try:
        raw = request.get_data(cache=False)
    except RequestEntityTooLarge as exc:
        raise ApiError(413, f"The body is larger than {MAX_BODY_BYTES} bytes.") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise invalid(BODY_FIELD, "The body is not valid UTF-8.") from exc
    if not text.strip():
        raise invalid(BODY_FIELD, "A non-empty request body is required.")
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise invalid(BODY_FIELD, f"The body is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise invalid(BODY_FIELD, "The body must be a JSON object.")
    return data


def unicode_error(value: str) -> str | None:
    """Lone surrogates pass json.loads but cannot be stored or returned as UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "must be valid Unicode text"
    return None


def scope_error(scope: str, allowed: tuple[str, ...]) -> str | None:
    if scope in allowed:
        return None
    if scope == "combined":
        return "scope 'combined' is read-only; use 'user' or 'agent'."
    return f"scope must be one of {', '.join(allowed)}."


class Fields:
    """Typed reads of a JSON object's known fields; errors pile up until `check()`."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.errors: dict[str, list[str]] = {}

    def error(self, field: str, message: str) -> None:
        self.errors.setdefault(field, []).append(message)

    def string(self, field: str) -> str | None:
        """An optional string; null and absent are the same."""
        value = self.data.get(field)
        if value is None:
            return None
        if not isinstance(value, str):
            self.error(field, f"The {field} field must be a string.")
            return None
        problem = unicode_error(value)
        if problem:
            self.error(field, f"The {field} field {problem}.")
            return None
        return value

    # Required getters return "" for a bad value: check() raises before anyone uses it.

    def required_string(self, field: str) -> str:
        value = self.string(field)
        if value is None and field not in self.errors:
            self.error(field, f"The {field} field is required.")
        return value or ""

    def text(self, field: str) -> str:
        """A required string with some non-whitespace content (content_markdown)."""
        value = self.string(field)
        if value is None and field not in self.errors:
            self.error(field, f"The {field} field is required.")
        elif value is not None and not value.strip():
            self.error(field, f"The {field} field must not be empty or whitespace.")
        return value or ""

    def scope(self, allowed: tuple[str, ...]) -> str:
        value = self.required_string("scope")
        problem = scope_error(value, allowed) if value else None
        if problem:
            self.error("scope", problem)
        return value

    def boolean(self, field: str) -> bool | None:
        value = self.data.get(field)
        if value is not None and not isinstance(value, bool):
            self.error(field, f"The {field} field must be a JSON boolean.")
            return None
        return value

    def check(self) -> None:
        if self.errors:
            raise invalid_fields(self.errors)
