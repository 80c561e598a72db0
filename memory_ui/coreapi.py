"""The one transport to FoundationaLLM CoreAPI: the memory endpoints and the agents listing.

Identity. End-user calls carry only the user's delegated token (`CallerAuth(token)`).
Support staff calls carry the portal's app-only token plus `X-USER-IDENTITY`, built from
the target user's identity as the support view resolved it. The portal never builds a
`UserIdentity` from browser input for end users, and never sends `X-USER-IDENTITY` for them.

Errors. Every failure is a `CoreAPIError` subclass chosen by HTTP status. Its `message` is
safe to show to users (no tokens, no memory content, no HTML from proxies); CoreAPI's own
`title`, `detail`, `errors` and `trace_id` stay on the exception for logs.

Faults. Every call has connect and read timeouts. Only idempotent GETs are retried (connection
errors, timeouts, 502/503/504) with exponential backoff and jitter; appends, clears and imports
are sent once, since a retry after a lost response could apply them twice.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import random
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote, urlencode

import requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict

logger = logging.getLogger("memory_ui.coreapi")

READ_SCOPES = frozenset({"user", "agent", "combined"})
WRITE_SCOPES = frozenset({"user", "agent"})
IMPORT_MODES = frozenset({"append", "replace"})
RETRYABLE_STATUSES = frozenset({502, 503, 504})

DEFAULT_CONNECT_TIMEOUT = 3.05  # just over a multiple of 3 s, the TCP retransmission window
DEFAULT_READ_TIMEOUT = 10.0
DEFAULT_GET_RETRIES = 2

AGENT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")  # CoreAPI's agent name rule
CORRELATION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")  # header-safe, bounded
AGENT_PROVIDER_SEGMENT = "/providers/FoundationaLLM.Agent/agents/"

# Error bodies come from CoreAPI, gateways and proxies; parse only this much of them and
# keep only this much of any text they carry.
MAX_ERROR_BODY_BYTES = 64 * 1024
MAX_DETAIL_CHARS = 1000
MAX_REASON_CHARS = 300

UNAVAILABLE_MESSAGE = "CoreAPI is unavailable, try again."
UNEXPECTED_MESSAGE = "CoreAPI returned an unexpected response; try again later."
FIXED_MESSAGES = {
    401: "Your session with CoreAPI has expired; sign in again.",
    403: "You do not have access to this memory.",
    404: "CoreAPI could not find this agent or memory.",
    409: "The memory was changed elsewhere; reload it and try again.",
}


# Typed results


@dataclass(frozen=True)
class Memory:
    """A MemoryResponse. `content_markdown` is untrusted: agents write it from prompts."""

    scope: str
    upn: str
    user_name: str | None = None
    name: str | None = None
    agent_object_id: str | None = None
    agent_name: str | None = None
    content_markdown: str = ""
    created_on: datetime | None = None
    updated_on: datetime | None = None

    @classmethod
    def from_json(cls, data: object) -> Memory:
        """Tolerates missing, null and extra fields, but not a missing `content_markdown`:
        reading such a body as "no memory" could lead a user to overwrite real memory."""
        if not isinstance(data, dict):
            raise ValueError("a MemoryResponse must be a JSON object")
        content = data.get("content_markdown")
        if "content_markdown" not in data or not isinstance(content, str | None):
            raise ValueError("a MemoryResponse must have content_markdown")
        return cls(
            scope=_text(data.get("scope")),
            upn=_text(data.get("upn")),
            user_name=_optional_text(data.get("user_name")),
            name=_optional_text(data.get("name")),
            agent_object_id=_optional_text(data.get("agent_object_id")),
            agent_name=_optional_text(data.get("agent_name")),
            content_markdown=content or "",
            created_on=_parse_datetime(data.get("created_on")),
            updated_on=_parse_datetime(data.get("updated_on")),
        )


@dataclass(frozen=True)
class Agent:
    """An agent the caller may use, from `GET /completions/agents`."""

    name: str
    object_id: str
    display_name: str
    description: str = ""
    roles: tuple[str, ...] = ()
    enabled: bool = True

    @classmethod
    def from_json(cls, element: object) -> Agent | None:
        """None for elements that are not agents or lack a name or object id."""
        if not isinstance(element, dict):
            return None
        resource = element.get("resource")
        if not isinstance(resource, dict):
            return None
        name = _text(resource.get("name"))
        object_id = _text(resource.get("object_id"))
        # FoundationaLLM's own rule for agent names; names become URL segments and ids here.
        if not AGENT_NAME.fullmatch(name) or AGENT_PROVIDER_SEGMENT not in object_id:
            return None
        roles = element.get("roles")
        properties = element.get("properties")
        enabled = properties.get("enabled") if isinstance(properties, dict) else None
        return cls(
            name=name,
            object_id=object_id,
            display_name=_text(resource.get("display_name")) or name,
            description=_text(resource.get("description")),
            roles=tuple(r for r in roles if isinstance(r, str)) if isinstance(roles, list) else (),
            # An absent flag means enabled: only an explicit false hides an agent.
            enabled=enabled is not False,
        )


def parse_agents(data: object) -> list[Agent]:
    """The agents listing, sorted by name as the User Portal shows it."""
    if not isinstance(data, list):
        raise ValueError("the agents listing must be a JSON array")
    agents = [agent for agent in map(Agent.from_json, data) if agent is not None]
    return sorted(agents, key=lambda agent: (agent.name.casefold(), agent.name))


@dataclass(frozen=True)
class UserIdentity:
    """FoundationaLLM's UnifiedUserIdentity, sent as `X-USER-IDENTITY` on support calls."""

    name: str
    user_name: str
    user_id: str
    upn: str
    group_ids: tuple[str, ...] = ()

    def to_header(self) -> str:
        # CoreAPI binds these keys case-sensitively. ensure_ascii keeps non-ASCII names
        # header-safe (\\u escapes), and json escaping rules out header injection.
        return json.dumps(
            {
                "name": self.name,
                "user_name": self.user_name,
                "user_id": self.user_id,
                "upn": self.upn,
                "group_ids": list(self.group_ids),
            },
            separators=(",", ":"),
        )


@dataclass(frozen=True)
class CallerAuth:
    """How a call authenticates. `user_identity` only for support staff's app-only calls."""

    access_token: str = field(repr=False)  # kept out of repr so it never reaches a log
    user_identity: UserIdentity | None = None


# Errors


class CoreAPIError(Exception):
    """Base of every CoreAPI failure; `str(error)` is `error.message`."""

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


class CoreAPIUnauthorized(CoreAPIError):
    """401: the token is missing, expired or not accepted; the user signs in again."""


class CoreAPIForbidden(CoreAPIError):
    """403: authenticated, but not allowed (or a wrong instance id)."""


class CoreAPINotFound(CoreAPIError):
    """404: unknown agent or resource."""


class CoreAPIConflict(CoreAPIError):
    """409: the resource changed concurrently."""


class CoreAPIRateLimited(CoreAPIError):
    """429: quota exceeded; `retry_after` says when to try again, if CoreAPI said."""


class CoreAPIRejected(CoreAPIError):
    """Any other 4xx."""


class CoreAPIUnavailable(CoreAPIError):
    """5xx, timeouts and connection failures (`status` is None for transport failures)."""


class CoreAPIUnexpectedResponse(CoreAPIUnavailable):
    """A response the client cannot use: a success body of the wrong shape, or a redirect."""


ERROR_CLASSES: dict[int, type[CoreAPIError]] = {
    400: CoreAPIBadRequest,
    401: CoreAPIUnauthorized,
    403: CoreAPIForbidden,
    404: CoreAPINotFound,
    409: CoreAPIConflict,
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
        quota = _clip(_text(data.get("quota_name")), MAX_REASON_CHARS)
        return _ErrorBody(
            title=f"Quota exceeded: {quota}" if quota else "Quota exceeded",
            detail=_clip(_text(data.get("quota_context")), MAX_DETAIL_CHARS),
            retry_after=_seconds(data.get("time_until_retry_seconds")),
        )
    return _ErrorBody(
        title=_clip(_text(data.get("title")), MAX_DETAIL_CHARS),
        detail=_clip(_text(data.get("detail")), MAX_DETAIL_CHARS),
        errors=_validation_errors(data.get("errors")),
        trace_id=_optional_text(data.get("traceId")),
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


# Small parsing helpers


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _optional_text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _clip(text: str, limit: int) -> str:
    """One line, at most `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _parse_datetime(value: object) -> datetime | None:
    """ISO 8601 as .NET and Python write it (Z, +00:00, up to 7 fractional digits).
    A time without an offset is taken as UTC, which is what CoreAPI stores."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def agent_object_id(instance_id: str, agent_name: str) -> str:
    """The FoundationaLLM resource path of an agent."""
    if not instance_id or "/" in instance_id:
        raise ValueError("instance_id must be a non-empty id")
    if not AGENT_NAME.fullmatch(agent_name):
        raise ValueError(f"not an agent name: {agent_name!r}")
    return f"/instances/{instance_id}{AGENT_PROVIDER_SEGMENT}{agent_name}"


# Argument checks: failures are programming errors, hence ValueError rather than CoreAPIError.


def _check_scope(scope: str, allowed: frozenset[str], agent_object_id: str | None) -> None:
    if scope not in allowed:
        raise ValueError(f"scope must be one of {sorted(allowed)}, got {scope!r}")
    if scope == "agent" and not agent_object_id:
        raise ValueError("agent_object_id is required for scope 'agent'")


def _check_content(content_markdown: str) -> None:
    if not content_markdown.strip():
        raise ValueError("content_markdown must not be empty")


def _correlation_id(value: str | None) -> str:
    if value is None:
        return uuid.uuid4().hex
    if not CORRELATION_ID.fullmatch(value):
        raise ValueError("correlation_id must be 1-128 characters of [A-Za-z0-9._:-]")
    return value


def _headers(auth: CallerAuth, correlation_id: str, accept: str) -> dict[str, str]:
    if not auth.access_token:
        raise ValueError("access_token must not be empty")
    headers = {
        "Authorization": f"Bearer {auth.access_token}",
        "Accept": accept,
        "X-Correlation-ID": correlation_id,
    }
    if auth.user_identity is not None:
        headers["X-USER-IDENTITY"] = auth.user_identity.to_header()
    return headers


def _query(scope: str, agent_object_id: str | None) -> dict[str, str]:
    params = {"scope": scope}
    if agent_object_id:
        params["agentObjectId"] = agent_object_id  # ASP.NET binds the query in camelCase
    return params


def _without_none(**fields: object) -> dict[str, object]:
    """A request body: CoreAPI treats absent and null alike, absent is shorter."""
    return {name: value for name, value in fields.items() if value is not None}


def _is_transient(exc: requests.RequestException) -> bool:
    # A certificate problem will not go away on retry; a dropped connection or timeout may.
    if isinstance(exc, requests.exceptions.SSLError):
        return False
    return isinstance(
        exc, requests.ConnectionError | requests.Timeout | requests.exceptions.ChunkedEncodingError
    )


def _unexpected(status: int, correlation_id: str) -> CoreAPIUnexpectedResponse:
    return CoreAPIUnexpectedResponse(
        UNEXPECTED_MESSAGE, status=status, correlation_id=correlation_id
    )


def _decode_json[T](
    response: requests.Response, parse: Callable[[object], T], correlation_id: str
) -> T:
    try:
        return parse(json.loads(response.content))
    except ValueError as exc:
        raise _unexpected(response.status_code, correlation_id) from exc


def _decode_markdown(response: requests.Response, correlation_id: str) -> str:
    # A 200 HTML page is a sign-in or error page from a proxy, not exported memory.
    if "html" in response.headers.get("Content-Type", "").lower():
        raise _unexpected(response.status_code, correlation_id)
    try:
        return response.content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _unexpected(response.status_code, correlation_id) from exc


def _pooled_session(pool_size: int) -> requests.Session:
    session = requests.Session()
    # max_retries=0: urllib3 must never resend on its own; this client decides (GETs only).
    adapter = HTTPAdapter(pool_connections=pool_size, pool_maxsize=pool_size, max_retries=0)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


# The client


class CoreAPIClient:
    """CoreAPI calls for one instance over one pooled session; safe to share across threads."""

    def __init__(
        self,
        base_url: str,
        instance_id: str,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        get_retries: int = DEFAULT_GET_RETRIES,
        backoff: float = 0.2,
        verify: bool | str = True,
        pool_size: int = 20,
        session: requests.Session | None = None,
    ) -> None:
        """`session`, when given, is used as configured and left open by `close()`."""
        if not base_url or not instance_id:
            raise ValueError("base_url and instance_id are required")
        if get_retries < 0 or backoff < 0:
            raise ValueError("get_retries and backoff must not be negative")
        self.base_url = base_url.rstrip("/")
        self.instance_id = instance_id
        self._instance_path = f"/instances/{quote(instance_id, safe='')}"
        self._timeout = (connect_timeout, read_timeout)
        self._get_retries = get_retries
        self._backoff = backoff
        # Passed on every request: REQUESTS_CA_BUNDLE in the environment overrides
        # Session.verify, but not a verify path given to the request itself.
        self._verify = verify
        self._owns_session = session is None
        self._session = session if session is not None else _pooled_session(pool_size)

    def close(self) -> None:
        if self._owns_session:
            self._session.close()

    def list_agents(self, auth: CallerAuth, *, correlation_id: str | None = None) -> list[Agent]:
        cid = _correlation_id(correlation_id)
        response = self._send("GET", "/completions/agents", auth, cid)
        return _decode_json(response, parse_agents, cid)

    def get_memory(
        self,
        auth: CallerAuth,
        scope: str = "combined",
        agent_object_id: str | None = None,
        *,
        correlation_id: str | None = None,
    ) -> Memory:
        _check_scope(scope, READ_SCOPES, agent_object_id)
        cid = _correlation_id(correlation_id)
        response = self._send("GET", "/memory", auth, cid, params=_query(scope, agent_object_id))
        return _decode_json(response, Memory.from_json, cid)

    def append_memory(
        self,
        auth: CallerAuth,
        scope: str,
        content_markdown: str,
        *,
        agent_object_id: str | None = None,
        agent_name: str | None = None,
        reason: str | None = None,
        operation_id: str | None = None,
        session_id: str | None = None,
        correlation_id: str | None = None,
    ) -> Memory:
        _check_scope(scope, WRITE_SCOPES, agent_object_id)
        _check_content(content_markdown)
        body = _without_none(
            scope=scope,
            agent_object_id=agent_object_id,
            agent_name=agent_name,
            content_markdown=content_markdown,
            reason=reason,
            operation_id=operation_id,
            session_id=session_id,
        )
        cid = _correlation_id(correlation_id)
        response = self._send("POST", "/memory/append", auth, cid, json_body=body)
        return _decode_json(response, Memory.from_json, cid)

    def clear_memory(
        self,
        auth: CallerAuth,
        scope: str,
        *,
        agent_object_id: str | None = None,
        correlation_id: str | None = None,
    ) -> Memory:
        _check_scope(scope, WRITE_SCOPES, agent_object_id)
        # The user confirmed in the portal before this call; CoreAPI needs it said again.
        body = _without_none(scope=scope, agent_object_id=agent_object_id, confirm=True)
        cid = _correlation_id(correlation_id)
        response = self._send("POST", "/memory/clear", auth, cid, json_body=body)
        return _decode_json(response, Memory.from_json, cid)

    def export_memory(
        self,
        auth: CallerAuth,
        scope: str,
        *,
        agent_object_id: str | None = None,
        correlation_id: str | None = None,
    ) -> str:
        _check_scope(scope, READ_SCOPES, agent_object_id)
        cid = _correlation_id(correlation_id)
        response = self._send(
            "GET",
            "/memory/export",
            auth,
            cid,
            params=_query(scope, agent_object_id),
            accept="text/markdown",
        )
        return _decode_markdown(response, cid)

    def import_memory(
        self,
        auth: CallerAuth,
        scope: str,
        content_markdown: str,
        *,
        mode: str = "append",
        agent_object_id: str | None = None,
        correlation_id: str | None = None,
    ) -> Memory:
        _check_scope(scope, WRITE_SCOPES, agent_object_id)
        _check_content(content_markdown)
        if mode not in IMPORT_MODES:
            raise ValueError(f"mode must be one of {sorted(IMPORT_MODES)}, got {mode!r}")
        body = _without_none(
            scope=scope,
            agent_object_id=agent_object_id,
            content_markdown=content_markdown,
            mode=mode,
        )
        cid = _correlation_id(correlation_id)
        response = self._send("POST", "/memory/import", auth, cid, json_body=body)
        return _decode_json(response, Memory.from_json, cid)

    def _send(
        self,
        method: str,
        path: str,
        auth: CallerAuth,
        correlation_id: str,
        *,
        params: dict[str, str] | None = None,
        json_body: dict[str, object] | None = None,
        accept: str = "application/json",
    ) -> requests.Response:
        """The 2xx response, after retries for GETs; anything else raises CoreAPIError."""
        headers = _headers(auth, correlation_id, accept)
        retries = self._get_retries if method == "GET" else 0
        attempt = 1
        while True:
            try:
                response = self._attempt(
                    method, path, headers, params, json_body, correlation_id, attempt
                )
            except requests.RequestException as exc:
                if attempt > retries or not _is_transient(exc):
                    raise CoreAPIUnavailable(
                        UNAVAILABLE_MESSAGE,
                        detail=type(exc).__name__,
                        correlation_id=correlation_id,
                    ) from exc
            else:
                if attempt > retries or response.status_code not in RETRYABLE_STATUSES:
                    return _successful(response, correlation_id)
            self._pause(attempt)
            attempt += 1

    def _attempt(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        params: dict[str, str] | None,
        json_body: dict[str, object] | None,
        correlation_id: str,
        attempt: int,
    ) -> requests.Response:
        """One HTTP exchange and its log line (never the token, never a body)."""
        log_path = (
            self._instance_path + path + (f"?{urlencode(params, safe='/')}" if params else "")
        )
        started = time.monotonic()
        try:
            response = self._session.request(
                method,
                self.base_url + self._instance_path + path,
                params=params,
                json=json_body,
                headers=headers,
                timeout=self._timeout,
                verify=self._verify,
                # A redirect here is a proxy's sign-in page, and following one would turn
                # a POST into a GET; surface it instead.
                allow_redirects=False,
            )
        except requests.RequestException as exc:
            _log_attempt(method, log_path, type(exc).__name__, started, correlation_id, attempt)
            raise
        _log_attempt(method, log_path, str(response.status_code), started, correlation_id, attempt)
        return response

    def _pause(self, attempt: int) -> None:
        # Exponential backoff with jitter, so portal workers do not retry in lockstep.
        delay = self._backoff * 2 ** (attempt - 1)
        time.sleep(delay * random.uniform(0.5, 1.5))


def _successful(response: requests.Response, correlation_id: str) -> requests.Response:
    if 200 <= response.status_code <= 299:
        return response
    raise parse_error_response(
        response.status_code, response.headers, response.content, correlation_id=correlation_id
    )


def _log_attempt(
    method: str, path: str, outcome: str, started: float, correlation_id: str, attempt: int
) -> None:
    failed = not outcome.isdigit() or int(outcome) >= 500
    logger.log(
        logging.WARNING if failed else logging.INFO,
        "CoreAPI %s %s -> %s in %d ms correlation_id=%s attempt=%d",
        method,
        path,
        outcome,
        (time.monotonic() - started) * 1000,
        correlation_id,
        attempt,
    )


# Process-wide client


def client_from_settings(settings: Any) -> CoreAPIClient:
    """A client configured from Django-style settings (any object with these attributes)."""
    return CoreAPIClient(
        settings.COREAPI_BASE_URL,
        settings.COREAPI_INSTANCE_ID,
        connect_timeout=float(
            getattr(settings, "COREAPI_CONNECT_TIMEOUT", DEFAULT_CONNECT_TIMEOUT)
        ),
        read_timeout=float(getattr(settings, "COREAPI_READ_TIMEOUT", DEFAULT_READ_TIMEOUT)),
        get_retries=int(getattr(settings, "COREAPI_GET_RETRIES", DEFAULT_GET_RETRIES)),
        # An empty bundle means the system trust store.
        verify=getattr(settings, "COREAPI_CA_BUNDLE", "") or True,
    )


@functools.cache
def get_client() -> CoreAPIClient:
    """The process-wide client, so every request shares one connection pool.
    Tests that change settings call `get_client.cache_clear()`."""
    # Imported here so this module, and its tests, run without Django configured.
    from django.conf import settings

    return client_from_settings(settings)
