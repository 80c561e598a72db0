"""The emulator's WSGI app: the CoreAPI memory contract's endpoints plus the agents listing.

Request pipeline, in the order real CoreAPI's middleware would apply it:
faults -> routing (404/405, no auth needed) -> bearer token (401/503) -> instance id in
the path (403 plain text) -> effective user (403/400) -> the endpoint (400/403/404/413/415;
412 for a conditional write whose If-Match no longer matches, see conditional.py).
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import re
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Unpack
from urllib.parse import unquote

from werkzeug.exceptions import HTTPException
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from devstack import emulators
from devstack.config import COREAPI_HOST, Agent, Fixtures, fixtures, state_dir
from devstack.coreapi import formats
from devstack.coreapi.auth import (
    USER_IDENTITY_HEADER,
    Identity,
    TokenValidator,
    emulator_validator,
    resolve_identity,
)
from devstack.coreapi.conditional import (
    ETAG,
    IF_MATCH,
    PRECONDITION_FAILED_DETAIL,
    IfMatch,
    entity_tag,
    parse_if_match,
)
from devstack.coreapi.faults import DropConnection, Fault, Faults
from devstack.coreapi.openapi import openapi_document
from devstack.coreapi.problems import (
    ApiError,
    InvalidInstance,
    invalid,
    json_response,
    new_trace_id,
    problem,
    quota_exceeded,
)
from devstack.coreapi.store import (
    USER_SCOPE_KEY,
    MemoryDoc,
    MemoryStore,
    PreconditionFailed,
    Write,
)
from devstack.coreapi.validation import (
    READABLE_SCOPES,
    WRITABLE_SCOPES,
    Fields,
    LimitedRequest,
    read_json_object,
    scope_error,
)
from devstack.serve import RunningServer, start_in_thread

log = logging.getLogger("devstack.coreapi")

AGENT_OBJECT_ID = re.compile(
    r"/instances/(?P<instance>[^/]+)/providers/FoundationaLLM\.Agent/agents/(?P<name>[^/]+)"
)
IMPORT_MODES = ("append", "replace")
EntryTransform = Callable[[str, dt.datetime], str]  # (existing markdown, write time) -> new
# Fixed, so the agents listing looks the same on every run.
AGENT_RESOURCE_TIMESTAMP = "2026-01-15T09:00:00+00:00"


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def agent_object_id(instance_id: str, name: str) -> str:
    return f"/instances/{instance_id}/providers/FoundationaLLM.Agent/agents/{name}"


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value else None


_CORRELATION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")  # anything else is not logged


@dataclass(frozen=True)
class Call:
    """One authenticated request: who acts, and the raw request."""

    request: Request
    caller: Identity


class CoreApiEmulator:
    def __init__(
        self, store: MemoryStore, validator: TokenValidator, fixtures: Fixtures, faults: Faults
    ) -> None:
        self.store = store
        self.validator = validator
        self.fixtures = fixtures
        self.faults = faults
        memory = "/instances/<instance_id>/memory"
        self.url_map = Map(
            [
                Rule("/openapi.json", endpoint="openapi", methods=["GET"]),
                Rule(memory, endpoint="get_memory", methods=["GET"]),
                Rule(f"{memory}/append", endpoint="append", methods=["POST"]),
                Rule(f"{memory}/clear", endpoint="clear", methods=["POST"]),
                Rule(f"{memory}/export", endpoint="export", methods=["GET"]),
                Rule(f"{memory}/import", endpoint="import", methods=["POST"]),
                Rule(
                    "/instances/<instance_id>/completions/agents",
                    endpoint="agents",
                    methods=["GET"],
                ),
            ],
            strict_slashes=False,
        )
        self._handlers: dict[str, Callable[[Call], Response]] = {
            "get_memory": self.on_get_memory,
            "append": self.on_append,
            "clear": self.on_clear,
            "export": self.on_export,
            "import": self.on_import,
            "agents": self.on_agents,
        }

    # --- WSGI entry, faults and logging -------------------------------------------------

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        started = time.perf_counter()
        trace_id = new_trace_id()
        request = LimitedRequest(environ)
        try:
            response = self._injected_fault(request, environ) or self.dispatch(request, trace_id)
        except DropConnection:
            self._log(request, "dropped", started, trace_id)
            raise
        self._log(request, str(response.status_code), started, trace_id)
        return response(environ, start_response)

    def _log(self, request: Request, status: str, started: float, trace_id: str) -> None:
        # Method, path, status, duration and the caller's X-Correlation-ID (what ties the
        # portal's log lines to these); never other headers (tokens) or bodies (memory).
        elapsed_ms = (time.perf_counter() - started) * 1000
        correlation = request.headers.get("X-Correlation-ID", "")
        log.info(
            "%s %s %s %.1fms trace=%s correlation=%s",
            request.method,
            request.path,
            status,
            elapsed_ms,
            trace_id,
            correlation if _CORRELATION_ID.fullmatch(correlation) else "-",
        )

    def _injected_fault(self, request: Request, environ: dict[str, Any]) -> Response | None:
        faults = self.faults
        query = environ.get("QUERY_STRING", "")
        fault = faults.strike(
            f"{request.path}?{unquote(query)}" if query else request.path, environ
        )
        if fault is Fault.THROTTLE:
            return quota_exceeded(faults.retry_after_seconds, "CoreAPI")
        if fault is Fault.ERROR:
            return problem(faults.error_status, new_trace_id(), "Injected fault (devstack).")
        return None

    # --- Routing and the authentication pipeline ----------------------------------------

    def dispatch(self, request: Request, trace_id: str) -> Response:
        try:
            endpoint, values = self.url_map.bind_to_environ(request.environ).match()
            if endpoint == "openapi":
                return json_response(openapi_document(request.host_url.rstrip("/")))
            claims = self.validator.validate(request.headers.get("Authorization"))
            self._check_instance(values["instance_id"])
            caller = resolve_identity(
                claims, request.headers.get(USER_IDENTITY_HEADER), self.fixtures
            )
            return self._handlers[endpoint](Call(request, caller))
        except ApiError as exc:
            return exc.response(trace_id)
        except HTTPException as exc:  # NotFound, MethodNotAllowed from routing
            allow = {k: v for k, v in exc.get_headers() if k.lower() == "allow"}
            return problem(exc.code or 500, trace_id, exc.description, headers=allow)
        except sqlite3.OperationalError:
            # Typically the busy timeout under heavy write contention: worth a retry.
            log.exception("storage unavailable trace=%s", trace_id)
            return problem(503, trace_id, "Memory storage is unavailable; try again.")
        except Exception:
            log.exception("unhandled error trace=%s", trace_id)
            return problem(500, trace_id)

    def _check_instance(self, instance_id: str) -> None:
        # GUIDs: compared case-insensitively.
        if instance_id.casefold() != self.fixtures.instance_id.casefold():
            raise InvalidInstance()

    # --- Agents --------------------------------------------------------------------------

    def _readable_agents(self, caller: Identity) -> list[Agent]:
        return sorted(
            (a for a in self.fixtures.agents if caller.owner_key in a.readers),
            key=lambda a: a.name,
        )

    def _resolve_agent(
        self, object_id: str | None, required: bool, caller: Identity, field: str
    ) -> Agent | None:
        """The agent an agentObjectId names, if the caller may read it.

        Unknown agent -> 404; known but not readable by the caller -> 403.
        """
        if not object_id:
            if required:
                raise invalid(field, f"The {field} field is required for scope 'agent'.")
            return None
        match = AGENT_OBJECT_ID.fullmatch(object_id)
        if match is None:
            raise invalid(
                field,
                f"{field} must look like /instances/{{instanceId}}/providers/"
                "FoundationaLLM.Agent/agents/{agentName}.",
            )
        if match["instance"].casefold() != self.fixtures.instance_id.casefold():
            raise invalid(field, f"{field} belongs to another instance.")
        agent = next((a for a in self.fixtures.agents if a.name == match["name"]), None)
        if agent is None:
            raise ApiError(404, f"Agent '{match['name']}' was not found.")
        if caller.owner_key not in agent.readers:
            raise ApiError(403, f"You do not have access to agent '{agent.name}'.")
        return agent

    def _agent_resource(self, agent: Agent, role: str) -> dict[str, Any]:
        return {
            "resource": {
                "type": "generic-agent",
                "name": agent.name,
                "object_id": agent_object_id(self.fixtures.instance_id, agent.name),
                "display_name": agent.display_name,
                "description": agent.description,
                "cost_center": None,
                "inline_context": False,
                "sessions_enabled": True,
                "show_message_tokens": False,
                "show_message_rating": True,
                "expiration_date": None,
                "created_on": AGENT_RESOURCE_TIMESTAMP,
                "updated_on": AGENT_RESOURCE_TIMESTAMP,
                "created_by": "devstack",
                "updated_by": "devstack",
                "deleted": False,
            },
            "roles": [role],
            "actions": [],
            "properties": {"enabled": True},
        }

    def on_agents(self, call: Call) -> Response:
        caller = call.caller
        return json_response(
            [
                self._agent_resource(a, a.readers[caller.owner_key])
                for a in self._readable_agents(caller)
            ]
        )

    # --- Memory --------------------------------------------------------------------------

    def _key(self, agent: Agent | None) -> str:
        return agent_object_id(self.fixtures.instance_id, agent.name) if agent else USER_SCOPE_KEY

    def _memory_json(
        self, scope: str, caller: Identity, agent: Agent | None, doc: MemoryDoc
    ) -> Response:
        """The MemoryResponse; a stored (user or agent) document also gets its ETag."""
        headers = {ETAG: entity_tag(doc.content_markdown)} if scope != "combined" else None
        return json_response(
            {
                "scope": scope,
                "upn": caller.upn,
                "user_name": caller.user_name,
                "name": caller.name,
                "agent_object_id": self._key(agent) or None,
                "agent_name": agent.name if agent else None,
                "content_markdown": doc.content_markdown,
                "created_on": _iso(doc.created_on),
                "updated_on": _iso(doc.updated_on),
            },
            headers=headers,
        )

    def _read(self, scope: str, caller: Identity, agent: Agent | None) -> MemoryDoc:
        owner = caller.owner_key
        if scope != "combined":
            return self.store.read(owner, self._key(agent))
        docs = [self.store.read(owner, USER_SCOPE_KEY)]
        if agent:
            docs.append(self.store.read(owner, self._key(agent)))
        created = [d.created_on for d in docs if d.created_on]
        updated = [d.updated_on for d in docs if d.updated_on]
        # A composition has no profile of its own: report the span of the parts.
        return MemoryDoc(
            formats.combine(*(d.content_markdown for d in docs)),
            min(created) if created else None,
            max(updated) if updated else None,
        )

    def _query_target(self, call: Call, scope_required: bool) -> tuple[str, Agent | None]:
        args = call.request.args
        scope = args.get("scope") or None  # ?scope= counts as absent
        if scope is None:
            if scope_required:
                raise invalid("scope", "The scope query parameter is required.")
            scope = "combined"
        problem_text = scope_error(scope, READABLE_SCOPES)
        if problem_text:
            raise invalid("scope", problem_text)
        if scope == "user":
            return scope, None  # agentObjectId is not used for user memory
        agent = self._resolve_agent(
            args.get("agentObjectId"), scope == "agent", call.caller, "agentObjectId"
        )
        return scope, agent

    def on_get_memory(self, call: Call) -> Response:
        scope, agent = self._query_target(call, scope_required=False)
        return self._memory_json(scope, call.caller, agent, self._read(scope, call.caller, agent))

    def on_export(self, call: Call) -> Response:
        scope, agent = self._query_target(call, scope_required=True)
        body = self._read(scope, call.caller, agent).content_markdown
        return Response(body, mimetype="text/markdown")

    def _update(
        self,
        call: Call,
        scope: str,
        object_id: str | None,
        transform: EntryTransform,
        if_match: IfMatch | None = None,
    ) -> Response:
        """Resolve the target document, then rewrite it atomically at one timestamp.

        With If-Match, the store compares it with the current document under the same write
        lock as the write itself: a mismatch is 412 and nothing is written.
        """
        agent = None
        if scope == "agent":
            agent = self._resolve_agent(object_id, True, call.caller, "agent_object_id")
        at = utcnow()
        try:
            doc = self.store.update(
                call.caller.owner_key,
                self._key(agent),
                lambda existing: transform(existing, at),
                at,
                precondition=if_match.matches if if_match else None,
            )
        except PreconditionFailed as exc:
            raise ApiError(412, PRECONDITION_FAILED_DETAIL) from exc
        return self._memory_json(scope, call.caller, agent, doc)

    @staticmethod
    def _if_match(call: Call, fields: Fields) -> IfMatch | None:
        """The If-Match header (None if absent); a malformed one joins the field errors."""
        try:
            return parse_if_match(call.request.headers.get(IF_MATCH))
        except ValueError as exc:
            fields.error(IF_MATCH, str(exc))
            return None

    @staticmethod
    def _write_target(fields: Fields) -> tuple[str, str | None]:
        """scope and agent_object_id of a write body, errors reported with the other fields."""
        scope = fields.scope(WRITABLE_SCOPES)
        object_id = fields.string("agent_object_id")
        if scope == "agent" and not object_id and "agent_object_id" not in fields.errors:
            fields.error(
                "agent_object_id", "The agent_object_id field is required for scope 'agent'."
            )
        return scope, object_id

    def on_append(self, call: Call) -> Response:
        fields = Fields(read_json_object(call.request))
        scope, object_id = self._write_target(fields)
        content = fields.text("content_markdown")
        reason = fields.string("reason")
        operation_id = fields.string("operation_id")
        session_id = fields.string("session_id")
        fields.string("agent_name")  # type-checked only: the agent resource's name wins
        fields.check()
        return self._update(
            call,
            scope,
            object_id,
            lambda existing, at: formats.append_entry(
                existing, content, at, reason, operation_id, session_id
            ),
        )

    def on_clear(self, call: Call) -> Response:
        fields = Fields(read_json_object(call.request))
        scope, object_id = self._write_target(fields)
        if fields.boolean("confirm") is not True and "confirm" not in fields.errors:
            fields.error("confirm", "confirm must be true to clear memory.")
        if_match = self._if_match(call, fields)
        fields.check()
        return self._update(call, scope, object_id, lambda _existing, _at: "", if_match)

    def on_import(self, call: Call) -> Response:
        fields = Fields(read_json_object(call.request))
        scope, object_id = self._write_target(fields)
        content = fields.text("content_markdown")
        mode = fields.string("mode")
        if mode is None:
            mode = "append"
        elif mode not in IMPORT_MODES:
            fields.error("mode", f"mode must be one of {', '.join(IMPORT_MODES)}.")
        if_match = self._if_match(call, fields)
        fields.check()
        if mode == "replace":
            return self._update(call, scope, object_id, lambda _existing, _at: content, if_match)
        return self._update(
            call,
            scope,
            object_id,
            lambda existing, at: formats.import_entry(existing, content, at),
            if_match,
        )


def demo_writes(fx: Fixtures) -> list[Write]:
    """fixtures.toml [[memory]] as appends at their fixed times, formatted like live ones."""
    writes = []
    for item in fx.memory:
        at = dt.datetime.fromisoformat(item["at"])
        key = (
            agent_object_id(fx.instance_id, item["agent"])
            if item["scope"] == "agent"
            else USER_SCOPE_KEY
        )
        transform = functools.partial(
            formats.append_entry,
            content=item["content"],
            at=at,
            reason=item.get("reason"),
            operation_id=item.get("operation_id"),
            session_id=item.get("session_id"),
        )
        writes.append(Write(item["upn"].casefold(), key, transform, at))
    return writes


def open_store(home: Path, fx: Fixtures) -> MemoryStore:
    """`{home}/coreapi.sqlite3`, seeded with the demo memory when first created."""
    store = MemoryStore(home)
    store.seed_once(demo_writes(fx))
    return store


class Options(emulators.Options, total=False):
    fixtures_: Fixtures | None  # default: devstack/fixtures.toml


def build(**options: Unpack[Options]) -> CoreApiEmulator:
    """The app over `{home}/coreapi.sqlite3`, seeded with the demo memory on first use.

    Faults default to the DEVSTACK_COREAPI_FAULT_* environment (Faults.from_env()).
    """
    home = options.get("home") or state_dir()
    fx = options.get("fixtures_") or fixtures()
    validator = emulator_validator(home, options, fx.tenant_id, fx.core_api_audience)
    faults = options.get("faults")
    return CoreApiEmulator(
        open_store(home, fx), validator, fx, faults if faults is not None else Faults.from_env()
    )


def start(host: str = COREAPI_HOST, port: int = 0, **options: Unpack[Options]) -> RunningServer:
    """Start on a free port (port=0) in a thread (tests); the caller stops it."""
    return start_in_thread(build(**options), host, port)


def emulator(running: RunningServer) -> CoreApiEmulator:
    """The app behind a started server, e.g. to switch `emulator(server).faults` in a test."""
    app = running.server.app
    assert isinstance(app, CoreApiEmulator)
    return app
