"""The one transport to FoundationaLLM CoreAPI: the memory endpoints and the agents listing.

Over 400 lines: one module per external transport. Timeouts, retries, the concurrency
gate and the calls share one session and one deadline; apart, each would need the others.

Faults. Every call has connect and read timeouts, shortened to what is left of the portal
request's overall deadline (`budget.deadline`). Only idempotent GETs are retried (failures
to connect, dropped connections, 502/503/504), with exponential backoff and jitter, while
the deadline allows; never after a read timeout, since CoreAPI that slow would make every
retry as slow. Appends, clears and imports are sent once: a retry after a lost response
could apply them twice.

Load. One process makes at most `max_concurrent` calls at a time; a call waits at most
`queue_timeout` for its turn and is refused (nothing sent) after that, so threads blocked on
a slow CoreAPI cannot take every worker thread and keep requests that need no CoreAPI
(health probes, static pages) waiting. A body over `max_body_bytes`, more than CoreAPI
takes, is refused before it is sent.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import random
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote, urlencode

import requests

from memory_ui import budget, calls
from memory_ui.identity import CallerAuth
from memory_ui.sources.coreapi.errors import (
    BUSY_MESSAGE,
    FIXED_MESSAGES,
    OUTCOME_UNKNOWN_MESSAGE,
    UNAVAILABLE_MESSAGE,
    UNEXPECTED_MESSAGE,
    CoreAPIOutcomeUnknown,
    CoreAPIRequestTooLarge,
    CoreAPIUnavailable,
    CoreAPIUnexpectedResponse,
    parse_error_response,
)
from memory_ui.sources.coreapi.types import Agent, Memory, memory_from_json, parse_agents
from memory_ui.transport import MIN_ATTEMPT_SECONDS, exchange, pooled_session, timeout_within

logger = logging.getLogger("memory_ui.sources.coreapi")

READ_SCOPES = frozenset({"user", "agent", "combined"})
WRITE_SCOPES = frozenset({"user", "agent"})
IMPORT_MODES = frozenset({"append", "replace"})

DEFAULT_CONNECT_TIMEOUT = 3.05  # just over a multiple of 3 s, the TCP retransmission window
DEFAULT_READ_TIMEOUT = 10.0
DEFAULT_GET_RETRIES = 2
DEFAULT_MAX_CONCURRENT = 8
DEFAULT_QUEUE_TIMEOUT = 1.0
MAX_BODY_BYTES = 2 * 1024 * 1024  # CoreAPI's request body limit (docs/architecture.md)

CORRELATION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")  # header-safe, bounded
ETAG = re.compile(r'"[\x21\x23-\x7e]{1,128}"')  # a strong entity tag, header-safe


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
        # The portal request's id when there is one (memory_ui.calls).
        return calls.correlation_id.get() or uuid.uuid4().hex
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


def encoded_body(fields: dict[str, object], max_bytes: int, correlation_id: str = "") -> bytes:
    """A request body as requests would encode json=, measured before anything is sent:
    CoreAPIRequestTooLarge (nothing sent) when it is over what CoreAPI takes."""
    body = json.dumps(fields, allow_nan=False).encode()
    if len(body) > max_bytes:
        raise CoreAPIRequestTooLarge(
            FIXED_MESSAGES[413], detail=f"{len(body)} bytes", correlation_id=correlation_id
        )
    return body


def _entity_tag(etag: str) -> str:
    if not ETAG.fullmatch(etag):
        raise ValueError("if_match must be a quoted entity tag from Memory.etag")
    return etag


def _with_etag(memory: Memory, response: requests.Response) -> Memory:
    """The document's version, when CoreAPI sends one (docs/conditional-writes.md)."""
    etag = response.headers.get("ETag", "").strip()
    return replace(memory, etag=etag) if ETAG.fullmatch(etag) else memory


# The client


@dataclass(frozen=True)
class Request:
    """One call, its arguments checked, as it leaves for CoreAPI."""

    method: str
    path: str  # below /instances/{instance id}
    auth: CallerAuth
    params: dict[str, str] | None = None
    json_body: dict[str, object] | None = None
    accept: str = "application/json"
    if_match: str | None = None


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
        max_concurrent: int = DEFAULT_MAX_CONCURRENT,
        queue_timeout: float = DEFAULT_QUEUE_TIMEOUT,
        max_body_bytes: int = MAX_BODY_BYTES,
        session: requests.Session | None = None,
    ) -> None:
        """`session`, when given, is used as configured and left open by `close()`."""
        if not base_url or not instance_id:
            raise ValueError("base_url and instance_id are required")
        if get_retries < 0 or backoff < 0 or queue_timeout < 0:
            raise ValueError("get_retries, backoff and queue_timeout must not be negative")
        if max_concurrent < 1:
            raise ValueError("max_concurrent must be at least 1")
        self.base_url = base_url.rstrip("/")
        self.instance_id = instance_id
        self._instance_path = f"/instances/{quote(instance_id, safe='')}"
        self._timeout = (connect_timeout, read_timeout)
        self._get_retries = get_retries
        self._backoff = backoff
        self._slots = threading.BoundedSemaphore(max_concurrent)
        self._queue_timeout = queue_timeout
        self._max_body_bytes = max_body_bytes
        # Passed on every request: REQUESTS_CA_BUNDLE in the environment overrides
        # Session.verify, but not a verify path given to the request itself.
        self._verify = verify
        self._owns_session = session is None
        self._session = session if session is not None else pooled_session(pool_size, base_url)

    def close(self) -> None:
        if self._owns_session:
            self._session.close()

    def list_agents(self, auth: CallerAuth, *, correlation_id: str | None = None) -> list[Agent]:
        cid = _correlation_id(correlation_id)
        response = self._send(Request("GET", "/completions/agents", auth), cid)
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
        request = Request("GET", "/memory", auth, params=_query(scope, agent_object_id))
        return self._memory(request, correlation_id)

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
        return self._memory(Request("POST", "/memory/append", auth, json_body=body), correlation_id)

    def clear_memory(
        self,
        auth: CallerAuth,
        scope: str,
        *,
        agent_object_id: str | None = None,
        if_match: str | None = None,
        correlation_id: str | None = None,
    ) -> Memory:
        """`if_match`: clear only if the document is still at that version (412 otherwise:
        `CoreAPIPreconditionFailed`); for a CoreAPI that offers it (Memory.etag)."""
        _check_scope(scope, WRITE_SCOPES, agent_object_id)
        # The user confirmed in the portal before this call; CoreAPI needs it said again.
        body = _without_none(scope=scope, agent_object_id=agent_object_id, confirm=True)
        request = Request("POST", "/memory/clear", auth, json_body=body, if_match=if_match)
        return self._memory(request, correlation_id)

    def export_memory(
        self,
        auth: CallerAuth,
        scope: str,
        *,
        agent_object_id: str | None = None,
        correlation_id: str | None = None,
    ) -> str:
        _check_scope(scope, READ_SCOPES, agent_object_id)
        params = _query(scope, agent_object_id)
        request = Request("GET", "/memory/export", auth, params=params, accept="text/markdown")
        return self._markdown(request, correlation_id)

    def import_memory(
        self,
        auth: CallerAuth,
        scope: str,
        content_markdown: str,
        *,
        mode: str = "append",
        agent_object_id: str | None = None,
        if_match: str | None = None,
        correlation_id: str | None = None,
    ) -> Memory:
        """`if_match` as for `clear_memory`."""
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
        request = Request("POST", "/memory/import", auth, json_body=body, if_match=if_match)
        return self._memory(request, correlation_id)

    # Where a memory call, its arguments checked, leaves for CoreAPI: the view tests' fake
    # (tests/fake_coreapi.py) answers here, so it keeps the real signatures and checks.

    def _memory(self, request: Request, correlation_id: str | None) -> Memory:
        """A call answered with a MemoryResponse (and the document's ETag, if any)."""
        cid = _correlation_id(correlation_id)
        response = self._send(request, cid)
        return _with_etag(_decode_json(response, memory_from_json, cid), response)

    def _markdown(self, request: Request, correlation_id: str | None) -> str:
        """A GET answered with a markdown document."""
        cid = _correlation_id(correlation_id)
        return _decode_markdown(self._send(request, cid), cid)

    def _send(self, request: Request, correlation_id: str) -> requests.Response:
        """The 2xx response, after retries for GETs; anything else raises CoreAPIError."""
        headers = _headers(request.auth, correlation_id, request.accept)
        if request.if_match is not None:
            headers["If-Match"] = _entity_tag(request.if_match)
        body = None
        if request.json_body is not None:
            body = encoded_body(request.json_body, self._max_body_bytes, correlation_id)
            headers["Content-Type"] = "application/json"

        def send(attempt: int) -> requests.Response:
            timeout = self._timeout_within_deadline(correlation_id)
            with self._slot(correlation_id):
                return self._attempt(request, headers, body, timeout, correlation_id, attempt)

        response = exchange(
            send,
            retries=self._get_retries if request.method == "GET" else 0,
            write=request.method != "GET",
            outcome_unknown=lambda exc: CoreAPIOutcomeUnknown(
                OUTCOME_UNKNOWN_MESSAGE, detail=type(exc).__name__, correlation_id=correlation_id
            ),
            unavailable=lambda exc: CoreAPIUnavailable(
                UNAVAILABLE_MESSAGE, detail=type(exc).__name__, correlation_id=correlation_id
            ),
            pause=self._pause,
        )
        return _successful(response, correlation_id)

    def _timeout_within_deadline(self, correlation_id: str) -> tuple[float, float]:
        """This exchange's (connect, read) timeouts: the configured ones, shortened to what
        is left of the request's deadline; refuses (nothing sent) when too little is left."""
        timeout = timeout_within(self._timeout, budget.remaining())
        if timeout is None:
            raise CoreAPIUnavailable(
                UNAVAILABLE_MESSAGE, detail="deadline", correlation_id=correlation_id
            )
        return timeout

    @contextlib.contextmanager
    def _slot(self, correlation_id: str) -> Iterator[None]:
        """One of this process's `max_concurrent` CoreAPI calls, for one exchange."""
        wait = self._queue_timeout
        left = budget.remaining()
        if left is not None:
            wait = max(0.0, min(wait, left - MIN_ATTEMPT_SECONDS))
        if not self._slots.acquire(timeout=wait):
            logger.warning("CoreAPI calls at the limit; refused correlation_id=%s", correlation_id)
            raise CoreAPIUnavailable(BUSY_MESSAGE, detail="busy", correlation_id=correlation_id)
        try:
            yield
        finally:
            self._slots.release()

    def _attempt(
        self,
        request: Request,
        headers: dict[str, str],
        body: bytes | None,
        timeout: tuple[float, float],
        correlation_id: str,
        attempt: int,
    ) -> requests.Response:
        """One HTTP exchange and its log line (never the token, never a body)."""
        method, path, params = request.method, request.path, request.params
        log_path = (
            self._instance_path + path + (f"?{urlencode(params, safe='/')}" if params else "")
        )
        started = time.monotonic()
        try:
            response = self._session.request(
                method,
                self.base_url + self._instance_path + path,
                params=params,
                data=body,
                headers=headers,
                timeout=timeout,
                verify=self._verify,
                # A redirect here is a proxy's sign-in page, and following one would turn
                # a POST into a GET; surface it instead.
                allow_redirects=False,
            )
        except requests.RequestException as exc:
            _log_attempt(method, log_path, type(exc).__name__, started, correlation_id, attempt)
            _observe(method, path, type(exc).__name__, started)
            raise
        _log_attempt(method, log_path, str(response.status_code), started, correlation_id, attempt)
        _observe(method, path, str(response.status_code), started)
        return response

    def _pause(self, attempt: int) -> None:
        # Exponential backoff with jitter, so portal workers do not retry in lockstep; never
        # past the deadline (the next attempt then refuses at once).
        delay = self._backoff * 2 ** (attempt - 1) * random.uniform(0.5, 1.5)
        left = budget.remaining()
        time.sleep(delay if left is None else max(0.0, min(delay, left)))


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


def _observe(method: str, path: str, outcome: str, started: float) -> None:
    seconds = time.monotonic() - started
    for observer in calls.call_observers:
        try:
            observer(method, path, outcome, seconds)
        except Exception:  # metrics must never fail a CoreAPI call
            logger.exception("A CoreAPI call observer failed")


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
        max_concurrent=int(getattr(settings, "COREAPI_MAX_CONCURRENT", DEFAULT_MAX_CONCURRENT)),
        queue_timeout=float(getattr(settings, "COREAPI_QUEUE_TIMEOUT", DEFAULT_QUEUE_TIMEOUT)),
        max_body_bytes=int(getattr(settings, "COREAPI_MAX_BODY_BYTES", MAX_BODY_BYTES)),
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
