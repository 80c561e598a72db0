"""Recording what was done to a user's memory (sizes and hashes only, never content), and
the names the Activity page and the audit trail show: display names for the agent names
events keep, and each memory system's name (`source_label`)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from django.core.cache import cache

from memory_ui.identity import Identity
from memory_ui.models import AuditEvent, audit_sources
from memory_ui.sources import registry
from memory_ui.sources.protocol import SourceError
from memory_ui.text import without_bidi_controls

logger = logging.getLogger(__name__)

Action = AuditEvent.Action

# Agent display names seen in CoreAPI's agent lists. An agent's display name is a property of
# the agent, not of who lists it, so any list (a user's own, or the portal's service
# principal's for a looked-up user) names it for every page that shows events.
AGENT_NAMES_KEY = "audit:agent-display-names"
AGENT_NAMES_SECONDS = 7 * 24 * 3600

_HELD: ContextVar[list[AuditEvent] | None] = ContextVar("audit_held", default=None)


class Agent(Protocol):
    """An agent as events name it (any source's agent type with these fields)."""

    @property
    def name(self) -> str: ...
    @property
    def object_id(self) -> str: ...
    @property
    def display_name(self) -> str: ...


@dataclass(frozen=True)
class Fingerprint:
    """What the audit keeps of a document: its size and hash."""

    size: int
    sha256: str

    @classmethod
    def of(cls, text: str | None) -> Fingerprint | None:
        if text is None:
            return None
        data = text.encode("utf-8")
        return cls(len(data), hashlib.sha256(data).hexdigest())


def audit_record(
    who: Identity,
    action: str,
    *,
    subject_upn: str | None = None,
    scope: str = "",
    agent: Agent | None = None,
    before: str | None = None,
    after: str | None = None,
    error: SourceError | None = None,
    reason: str = "",
    ticket: str = "",
    correlation_id: str = "",
    source: str = AuditEvent.Source.COREAPI,
    agent_name: str = "",
    store: str = "",
    destination_scope: str = "",
    destination_agent: Agent | None = None,
    destination_after: str | None = None,
    count: int | None = None,
) -> AuditEvent:
    """Write one event for what `who` did. Call it whether the CoreAPI call worked or not
    (pass `error`); `subject_upn` is the user whose memory it was, when not `who`. A legacy
    store event (`source`) names the store's agent (`agent_name`) and the store (`store`). An
    entry moved or copied names the memory it went to (`destination_*`, and its document
    after, when written). `count`: how many entries or files it took at once, where counted."""
    before_print, after_print = Fingerprint.of(before), Fingerprint.of(after)
    destination_print = Fingerprint.of(destination_after)
    event = AuditEvent(
        actor_upn=who.upn,
        actor_oid=who.oid,
        actor_is_support=who.is_support and subject_upn not in (None, who.upn),
        subject_upn=subject_upn or who.upn,
        action=action,
        scope=scope,
        source=source,
        agent_name=agent.name if agent else agent_name,
        agent_object_id=agent.object_id if agent else store,
        reason=without_bidi_controls(reason)[:500],
        ticket=without_bidi_controls(ticket)[:100],
        outcome=AuditEvent.Outcome.ERROR if error else AuditEvent.Outcome.OK,
        error_status=error.status if error else None,
        error_message=error.message[:300] if error else "",
        bytes_before=before_print.size if before_print else None,
        sha256_before=before_print.sha256 if before_print else "",
        bytes_after=after_print.size if after_print else None,
        sha256_after=after_print.sha256 if after_print else "",
        correlation_id=(correlation_id or getattr(error, "correlation_id", ""))[:128],
        destination_scope=destination_scope,
        destination_agent_name=destination_agent.name if destination_agent else "",
        destination_agent_object_id=destination_agent.object_id if destination_agent else "",
        destination_bytes_after=destination_print.size if destination_print else None,
        destination_sha256_after=destination_print.sha256 if destination_print else "",
        count=count,
    )
    held = _HELD.get()
    if held is None:
        event.save()
    else:
        held.append(event)
    logger.info(
        "audit %s %s by %s on %s scope=%s agent=%s outcome=%s",
        source,
        action,
        event.actor_upn,
        event.subject_upn,
        scope,
        event.agent_name,
        event.outcome,
    )
    return event


@contextmanager
def audit_held() -> Iterator[list[AuditEvent]]:
    """Events recorded inside the block are kept in the list it gives, not yet saved: a step
    run on a worker thread (`memory.at_once`) hands them back to the request's thread, which
    saves them (`audit_save`) with the request's own database connection."""
    held: list[AuditEvent] = []
    token = _HELD.set(held)
    try:
        yield held
    finally:
        _HELD.reset(token)


def audit_save(events: Iterable[AuditEvent]) -> None:
    """Saves events `audit_held` kept, in the order they were recorded; inside another
    `audit_held` block (a step run at once with others, itself running steps at once), it
    hands them on to that block instead."""
    held = _HELD.get()
    for event in events:
        if held is None:
            event.save()
        else:
            held.append(event)


def source_choices() -> list[tuple[str, str]]:
    """Every memory system an event can be about: (source, its name for people), from the
    registry of sources and those recorded before (`models.audit_sources`). The one place
    Activity, the audit trail (its filter and CSV) and the admin name a system."""
    return audit_sources()


def source_label(source: str) -> str:
    """A system's name for people ("CoreAPI", "Legacy memory stores"); an unknown one by
    its recorded value."""
    return dict(source_choices()).get(source, source)


def source_items(source: str, count: int) -> str:
    """`count` things of a system in words: "2 entries", "1 file"."""
    try:
        one, many = registry.source(source).items
    except KeyError:
        one, many = "item", "items"
    return f"{count} {one if count == 1 else many}"


def agent_names_remember(agents: Iterable[Agent]) -> None:
    known: dict[str, str] = cache.get(AGENT_NAMES_KEY) or {}
    seen = {agent.name: agent.display_name for agent in agents if agent.display_name}
    if any(known.get(name) != display for name, display in seen.items()):
        cache.set(AGENT_NAMES_KEY, {**known, **seen}, AGENT_NAMES_SECONDS)


def agent_names_known() -> dict[str, str]:
    """Agent name -> display name, for the agents seen lately."""
    return dict(cache.get(AGENT_NAMES_KEY) or {})
