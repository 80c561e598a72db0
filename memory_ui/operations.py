"""Business steps on one memory document, for end users and support staff alike.

Each step calls CoreAPI (with a read first where a check or the audit needs the
document as it was) and records an audit event whether the call worked or not.
CoreAPI has no version tokens, so a replace first compares the document with the
version the user started from (DESIGN 8) and refuses with `MemoryChanged` on a mismatch.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.http import HttpRequest

from memory_ui.audit import Action, audit_record
from memory_ui.coreapi import Agent, CallerAuth, CoreAPIError, Memory, get_client
from memory_ui.documents import content_hash


@dataclass(frozen=True)
class Target:
    """One stored document: user memory, or one agent's memory."""

    scope: str  # "user" or "agent"
    agent: Agent | None = None

    def __post_init__(self) -> None:
        if (self.scope == "agent") != (self.agent is not None) or self.scope not in (
            "user",
            "agent",
        ):
            raise ValueError("scope 'agent' needs an agent, scope 'user' must not have one")

    @property
    def agent_object_id(self) -> str | None:
        return self.agent.object_id if self.agent else None

    @property
    def label(self) -> str:
        return self.agent.display_name if self.agent else "Your memory"

    @property
    def key(self) -> str:
        """A form value naming this document: "user" or "agent:<name>"."""
        return target_key(self.scope, self.agent.name if self.agent else None)


def target_key(scope: str, agent_name: str | None) -> str:
    return f"agent:{agent_name}" if scope == "agent" else "user"


@dataclass(frozen=True)
class ScopeResult:
    """The outcome of one step of a many-memory action (clear everything, restore)."""

    target: Target
    error: CoreAPIError | None = None

    @property
    def key(self) -> str:
        return self.target.key


@dataclass(frozen=True)
class Actor:
    """Who acts, with which credentials, for whom (support staff act for `subject_upn`)."""

    request: HttpRequest
    auth: CallerAuth
    subject_upn: str | None = None
    reason: str = ""
    ticket: str = ""


@dataclass(frozen=True)
class Version:
    """What a user saw when they began: enough to notice a change made meanwhile."""

    updated_on: str
    sha256: str

    @classmethod
    def of(cls, memory: Memory) -> Version:
        stamp = memory.updated_on.isoformat() if memory.updated_on else ""
        return cls(stamp, content_hash(memory.content_markdown))

    def token(self) -> str:
        """For a hidden form field."""
        return f"{self.updated_on}|{self.sha256}"

    @classmethod
    def parse(cls, token: str) -> Version | None:
        stamp, sep, digest = token.rpartition("|")
        if not sep or len(digest) != 64:
            return None
        return cls(stamp, digest)


class MemoryChanged(Exception):
    """The document changed since the user's version; `current` is what is stored now."""

    def __init__(self, current: Memory) -> None:
        super().__init__("The memory changed since you started.")
        self.current = current


def _audit(actor: Actor, action: str, target: Target, **fields: object) -> None:
    audit_record(
        actor.request,
        action,
        subject_upn=actor.subject_upn,
        scope=target.scope,
        agent=target.agent,
        reason=actor.reason,
        ticket=actor.ticket,
        **fields,  # type: ignore[arg-type]
    )


def memory_read(actor: Actor, target: Target) -> Memory:
    return get_client().get_memory(actor.auth, target.scope, target.agent_object_id)


def memory_append(actor: Actor, target: Target, text: str, reason: str | None = None) -> Memory:
    try:
        result = get_client().append_memory(
            actor.auth,
            target.scope,
            text,
            agent_object_id=target.agent_object_id,
            agent_name=target.agent.name if target.agent else None,
            reason=reason or None,
        )
    except CoreAPIError as exc:
        _audit(actor, Action.APPEND, target, error=exc)
        raise
    _audit(actor, Action.APPEND, target, after=result.content_markdown)
    return result


def memory_import_append(actor: Actor, target: Target, text: str) -> Memory:
    try:
        before = memory_read(actor, target)
        result = get_client().import_memory(
            actor.auth, target.scope, text, mode="append", agent_object_id=target.agent_object_id
        )
    except CoreAPIError as exc:
        _audit(actor, Action.IMPORT, target, error=exc)
        raise
    _audit(
        actor, Action.IMPORT, target, before=before.content_markdown, after=result.content_markdown
    )
    return result


def memory_replace(
    actor: Actor,
    target: Target,
    text: str,
    *,
    started_from: Version | None,
    action: str = Action.EDIT,
) -> Memory:
    """Replace the whole document, unless it changed since `started_from` (then
    `MemoryChanged`). `started_from=None` overwrites deliberately. An empty text clears,
    since CoreAPI refuses empty imports."""
    try:
        current = memory_read(actor, target)
        if started_from is not None and Version.of(current) != started_from:
            raise MemoryChanged(current)
        if not text.strip():
            result = get_client().clear_memory(
                actor.auth, target.scope, agent_object_id=target.agent_object_id
            )
        else:
            result = get_client().import_memory(
                actor.auth,
                target.scope,
                text,
                mode="replace",
                agent_object_id=target.agent_object_id,
            )
    except CoreAPIError as exc:
        _audit(actor, action, target, error=exc)
        raise
    _audit(actor, action, target, before=current.content_markdown, after=result.content_markdown)
    return result


def memory_clear(actor: Actor, target: Target) -> Memory:
    try:
        before = memory_read(actor, target)
        result = get_client().clear_memory(
            actor.auth, target.scope, agent_object_id=target.agent_object_id
        )
    except CoreAPIError as exc:
        _audit(actor, Action.CLEAR, target, error=exc)
        raise
    _audit(
        actor, Action.CLEAR, target, before=before.content_markdown, after=result.content_markdown
    )
    return result


def memory_export(actor: Actor, target: Target) -> str:
    try:
        text = get_client().export_memory(
            actor.auth, target.scope, agent_object_id=target.agent_object_id
        )
    except CoreAPIError as exc:
        _audit(actor, Action.EXPORT, target, error=exc)
        raise
    _audit(actor, Action.EXPORT, target, before=text)
    return text


def memory_export_many(actor: Actor, targets: list[Target], *, workers: int = 4) -> list[str]:
    """Several exports, `workers` at a time. Each is audited afterwards on this thread (audit
    rows use its database connection); the first failure is raised once all are audited."""

    def fetch(target: Target) -> str | CoreAPIError:
        try:
            return get_client().export_memory(
                actor.auth, target.scope, agent_object_id=target.agent_object_id
            )
        except CoreAPIError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(fetch, targets))
    for target, result in zip(targets, results, strict=True):
        if isinstance(result, CoreAPIError):
            _audit(actor, Action.EXPORT, target, error=result)
        else:
            _audit(actor, Action.EXPORT, target, before=result)
    texts = []
    for result in results:
        if isinstance(result, CoreAPIError):
            raise result
        texts.append(result)
    return texts


def memory_export_combined(actor: Actor, agent: Agent) -> str:
    """What `agent` reads: user and agent memory as CoreAPI composes them. Not a stored
    document (so not a Target), but exporting it is audited like any export."""

    def audit(**fields: object) -> None:
        audit_record(
            actor.request,
            Action.EXPORT,
            subject_upn=actor.subject_upn,
            scope="combined",
            agent=agent,
            reason=actor.reason,
            ticket=actor.ticket,
            **fields,  # type: ignore[arg-type]
        )

    try:
        text = get_client().export_memory(actor.auth, "combined", agent_object_id=agent.object_id)
    except CoreAPIError as exc:
        audit(error=exc)
        raise
    audit(before=text)
    return text
