"""The memory-api emulator's WSGI app: the checks every route shares, in seed 001's order.

Pipeline: routing (404/405) -> ServiceAccount token (401; 403 when neither exact-listed nor
in an allowed namespace) -> Enterprise route on Core (403 enterprise_required) -> the scope
parameters (400: user_id instead of virtual_user_id, a missing workspace) -> the tenant
check (403 with the seed's body) -> the subject check (403) -> the handler, which matches
rows by the workspace as a UUID (500 on a name). Errors are `{"error": "..."}` (M1).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from werkzeug.exceptions import HTTPException, MethodNotAllowed
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from devstack.config import MEMORY_API_HOST, state_dir
from devstack.coreapi.problems import ApiError
from devstack.coreapi.validation import LimitedRequest, read_json_object
from devstack.memory_api import institutional, memories
from devstack.memory_api.errors import Refused, error
from devstack.memory_api.identity import (
    Caller,
    NotAllowed,
    Settings,
    Unauthenticated,
    Verifier,
    load_settings,
)
from devstack.memory_api.routes import BASE, ROUTES, Route, openapi
from devstack.memory_api.store import MemoryStore, NotFound
from devstack.pki import ensure_pki
from devstack.serve import RunningServer, start_in_thread

log = logging.getLogger("devstack.memory_api")

EDITIONS = ("core", "enterprise")
PROOF_HEADER = "X-Omnia-Subject-Proof"


@dataclass(frozen=True)
class Call:
    """One request that passed the shared checks."""

    request: Request
    route: Route
    caller: Caller | None  # None: internal service authentication disabled
    workspace: str | None  # as the caller gave it (or our UID); None on routes without one
    body: dict[str, Any]
    values: dict[str, str]

    @property
    def actor(self) -> str:
        return self.caller.subject if self.caller else "anonymous"

    def rows_key(self) -> str:
        """The workspace as the rows' UUID column takes it: a name fails there, as the
        real store's cast does (seed: "returns 500 when given the name")."""
        assert self.workspace is not None
        try:
            return str(uuid.UUID(self.workspace))
        except ValueError as exc:
            raise Refused(500, "internal server error") from exc  # M1: no detail leaks

    def arg(self, name: str) -> str | None:
        return self.request.args.get(name) or None


class MemoryApiEmulator:
    def __init__(
        self,
        store: MemoryStore,
        verifier: Verifier,
        settings: Settings,
        edition: str = "enterprise",
        internal_auth: bool = True,
        workspace_resolved: bool = True,
    ) -> None:
        if edition not in EDITIONS:
            raise ValueError(f"edition must be one of {', '.join(EDITIONS)}")
        self.store = store
        self.verifier = verifier
        self.settings = settings
        self.edition = edition
        self.internal_auth = internal_auth
        self.workspace_resolved = workspace_resolved
        self.routes = {route.endpoint: route for route in ROUTES}
        # Each endpoint's handler, found once: a route without one fails here, not at a call.
        self.handlers = {
            route.endpoint: getattr(memories, route.endpoint, None)
            or getattr(institutional, route.endpoint)
            for route in ROUTES
        }
        self.url_map = Map(
            [Rule(r.url, endpoint=r.endpoint, methods=[r.method]) for r in ROUTES]
            + [
                Rule(f"{BASE}/openapi.yaml", endpoint="openapi", methods=["GET"]),
                Rule("/docs", endpoint="docs", methods=["GET"]),
            ],
            strict_slashes=False,
        )

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        started = time.perf_counter()
        request = LimitedRequest(environ)
        response = self.dispatch(request)
        # Method, path, status and duration only: queries name pseudonymised people.
        elapsed_ms = (time.perf_counter() - started) * 1000
        log.info("%s %s %s %.1fms", request.method, request.path, response.status_code, elapsed_ms)
        return response(environ, start_response)

    def dispatch(self, request: Request) -> Response:
        try:
            endpoint, values = self.url_map.bind_to_environ(request.environ).match()
            if endpoint == "openapi":
                return Response(openapi(request.host_url.rstrip("/")), mimetype="application/yaml")
            if endpoint == "docs":
                return _docs()
            route = self.routes[endpoint]
            call = self._checked(request, route, values)
            return self.handlers[endpoint](self, call)
        except Refused as exc:
            return error(exc.status, exc.message)
        except NotFound:
            return error(404, "memory not found")
        except ApiError as exc:  # body parsing (400/413/415)
            return error(exc.status, exc.detail)
        except MethodNotAllowed as exc:
            response = error(405, "method not allowed")
            response.headers.update(dict(exc.get_headers()))
            response.headers["Content-Type"] = "application/json"
            return response
        except HTTPException as exc:
            return error(exc.code or 500, "no such route")

    # --- the shared checks, in order ---------------------------------------------------

    def _checked(self, request: Request, route: Route, values: dict[str, str]) -> Call:
        caller = self._caller(request)
        if route.enterprise and self.edition == "core":
            raise Refused(403, "enterprise_required")
        body = read_json_object(request) if _has_body(request) else {}
        if route.workspace.startswith("query") and "user_id" in request.args:
            raise Refused(400, "user_id is not a query parameter; send virtual_user_id")
        workspace = self._workspace(request, route, body)
        if self.internal_auth and caller is not None:
            self._check_subject(request, caller, _named_users(request, route, body))
        return Call(request, route, caller, workspace, body, values)

    def _caller(self, request: Request) -> Caller | None:
        if not self.internal_auth:
            return None
        try:
            return self.verifier.caller(request.headers.get("Authorization"))
        except Unauthenticated as exc:
            raise Refused(401, str(exc)) from exc
        except NotAllowed as exc:
            raise Refused(403, str(exc)) from exc

    def _workspace(self, request: Request, route: Route, body: dict[str, Any]) -> str | None:
        if route.workspace == "none":
            return None
        name = "workspace" if route.workspace.startswith("query") else "workspace_id"
        value = request.args.get(name) if name == "workspace" else body.get(name)
        if value is not None and not isinstance(value, str):
            raise Refused(400, f"{name} must be a string")
        if not value:
            if not route.workspace.endswith("?"):
                raise Refused(400, f"{name} is required")
            if not self.workspace_resolved:
                raise Refused(400, f"{name} is required: this memory-api has no workspace")  # M11
            return self.settings.workspace.uid
        own = self.settings.workspace
        if self.workspace_resolved and value not in (own.uid, own.name):
            raise Refused(
                403, f'workspace "{value}" is not this memory-api\'s workspace ("{own.name}")'
            )
        return value

    def _check_subject(self, request: Request, caller: Caller, named: list[str]) -> None:
        """Seed 001's table. A proof, when sent, binds every caller to its user; without
        one only an exact-listed system service may name a user (M3)."""
        if not named:
            return
        try:
            proven = self.verifier.proven_user(request.headers.get(PROOF_HEADER))
        except Unauthenticated as exc:
            raise Refused(401, str(exc)) from exc
        if proven is None:
            if caller.system_service:
                return
            raise Refused(403, "a user is named without a subject proof")
        if any(user != proven for user in named):
            raise Refused(403, "the request names a user other than the verified subject")


def _has_body(request: Request) -> bool:
    # An empty POST (POST /admin/reembed with its defaults) has no body to parse.
    return bool(request.content_length or request.headers.get("Transfer-Encoding"))


def _named_users(request: Request, route: Route, body: dict[str, Any]) -> list[str]:
    if route.user == "query":
        value = request.args.get("virtual_user_id")
        return [value] if value else []
    if route.user == "scope":
        scope = body.get("scope")
        value = scope.get("virtual_user_id") if isinstance(scope, dict) else None
        return [value] if value else []
    if route.user == "body":
        value = body.get("virtual_user_id")
        return [value] if value else []
    if route.user == "retrieve":
        lookups = body.get("structured_lookups") or []
        if not isinstance(lookups, list):
            raise Refused(400, "structured_lookups must be a list")
        users = [body.get("user_id")] + [
            lookup.get("user_id") for lookup in lookups if isinstance(lookup, dict)
        ]
        return [u for u in users if u]
    return []


def _docs() -> Response:
    page = (
        "<!doctype html><title>memory-api</title><h1>memory-api (devstack emulator)</h1>"
        f'<p>The contract: <a href="{BASE}/openapi.yaml">{BASE}/openapi.yaml</a>.</p>'
    )
    return Response(page, mimetype="text/html")


def build(
    home: Path | None = None,
    edition: str = "enterprise",
    internal_auth: bool = True,
    workspace_resolved: bool = True,
) -> MemoryApiEmulator:
    """The app over `{home}/memory-api.sqlite3`, seeded with the demo memories on first use;
    tokens are checked with the devstack's signing key in `home` (devstack.pki)."""
    home = home or state_dir()
    settings = load_settings()
    store = MemoryStore(home, settings)
    store.seed_once()
    # Seed 001: the dimension-change consent is deleted on any startup that needs no
    # reshape; the emulator's configured dimension never changes, so none ever does (M21).
    store.drop_meta("pending_target_dimension")
    verifier = Verifier(ensure_pki(home), settings)
    return MemoryApiEmulator(store, verifier, settings, edition, internal_auth, workspace_resolved)


def start(host: str = MEMORY_API_HOST, port: int = 0, **options: Any) -> RunningServer:
    """Start on a free port (port=0) in a thread (tests); the caller stops it."""
    return start_in_thread(build(**options), host, port)


def emulator(running: RunningServer) -> MemoryApiEmulator:
    app = running.server.app
    assert isinstance(app, MemoryApiEmulator)
    return app
