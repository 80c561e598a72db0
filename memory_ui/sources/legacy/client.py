"""The one transport to the legacy memory stores (seed 003; docs/legacy-stores.md).

The portal calls them as its own service principal: `token` is a callable that returns a
bearer token for the stores' audience (memory_ui.auth.legacy_app_token in the portal), and
every call names the store and the `scope` explicitly (types.scope_for makes it from the
verified identity).

Faults. Every call has connect and read timeouts, shortened to what is left of the portal
request's overall deadline when a `remaining` callable is given (the portal passes
memory_ui.budget.remaining, so CoreAPI and legacy calls share one budget). Reads
(GET, and the read-only search POST) are retried on failures to connect, dropped
connections and 502/503/504, with exponential backoff and jitter; never after a read
timeout. Creates, edits and deletes are sent once: a retry after a lost response could
apply an edit twice (an insert) or report a delete that worked as a 404.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import requests

from memory_ui.sources.legacy.errors import (
    LegacyOutcomeUnknown,
    LegacyUnauthorized,
    LegacyUnavailable,
    LegacyUnexpectedResponse,
    parse_error,
)
from memory_ui.sources.legacy.types import FULL_NAME, ListPage, MemoryEntry, MemoryStore, parse_page
from memory_ui.transport import MIN_ATTEMPT_SECONDS, exchange, pooled_session, timeout_within

logger = logging.getLogger("memory_ui.sources.legacy")

API = "/api/2.1/unity-catalog/memory-stores"
PERMISSIONS_API = "/api/2.1/unity-catalog/effective-permissions/memory_store"
DEFAULT_CONNECT_TIMEOUT = 3.05
DEFAULT_READ_TIMEOUT = 10.0
DEFAULT_GET_RETRIES = 2
SEARCH_TOP_K_MAX = 50  # seed 003


def _store_path(full_name: str, suffix: str = "") -> str:
    if not FULL_NAME.fullmatch(full_name):
        raise ValueError(f"not a catalog.schema.store name: {full_name!r}")
    return f"{API}/{quote(full_name, safe='')}{suffix}"


def _check(scope: str, path: str | None = None) -> None:
    # Programming errors, hence ValueError: the store would refuse them anyway.
    if not scope:
        raise ValueError("scope must not be empty")
    if path is not None and (not path.startswith("/memories/") or path == "/memories/"):
        raise ValueError("path must start with /memories/ and name an entry")


def _privileges(data: Any) -> frozenset[str]:
    assignments = data["privilege_assignments"]
    if not isinstance(assignments, list):
        raise TypeError("privilege_assignments is not a list")
    return frozenset(
        str(granted["privilege"])
        for assignment in assignments
        for granted in assignment.get("privileges") or ()
    )


class LegacyStoresClient:
    """Calls to one legacy store endpoint over one pooled session; safe to share."""

    def __init__(
        self,
        base_url: str,
        token: Callable[[], str],
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        get_retries: int = DEFAULT_GET_RETRIES,
        backoff: float = 0.2,
        verify: bool | str = True,
        pool_size: int = 10,
        remaining: Callable[[], float | None] | None = None,
        session: requests.Session | None = None,
    ) -> None:
        if not base_url:
            raise ValueError("base_url is required")
        if get_retries < 0 or backoff < 0:
            raise ValueError("get_retries and backoff must not be negative")
        self.base_url = base_url.rstrip("/")
        self._token = token
        self._timeout = (connect_timeout, read_timeout)
        self._get_retries = get_retries
        self._backoff = backoff
        # Passed on every request: REQUESTS_CA_BUNDLE in the environment overrides
        # Session.verify, but not a verify given to the request itself.
        self._verify = verify
        self._remaining = remaining
        self._owns_session = session is None
        self._session = session if session is not None else pooled_session(pool_size, self.base_url)

    def close(self) -> None:
        if self._owns_session:
            self._session.close()

    # --- stores ---------------------------------------------------------------------------

    def list_stores(
        self,
        catalog_name: str,
        schema_name: str,
        *,
        page_token: str | None = None,
        max_results: int | None = None,
    ) -> ListPage[MemoryStore]:
        """One page of the stores of a schema the portal may read."""
        params = _params(
            catalog_name=catalog_name,
            schema_name=schema_name,
            page_token=page_token,
            max_results=max_results,
        )
        data = self._json("GET", API, params=params)
        return self._parsed(lambda: parse_page(data, "memory_stores", MemoryStore.from_json))

    def get_store(self, full_name: str) -> MemoryStore:
        data = self._json("GET", _store_path(full_name))
        return self._parsed(lambda: MemoryStore.from_json(data))

    def store_privileges(self, full_name: str) -> frozenset[str]:
        """The portal's own privileges on the store (e.g. READ / WRITE MEMORY STORE), from
        Unity Catalog's effective permissions: what decides which changes to offer."""
        _store_path(full_name)  # the same name check
        data = self._json("GET", f"{PERMISSIONS_API}/{quote(full_name, safe='')}")
        return self._parsed(lambda: _privileges(data))

    # --- entries: reads -------------------------------------------------------------------

    def list_entries(
        self,
        full_name: str,
        scope: str,
        *,
        path_prefix: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
    ) -> ListPage[MemoryEntry]:
        """One page of a scope's entries, metadata only (contents None)."""
        _check(scope)
        params = _params(
            scope=scope, path_prefix=path_prefix, page_size=page_size, page_token=page_token
        )
        data = self._json("GET", _store_path(full_name, "/entries"), params=params)
        return self._parsed(lambda: parse_page(data, "memory_entries", MemoryEntry.from_json))

    def get_entry(self, full_name: str, scope: str, path: str) -> MemoryEntry:
        _check(scope, path)
        params = {"scope": scope, "path": path}
        data = self._json("GET", _store_path(full_name, "/entries:get"), params=params)
        return self._parsed(lambda: MemoryEntry.from_json(data))

    def search(
        self,
        full_name: str,
        scope: str,
        query: str,
        *,
        path_prefix: str | None = None,
        top_k: int | None = None,
    ) -> list[MemoryEntry]:
        """Keyword search over path, description and contents (a read: retried like GETs)."""
        _check(scope)
        if not query.strip():
            raise ValueError("query must not be empty")
        if top_k is not None and not 1 <= top_k <= SEARCH_TOP_K_MAX:
            raise ValueError(f"top_k must be between 1 and {SEARCH_TOP_K_MAX}")
        body = _params(scope=scope, query=query, path_prefix=path_prefix, top_k=top_k)
        data = self._json("POST", _store_path(full_name, "/entries:search"), body=body, read=True)
        return list(
            self._parsed(lambda: parse_page(data, "memory_entries", MemoryEntry.from_json)).items
        )

    # --- entries: writes (sent once) ------------------------------------------------------

    def create_entry(
        self,
        full_name: str,
        scope: str,
        path: str,
        contents: str = "",
        description: str | None = None,
    ) -> MemoryEntry:
        """A new entry; LegacyConflict (RESOURCE_ALREADY_EXISTS) when the path is taken."""
        _check(scope, path)
        body = _params(path=path, contents=contents, description=description)
        data = self._json(
            "POST", _store_path(full_name, "/entries"), params={"scope": scope}, body=body
        )
        return self._parsed(lambda: MemoryEntry.from_json(data))

    def replace_all(
        self, full_name: str, scope: str, path: str, contents: str, description: str | None = None
    ) -> MemoryEntry:
        return self._edit(
            full_name, scope, path, "replace_all", {"contents": contents}, description
        )

    def str_replace(
        self,
        full_name: str,
        scope: str,
        path: str,
        old_str: str,
        new_str: str,
        description: str | None = None,
    ) -> MemoryEntry:
        """Replace the one occurrence of `old_str`; LegacyBadRequest unless exactly one."""
        if not old_str:
            raise ValueError("old_str must not be empty")
        fields = {"old_str": old_str, "new_str": new_str}
        return self._edit(full_name, scope, path, "str_replace", fields, description)

    def insert(
        self,
        full_name: str,
        scope: str,
        path: str,
        insert_text: str,
        insert_line: int | None = None,
        description: str | None = None,
    ) -> MemoryEntry:
        """Insert after line `insert_line` (0 = top; None = at the end)."""
        fields = _params(insert_text=insert_text, insert_line=insert_line)
        return self._edit(full_name, scope, path, "insert", fields, description)

    def delete_entry(self, full_name: str, scope: str, path: str) -> None:
        _check(scope, path)
        params = {"scope": scope, "path": path}
        self._json("DELETE", _store_path(full_name, "/entries"), params=params)

    def _edit(
        self,
        full_name: str,
        scope: str,
        path: str,
        form: str,
        fields: dict[str, Any],
        description: str | None,
    ) -> MemoryEntry:
        _check(scope, path)
        body = _params(scope=scope, path=path, description=description)
        body[form] = fields
        data = self._json("PATCH", _store_path(full_name, "/entries"), body=body)
        return self._parsed(lambda: MemoryEntry.from_json(data))

    # --- transport ------------------------------------------------------------------------

    def _json(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: dict[str, Any] | None = None,
        read: bool = False,
    ) -> Any:
        """The decoded JSON of the 2xx response; anything else raises LegacyStoreError."""
        response = self._send(method, path, params, body, read or method == "GET")
        try:
            return response.json()
        except ValueError as exc:
            raise LegacyUnexpectedResponse(status=response.status_code, detail="not JSON") from exc

    @staticmethod
    def _parsed[T](parse: Callable[[], T]) -> T:
        try:
            return parse()
        except (ValueError, TypeError) as exc:
            raise LegacyUnexpectedResponse(detail=str(exc)[:200]) from exc

    def _send(
        self,
        method: str,
        path: str,
        params: dict[str, Any] | None,
        body: dict[str, Any] | None,
        read: bool,
    ) -> requests.Response:
        headers = {"Authorization": f"Bearer {self._token()}", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"

        def send(attempt: int) -> requests.Response:
            return self._session.request(
                method,
                f"{self.base_url}{path}",
                params=params,
                data=data,
                headers=headers,
                timeout=self._timeout_within_deadline(),
                verify=self._verify,
                allow_redirects=False,  # a redirect would resend the bearer token elsewhere
            )

        response = exchange(
            send,
            retries=self._get_retries if read else 0,
            write=not read,
            outcome_unknown=lambda exc: LegacyOutcomeUnknown(detail=type(exc).__name__),
            unavailable=lambda exc: LegacyUnavailable(detail=type(exc).__name__),
            pause=self._pause,
        )
        if 200 <= response.status_code < 300:
            return response
        error = parse_error(response.status_code, response.content, response.headers)
        if isinstance(error, LegacyUnauthorized):
            # The portal's own credential was refused: operators must act, users cannot.
            logger.error("Legacy store refused the portal's token: %s", error.error_code)
        raise error

    def _timeout_within_deadline(self) -> tuple[float, float]:
        left = self._remaining() if self._remaining is not None else None
        timeout = timeout_within(self._timeout, left)
        if timeout is None:
            raise LegacyUnavailable(detail="deadline")
        return timeout

    def _pause(self, attempt: int) -> None:
        # Exponential backoff with full jitter, never past the request's deadline.
        delay = random.uniform(0, self._backoff * 2 ** (attempt - 1))
        left = self._remaining() if self._remaining is not None else None
        if left is not None:
            delay = min(delay, max(0.0, left - MIN_ATTEMPT_SECONDS))
        time.sleep(delay)


def _params(**fields: Any) -> dict[str, Any]:
    """Query or body fields without the ones left out (None)."""
    return {name: value for name, value in fields.items() if value is not None}


def client_from_settings(
    settings: Any, token: Callable[[], str], remaining: Callable[[], float | None] | None = None
) -> LegacyStoresClient | None:
    """A client configured from Django-style settings, or None when the legacy stores are
    off (LEGACY_STORES_BASE_URL empty). The caller supplies the token source and the
    deadline, which live outside this package."""
    if not settings.LEGACY_STORES_BASE_URL:
        return None
    return LegacyStoresClient(
        settings.LEGACY_STORES_BASE_URL,
        token,
        connect_timeout=float(settings.LEGACY_STORES_CONNECT_TIMEOUT),
        read_timeout=float(settings.LEGACY_STORES_READ_TIMEOUT),
        get_retries=int(settings.LEGACY_STORES_GET_RETRIES),
        verify=settings.LEGACY_STORES_CA_BUNDLE or True,  # empty: the system trust store
        remaining=remaining,
    )
