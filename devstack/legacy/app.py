"""The legacy memory store emulator's WSGI app: seed 003's store, entry and conversation
endpoints (conversations.py).

Pipeline: faults -> routing (404/405) -> bearer token (401; 503 when the IdP's keys cannot be
fetched) -> the store (404 unknown, 403 without the privilege) -> the request (400/409/404).
Errors are Databricks-shaped: `{"error_code": "...", "message": "..."}`.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Unpack

from werkzeug.exceptions import HTTPException, MethodNotAllowed
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from devstack import emulators
from devstack.config import LEGACY_HOST, fixtures, state_dir
from devstack.coreapi.auth import TokenValidator, emulator_validator
from devstack.coreapi.faults import DropConnection, Fault, Faults
from devstack.coreapi.problems import ApiError, json_response
from devstack.coreapi.validation import LimitedRequest, read_json_object
from devstack.legacy import edits
from devstack.legacy.conversations import ConversationApi, ConversationStore
from devstack.legacy.edits import Invalid
from devstack.legacy.formats import entry_json, page, store_json
from devstack.legacy.store import (
    READ,
    WRITE,
    AlreadyExists,
    Entry,
    LegacyStore,
    NotFound,
    StoreRow,
    audience,
)
from devstack.serve import RunningServer, start_in_thread

log = logging.getLogger("devstack.legacy")

BASE = "/api/2.1/unity-catalog/memory-stores"
CONVERSATIONS = "/api/2.1/unity-catalog/conversations"
# Unity Catalog's effective-permissions API for a memory store (the seed names the
# privileges, not how to read them; docs/legacy-stores.md, choice 13).
PERMISSIONS = "/api/2.1/unity-catalog/effective-permissions/memory_store"
# Status -> error_code for errors raised by the shared helpers (token, body parsing).
_CODES = {
    400: "MALFORMED_REQUEST",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "ENDPOINT_NOT_FOUND",
    405: "ENDPOINT_NOT_FOUND",
    413: "MALFORMED_REQUEST",
    415: "MALFORMED_REQUEST",
    429: "REQUEST_LIMIT_EXCEEDED",
    500: "INTERNAL_ERROR",
    503: "TEMPORARILY_UNAVAILABLE",
}


class LegacyError(Exception):
    def __init__(self, status: int, error_code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message


def error_response(
    status: int, error_code: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    return json_response({"error_code": error_code, "message": message}, status, headers=headers)


@dataclass(frozen=True)
class Call:
    request: Request
    principal: str
    store: StoreRow | None  # None for the store listing


class LegacyEmulator:
    def __init__(self, store: LegacyStore, validator: TokenValidator, faults: Faults) -> None:
        self.store = store
        self.validator = validator
        self.faults = faults
        one = f"{BASE}/<full_name>"
        self.url_map = Map(
            [
                Rule(BASE, endpoint="list_stores", methods=["GET"]),
                Rule(one, endpoint="get_store", methods=["GET"]),
                Rule(f"{one}/entries", endpoint="list_entries", methods=["GET"]),
                Rule(f"{one}/entries", endpoint="create_entry", methods=["POST"]),
                Rule(f"{one}/entries", endpoint="update_entry", methods=["PATCH"]),
                Rule(f"{one}/entries", endpoint="delete_entry", methods=["DELETE"]),
                Rule(f"{one}/entries:get", endpoint="get_entry", methods=["GET"]),
                Rule(f"{one}/entries:search", endpoint="search", methods=["POST"]),
                Rule(f"{PERMISSIONS}/<full_name>", endpoint="permissions", methods=["GET"]),
                *_conversation_rules(),
            ],
            strict_slashes=False,
        )
        # endpoint -> (privilege needed on the store, handler)
        self._handlers: dict[str, tuple[str | None, Callable[[Call], Response]]] = {
            "list_stores": (None, self.on_list_stores),
            "permissions": (None, self.on_permissions),
            "get_store": (READ, self.on_get_store),
            "list_entries": (READ, self.on_list_entries),
            "get_entry": (READ, self.on_get_entry),
            "search": (READ, self.on_search),
            "create_entry": (WRITE, self.on_create_entry),
            "update_entry": (WRITE, self.on_update_entry),
            "delete_entry": (WRITE, self.on_delete_entry),
        }

        self.conversations = ConversationApi(
            ConversationStore(store.db),
            self._authorize,
            lambda message: LegacyError(404, "RESOURCE_DOES_NOT_EXIST", message),
            read_json_object,
        )

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        started = time.perf_counter()
        request = LimitedRequest(environ)
        try:
            response = self._injected_fault(request, environ) or self.dispatch(request)
        except DropConnection:
            self._log(request, "dropped", started)
            raise
        self._log(request, str(response.status_code), started)
        return response(environ, start_response)

    def _log(self, request: Request, status: str, started: float) -> None:
        # Method, path, status and duration only: queries name scopes and paths (personal).
        elapsed_ms = (time.perf_counter() - started) * 1000
        log.info("%s %s %s %.1fms", request.method, request.path, status, elapsed_ms)

    def _injected_fault(self, request: Request, environ: dict[str, Any]) -> Response | None:
        faults = self.faults
        fault = faults.strike(request.full_path.rstrip("?"), environ)
        if fault is Fault.THROTTLE:
            return error_response(
                429,
                "REQUEST_LIMIT_EXCEEDED",
                "Too many requests (devstack fault injection).",
                {"Retry-After": str(faults.retry_after_seconds)},
            )
        if fault is Fault.ERROR:
            code = "TEMPORARILY_UNAVAILABLE" if faults.error_status == 503 else "INTERNAL_ERROR"
            return error_response(faults.error_status, code, "Injected fault (devstack).")
        return None

    def dispatch(self, request: Request) -> Response:
        try:
            endpoint, values = self.url_map.bind_to_environ(request.environ).match()
            claims = self.validator.validate(request.headers.get("Authorization"))
            principal = _principal(claims)
            if endpoint.startswith("conversation."):
                handler_name = endpoint.removeprefix("conversation.")
                return getattr(self.conversations, handler_name)(request, principal, **values)
            privilege, handler = self._handlers[endpoint]
            store = self._store(values["full_name"], principal, privilege) if privilege else None
            return handler(Call(request, principal, store))
        except LegacyError as exc:
            return error_response(exc.status, exc.error_code, exc.message)
        except Invalid as exc:
            return error_response(400, "INVALID_PARAMETER_VALUE", str(exc))
        except ApiError as exc:
            return error_response(
                exc.status, _CODES.get(exc.status, "INTERNAL_ERROR"), exc.detail, exc.headers
            )
        except MethodNotAllowed as exc:
            return error_response(
                405, "ENDPOINT_NOT_FOUND", "Method not allowed.", dict(exc.get_headers())
            )
        except HTTPException as exc:
            status = exc.code or 500
            return error_response(status, _CODES.get(status, "INTERNAL_ERROR"), "No such endpoint.")

    def _authorize(self, full_name: str, principal: str, privilege: str) -> None:
        self._store(full_name, principal, privilege)

    def _store(self, full_name: str, principal: str, privilege: str) -> StoreRow:
        row = self.store.store(full_name)
        if row is None:
            raise LegacyError(
                404, "RESOURCE_DOES_NOT_EXIST", f"Memory store '{full_name}' does not exist."
            )
        if privilege not in self.store.privileges(full_name, principal):
            raise LegacyError(
                403,
                "PERMISSION_DENIED",
                f"User does not have {privilege} on Memory Store '{full_name}'.",
            )
        return row

    # --- stores ------------------------------------------------------------------------

    def on_list_stores(self, call: Call) -> Response:
        args = call.request.args
        catalog = edits.check_text(args.get("catalog_name") or None, "catalog_name", True)
        schema = edits.check_text(args.get("schema_name") or None, "schema_name", True)
        limit = edits.page_size(
            args.get("max_results"), edits.STORES_PAGE_DEFAULT, edits.STORES_PAGE_CAP, "max_results"
        )
        after = edits.decode_token(args.get("page_token"))
        prefix = f"{catalog}.{schema}."
        readable = [
            row
            for row in self.store.stores()
            if row.full_name.startswith(prefix)
            and row.full_name > after
            and READ in self.store.privileges(row.full_name, call.principal)
        ]
        return json_response(page("memory_stores", readable, limit, store_json, "full_name"))

    def on_permissions(self, call: Call) -> Response:
        """The caller's own privileges on a store (none: an empty list). Asking for another
        principal's is refused: only the caller's own are shown."""
        full_name = call.request.path.rsplit("/", 1)[-1]  # full names have no "/"
        principal = call.request.args.get("principal") or call.principal
        if principal != call.principal:
            raise LegacyError(
                403, "PERMISSION_DENIED", "Only the caller's own privileges can be read."
            )
        if self.store.store(full_name) is None:
            raise LegacyError(
                404, "RESOURCE_DOES_NOT_EXIST", f"Memory store '{full_name}' does not exist."
            )
        granted = sorted(self.store.privileges(full_name, principal))
        assignment = {
            "principal": principal,
            "privileges": [{"privilege": privilege} for privilege in granted],
        }
        return json_response({"privilege_assignments": [assignment]})

    def on_get_store(self, call: Call) -> Response:
        assert call.store is not None
        return json_response(store_json(call.store))

    # --- entries -----------------------------------------------------------------------

    def on_list_entries(self, call: Call) -> Response:
        assert call.store is not None
        args = call.request.args
        scope = edits.check_scope(args.get("scope"))
        limit = edits.page_size(
            args.get("page_size"), edits.ENTRIES_PAGE_DEFAULT, edits.ENTRIES_PAGE_CAP, "page_size"
        )
        after = edits.decode_token(args.get("page_token"))
        found = self.store.entries(
            call.store.full_name, scope, args.get("path_prefix") or "", after, limit + 1
        )
        return json_response(
            page("memory_entries", found, limit, lambda e: entry_json(e, False), "path")
        )

    def on_get_entry(self, call: Call) -> Response:
        assert call.store is not None
        args = call.request.args
        scope = edits.check_scope(args.get("scope"))
        path = edits.check_path(args.get("path"))
        return json_response(entry_json(self._existing(call.store, scope, path)))

    def _existing(self, store: StoreRow, scope: str, path: str) -> Entry:
        entry = self.store.entry(store.full_name, scope, path)
        if entry is None:
            raise _no_entry(path)
        return entry

    def on_search(self, call: Call) -> Response:
        assert call.store is not None
        body = read_json_object(call.request)
        scope = edits.check_scope(body.get("scope"))
        query = edits.check_text(body.get("query"), "query", required=True) or ""
        if not query.strip():
            raise Invalid("query must not be empty.")
        prefix = edits.check_text(body.get("path_prefix"), "path_prefix") or ""
        top_k = body.get("top_k", edits.SEARCH_TOP_K_DEFAULT)
        if isinstance(top_k, bool) or not isinstance(top_k, int):
            raise Invalid("top_k must be an integer.")
        if not 1 <= top_k <= edits.SEARCH_TOP_K_MAX:
            raise Invalid(f"top_k must be between 1 and {edits.SEARCH_TOP_K_MAX}.")
        candidates = self.store.entries(call.store.full_name, scope, prefix, "", 2**31)
        scored = [
            (edits.search_score(query, e.path, e.description, e.contents), e) for e in candidates
        ]
        ranked = sorted(
            (item for item in scored if item[0]), key=lambda item: (-item[0], item[1].path)
        )
        return json_response(
            {"memory_entries": [{**entry_json(e), "score": s} for s, e in ranked[:top_k]]}
        )

    def on_create_entry(self, call: Call) -> Response:
        assert call.store is not None
        scope = edits.check_scope(call.request.args.get("scope"))
        body = read_json_object(call.request)
        path = edits.check_path(body.get("path"))
        contents = edits.check_text(body.get("contents"), "contents") or ""
        description = edits.check_description(body.get("description")) or ""
        now = dt.datetime.now(dt.UTC)
        entry = Entry(call.store.full_name, scope, path, contents, description, now, now)
        try:
            self.store.create(entry)
        except AlreadyExists as exc:
            raise LegacyError(
                409, "RESOURCE_ALREADY_EXISTS", f"Memory entry '{path}' already exists."
            ) from exc
        return json_response(entry_json(entry))

    def on_update_entry(self, call: Call) -> Response:
        assert call.store is not None
        body = read_json_object(call.request)
        scope = edits.check_scope(body.get("scope"))
        path = edits.check_path(body.get("path"))
        description = edits.check_description(body.get("description"))
        form, fields = edits.edit_form(body)

        def edit(current: Entry) -> Entry:
            return replace(
                current,
                contents=edits.apply_edit(current.contents, form, fields),
                description=current.description if description is None else description,
                update_time=dt.datetime.now(dt.UTC),
            )

        try:
            updated = self.store.update(call.store.full_name, scope, path, edit)
        except NotFound as exc:
            raise _no_entry(path) from exc
        return json_response(entry_json(updated))

    def on_delete_entry(self, call: Call) -> Response:
        assert call.store is not None
        args = call.request.args
        scope = edits.check_scope(args.get("scope"))
        path = edits.check_path(args.get("path"))
        try:
            self.store.delete(call.store.full_name, scope, path)
        except NotFound as exc:
            raise _no_entry(path) from exc
        return json_response({})


def _conversation_rules() -> list[Rule]:
    one = f"{CONVERSATIONS}/<conversation_id>"
    item = f"{one}/items/<item_id>"
    return [
        Rule(CONVERSATIONS, endpoint="conversation.create", methods=["POST"]),
        Rule(one, endpoint="conversation.get", methods=["GET"]),
        Rule(one, endpoint="conversation.update", methods=["POST"]),
        Rule(one, endpoint="conversation.delete", methods=["DELETE"]),
        Rule(f"{one}/items", endpoint="conversation.add_items", methods=["POST"]),
        Rule(f"{one}/items", endpoint="conversation.list_items", methods=["GET"]),
        Rule(item, endpoint="conversation.get_item", methods=["GET"]),
        Rule(item, endpoint="conversation.delete_item", methods=["DELETE"]),
    ]


def _no_entry(path: str) -> LegacyError:
    return LegacyError(404, "RESOURCE_DOES_NOT_EXIST", f"Memory entry '{path}' does not exist.")


def _principal(claims: dict[str, Any]) -> str:
    """Unity Catalog names a user by UPN and a service principal by its application id."""
    for claim in ("upn", "azp", "appid"):
        value = claims.get(claim)
        if isinstance(value, str) and value:
            return value
    raise LegacyError(401, "UNAUTHENTICATED", "The token names no principal.")


def build(**options: Unpack[emulators.Options]) -> LegacyEmulator:
    """The app over `{home}/legacy.sqlite3`, seeded with the demo stores on first use.

    No faults unless given (the legacy stores read no fault environment).
    """
    home = options.get("home") or state_dir()
    store = LegacyStore(home)
    store.seed_once()
    validator = emulator_validator(home, options, fixtures().tenant_id, audience())
    return LegacyEmulator(store, validator, options.get("faults") or Faults())


def start(
    host: str = LEGACY_HOST, port: int = 0, **options: Unpack[emulators.Options]
) -> RunningServer:
    """Start on a free port (port=0) in a thread (tests); the caller stops it."""
    return start_in_thread(build(**options), host, port)


def emulator(running: RunningServer) -> LegacyEmulator:
    app = running.server.app
    assert isinstance(app, LegacyEmulator)
    return app
