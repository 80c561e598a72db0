"""An in-memory stand-in for `CoreAPIClient`, for view tests that need no servers.

A subclass of the real client that answers where a memory call would leave for CoreAPI
(`_memory`, `_markdown`), so the public methods, their signatures and argument checks are
the real client's and cannot drift from them. What it keeps:

- One user (the fake ignores who the token belongs to): one user document, and one
  document per agent object id. Support calls (`auth.user_identity` set) read and write
  the same documents; only the `upn` of the answers follows the identity header.
- Documents change the way the devstack emulator changes them: appends and append
  imports use `devstack.coreapi.formats` (so headings look like CoreAPI's), a replace
  import stores the text as given, a clear stores "" and, like any write, moves
  `updated_on` (a fake clock that advances one second per write, and never runs behind
  the real one, since the portal compares entry stamps with its own clock).
- `combined` is the user document and the agent's joined as `formats.combine` joins them,
  with the earliest `created_on` and the latest `updated_on` of the parts.
- Argument checks are the real client's: a scope it would refuse, an agent scope without
  an object id, or empty content raise ValueError (a programming error in the portal); a
  body over COREAPI_MAX_BODY_BYTES is `CoreAPIRequestTooLarge`, not sent (not recorded).
  An object id that is not one of the fake's agents is `CoreAPINotFound`, like CoreAPI.

Failure injection: `fake.fail("get_memory", CoreAPIForbidden(...))` makes EVERY later
call of that method raise (a copy of) the error until `fake.heal()`; `times=1` fails
only the next call, and `agent="travel-planner"` only calls about that agent (their
`agent_object_id` ends with the name). Calls are recorded in `fake.calls` before any
failure is raised, so a failed call is recorded as well.
"""

from __future__ import annotations

import copy
import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings

from devstack.coreapi import formats
from memory_ui.sources.coreapi import (
    Agent,
    CallerAuth,
    CoreAPIError,
    CoreAPINotFound,
    CoreAPIPreconditionFailed,
    Memory,
)
from memory_ui.sources.coreapi.client import CoreAPIClient, Request, encoded_body

INSTANCE_ID = "00000000-0000-0000-0000-000000000000"
AGENT_PREFIX = f"/instances/{INSTANCE_ID}/providers/FoundationaLLM.Agent/agents/"
DEFAULT_UPN = "alice@contoso.com"

WRITE_METHODS = ("append_memory", "clear_memory", "import_memory")

# name, display name, description, the caller's roles on the agent
AGENTS = tuple(
    Agent(name, AGENT_PREFIX + name, display_name, description, (role,))
    for name, display_name, description, role in (
        (
            "benefits-assistant",
            "Benefits Assistant",
            "Answers questions about health plans, leave and retirement benefits.",
            "Reader",
        ),
        (
            "it-helpdesk",
            "IT Helpdesk",
            "Troubleshoots laptops, accounts, VPN and software requests.",
            "Contributor",
        ),
        (
            "travel-planner",
            "Travel Planner",
            "Plans business trips within the travel policy.",
            "Owner",
        ),
    )
)


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def seed_documents() -> dict[str | None, tuple[str, datetime]]:
    """The demo memory: key None is the user document, else an agent object id."""
    user = formats.append_entry(
        "",
        "- Prefers concise answers with a short summary first.",
        _at("2026-09-14T08:12:03+00:00"),
        reason="User introduced herself",
        session_id="sess-7f3a",
    )
    user = formats.append_entry(
        user,
        "- Writes in British English; dates as 2 October 2026.",
        _at("2026-10-02T16:40:55+00:00"),
        reason="User stated preference",
        operation_id="op-2291",
    )
    benefits = formats.append_entry(
        "",
        "- Enrolled in the **PPO Plus** health plan; dependants: one child.",
        _at("2026-10-05T09:30:00+00:00"),
        reason="Enrolment question",
    )
    # Not structured (no dated entries): its list items can be deleted one by one.
    helpdesk = (
        "# Notes\n\n- Laptop: ThinkPad X1 Carbon.\n- VPN profile: Contoso VPN.\n"
        "  - reinstalled twice\n- Prefers chat over calls.\n"
    )
    travel = formats.append_entry(
        "",
        "- Prefers aisle seats and morning flights.",
        _at("2026-09-30T12:00:00+00:00"),
        reason="Trip preferences",
    )
    travel = formats.append_entry(
        travel,
        "- Trip to London, 14-18 December 2026.",
        _at("2026-11-25T18:45:30+00:00"),
        reason="Upcoming trip",
    )
    return {
        None: (user, _at("2026-10-02T16:40:55+00:00")),
        AGENT_PREFIX + "benefits-assistant": (benefits, _at("2026-10-05T09:30:00+00:00")),
        AGENT_PREFIX + "it-helpdesk": (helpdesk, _at("2026-10-21T07:58:19+00:00")),
        AGENT_PREFIX + "travel-planner": (travel, _at("2026-11-25T18:45:30+00:00")),
    }


@dataclass
class Document:
    content_markdown: str = ""
    created_on: datetime | None = None
    updated_on: datetime | None = None


@dataclass(frozen=True)
class Call:
    """One call the portal made: which method, about which memory, as whom."""

    method: str
    scope: str | None
    agent_object_id: str | None
    user_identity: bool  # an X-USER-IDENTITY would have been sent (support staff)
    upn: str | None = None  # the identity header's upn, when there is one


@dataclass
class _Failure:
    error: CoreAPIError
    times: int | None  # None: every call
    agent: str | None

    def applies(self, agent_object_id: str | None) -> bool:
        if self.agent is None:
            return True
        return bool(agent_object_id) and agent_object_id.endswith(f"/agents/{self.agent}")


@dataclass
class FakeCoreAPI(CoreAPIClient):
    """In-memory CoreAPI for one user; see the module docstring."""

    agents: list[Agent] = field(default_factory=lambda: list(AGENTS))
    calls: list[Call] = field(default_factory=list)
    closed: bool = False
    conditional: bool = False  # offer If-Match (docs/conditional-writes.md)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: dict[str, list[_Failure]] = {}
        self._clock = _at("2026-12-01T09:00:00+00:00")
        self._documents: dict[str | None, Document] = {
            key: Document(text, at, at) for key, (text, at) in seed_documents().items()
        }

    # --- test helpers ------------------------------------------------------------------

    def fail(
        self,
        method: str,
        error: CoreAPIError,
        *,
        times: int | None = None,
        agent: str | None = None,
    ) -> None:
        """Make calls of `method` raise `error`: every call until `heal()` (or `times`
        calls), only calls about `agent` when given."""
        if not callable(getattr(self, method, None)) or method.startswith("_"):
            raise ValueError(f"FakeCoreAPI has no method {method!r}")
        with self._lock:
            self._failures.setdefault(method, []).append(_Failure(error, times, agent))

    def heal(self, method: str | None = None) -> None:
        """Stop failing `method` (every method when None)."""
        with self._lock:
            if method is None:
                self._failures.clear()
            else:
                self._failures.pop(method, None)

    def object_id(self, agent: str | None) -> str | None:
        return AGENT_PREFIX + agent if agent else None

    def text(self, agent: str | None = None) -> str:
        """The stored document of the user (agent None) or of an agent, by name."""
        with self._lock:
            return self._document(self.object_id(agent)).content_markdown

    def put(self, text: str, agent: str | None = None) -> None:
        """Store a document directly, as an agent would have written it (not a call)."""
        with self._lock:
            self._write(self.object_id(agent), lambda _existing, _at: text)

    def called(self, method: str) -> list[Call]:
        return [call for call in self.calls if call.method == method]

    def writes(self) -> list[str]:
        """The methods of the calls that change memory, in order."""
        return [call.method for call in self.calls if call.method in WRITE_METHODS]

    # --- the CoreAPIClient interface ------------------------------------------------------
    # The public methods are the real client's (arguments checked, request body built);
    # the fake answers where a call would leave for CoreAPI.

    def close(self) -> None:
        self.closed = True

    def list_agents(self, auth: CallerAuth, *, correlation_id: str | None = None) -> list[Agent]:
        self._record("list_agents", auth, None, None)
        return sorted(self.agents, key=lambda agent: (agent.name.casefold(), agent.name))

    def _memory(self, request: Request, correlation_id: str | None) -> Memory:
        fields = _Fields.of(request)
        scope, agent_object_id = fields.scope, fields.agent_object_id
        if request.json_body is not None:
            # What the real client refuses before sending, refused here too (not recorded).
            encoded_body(request.json_body, settings.COREAPI_MAX_BODY_BYTES)
        self._record(_METHODS[request.path], request.auth, scope, agent_object_id)
        with self._lock:
            if request.method == "GET":
                document = self._read(scope, agent_object_id)
                return self._answer(request.auth, scope, agent_object_id, document)
            key = self._key(scope, agent_object_id)
            if request.path != "/memory/append":
                self._precondition(key, request.if_match)
            document = self._write(key, _change(request.path, fields))
            return self._answer(request.auth, scope, key, document)

    def _markdown(self, request: Request, correlation_id: str | None) -> str:
        fields = _Fields.of(request)
        self._record(_METHODS[request.path], request.auth, fields.scope, fields.agent_object_id)
        with self._lock:
            return self._read(fields.scope, fields.agent_object_id).content_markdown

    # --- internals -------------------------------------------------------------------------

    def _record(
        self, method: str, auth: CallerAuth, scope: str | None, agent_object_id: str | None
    ) -> None:
        if not auth.access_token:
            raise ValueError("access_token must not be empty")
        identity = auth.user_identity
        with self._lock:
            self.calls.append(
                Call(
                    method,
                    scope,
                    agent_object_id,
                    identity is not None,
                    identity.upn if identity is not None else None,
                )
            )
            failures = self._failures.get(method, [])
            failure = next((f for f in failures if f.applies(agent_object_id)), None)
            if failure is None:
                return
            if failure.times is not None:
                failure.times -= 1
                if failure.times <= 0:
                    failures.remove(failure)
        raise copy.copy(failure.error)

    def _known(self, agent_object_id: str) -> str:
        if not any(agent.object_id == agent_object_id for agent in self.agents):
            raise CoreAPINotFound("CoreAPI could not find this agent or memory.", status=404)
        return agent_object_id

    def _key(self, scope: str, agent_object_id: str | None) -> str | None:
        # Like CoreAPI: the agent id is ignored for user memory.
        return self._known(agent_object_id) if scope == "agent" and agent_object_id else None

    def _document(self, key: str | None) -> Document:
        return self._documents.setdefault(key, Document())

    def _read(self, scope: str, agent_object_id: str | None) -> Document:
        if scope != "combined":
            return copy.copy(self._document(self._key(scope, agent_object_id)))
        parts = [self._document(None)]
        if agent_object_id:
            parts.append(self._document(self._known(agent_object_id)))
        created = [p.created_on for p in parts if p.created_on]
        updated = [p.updated_on for p in parts if p.updated_on]
        return Document(
            formats.combine(*(p.content_markdown for p in parts)),
            min(created) if created else None,
            max(updated) if updated else None,
        )

    def _precondition(self, key: str | None, if_match: str | None) -> None:
        """With `conditional` on (the If-Match extension, docs/conditional-writes.md), a
        write at another version than `if_match` is refused; without it the header is
        ignored, as a CoreAPI without the extension ignores it."""
        if self.conditional and if_match and if_match != _etag(self._document(key)):
            raise CoreAPIPreconditionFailed("The memory changed meanwhile.", status=412)

    def _write(self, key: str | None, transform) -> Document:
        now = datetime.now(UTC).replace(microsecond=0)
        self._clock = max(self._clock + timedelta(seconds=1), now)
        at = self._clock
        current = self._document(key)
        current.content_markdown = transform(current.content_markdown, at)
        current.created_on = current.created_on or at
        current.updated_on = at
        return copy.copy(current)

    def _answer(
        self, auth: CallerAuth, scope: str, agent_object_id: str | None, document: Document
    ) -> Memory:
        identity = auth.user_identity
        agent = next((a for a in self.agents if a.object_id == agent_object_id), None)
        upn = identity.upn if identity is not None else DEFAULT_UPN
        return Memory(
            scope=scope,
            upn=upn,
            user_name=upn,
            name=identity.name if identity is not None else "Alice Example",
            agent_object_id=agent.object_id if agent and scope != "user" else None,
            agent_name=agent.name if agent and scope != "user" else None,
            content_markdown=document.content_markdown,
            created_on=document.created_on,
            updated_on=document.updated_on,
            etag=_etag(document) if self.conditional and scope != "combined" else None,
        )


def _etag(document: Document) -> str:
    return f'"{hashlib.sha256(document.content_markdown.encode()).hexdigest()}"'


# Which client method sent a request to this path (`fail`, `calls`).
_METHODS = {
    "/memory": "get_memory",
    "/memory/append": "append_memory",
    "/memory/clear": "clear_memory",
    "/memory/import": "import_memory",
    "/memory/export": "export_memory",
}


@dataclass(frozen=True)
class _Fields:
    """A memory request's fields as CoreAPI reads them: its body, or its query."""

    fields: dict[str, object]

    @classmethod
    def of(cls, request: Request) -> _Fields:
        if request.json_body is not None:
            return cls(request.json_body)
        params = request.params or {}
        # The query names the agent in camelCase, as ASP.NET binds it.
        return cls({"scope": params.get("scope"), "agent_object_id": params.get("agentObjectId")})

    def text(self, name: str) -> str | None:
        value = self.fields.get(name)
        return value if isinstance(value, str) else None

    @property
    def scope(self) -> str:
        return self.text("scope") or ""

    @property
    def agent_object_id(self) -> str | None:
        return self.text("agent_object_id")


def _change(path: str, fields: _Fields) -> Callable[[str, datetime], str]:
    """How a write changes the stored text (given the time it is made)."""
    content = fields.text("content_markdown") or ""
    if path == "/memory/append":
        return lambda existing, at: formats.append_entry(
            existing,
            content,
            at,
            fields.text("reason"),
            fields.text("operation_id"),
            fields.text("session_id"),
        )
    if path == "/memory/clear":
        return lambda _existing, _at: ""
    if fields.text("mode") == "replace":
        return lambda _existing, _at: content
    return lambda existing, at: formats.import_entry(existing, content, at)
