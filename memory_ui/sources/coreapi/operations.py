"""Business steps on a user's memory, for end users and support staff alike.

Over 400 lines: every CoreAPI call and its audit event in one place, so that no step can
reach CoreAPI unaudited (tests/unit/test_layers.py holds web/ to this module).

Every CoreAPI call of the portal goes through here, and every step that reads content for
someone or changes it records an audit event, whether the call worked or not. CoreAPI has
no version tokens, so a replace first compares the document with the version the user
started from (docs/architecture.md, Faults and bad input) and refuses with `MemoryChanged`
on a mismatch.

Steps that touch several memories (`fan_out`) run a few CoreAPI calls at a time, at most
`PORTAL_COREAPI_FAN_OUT`, and audit on the calling thread afterwards: audit rows use the
request's own database connection.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime

from django.conf import settings

from memory_ui.audit import Action, audit_record
from memory_ui.budget import fan_out
from memory_ui.documents import (
    content_hash,
    neutralise_entry_headings,
    neutralise_provenance,
)
from memory_ui.documents.arrivals import appended_since, with_arrivals
from memory_ui.documents.landed import Block
from memory_ui.documents.versions import Version
from memory_ui.history import version_keep
from memory_ui.identity import Actor, Identity
from memory_ui.sources.agent_memory import (
    AlreadyAdded,
    Loaded,
    MemoryChanged,
    NothingToChange,
    Rewritten,
    Target,
    all_targets,
)
from memory_ui.sources.coreapi import (
    Agent,
    CoreAPIError,
    CoreAPIOutcomeUnknown,
    CoreAPIPreconditionFailed,
    CoreAPIUnavailable,
    Memory,
)
from memory_ui.sources.coreapi import client as coreapi

# A change merged with entries that arrived meanwhile is tried this many times in all when
# yet more arrive between the read and the conditional write.
MERGE_ATTEMPTS = 3


def fits_one_write(text: str, json_chars: Callable[[], int] | None = None) -> bool:
    """Whether a replace with `text` fits CoreAPI's request body limit. JSON escapes a
    character to at most 12 bytes (a surrogate pair): measure exactly only near the limit
    (`json_chars`, when given, is that measure kept with the parsed document)."""
    limit = settings.COREAPI_MAX_BODY_BYTES - 1024  # the other fields of the body
    if 12 * len(text) <= limit:
        return True
    return (json_chars() if json_chars else len(json.dumps(text))) <= limit


# A step of several writes recorded as one event by its caller (moving an entry: moves.py):
# the writes made inside `one_event()` record none of their own.
_ONE_EVENT: contextvars.ContextVar[bool] = contextvars.ContextVar("one_event", default=False)


@contextmanager
def one_event() -> Iterator[None]:
    token = _ONE_EVENT.set(True)
    try:
        yield
    finally:
        _ONE_EVENT.reset(token)


def audit_step(actor: Actor, action: str, target: Target, **fields: object) -> None:
    if _ONE_EVENT.get():
        return
    audit_record(
        actor.who,
        action,
        subject_upn=actor.subject_upn,
        scope=target.scope,
        agent=target.agent,
        reason=actor.reason,
        ticket=actor.ticket,
        **fields,  # type: ignore[arg-type]
    )


def _writable(target: Target) -> Target:
    if not target.writable:
        raise ValueError(f"{target.key} is a view, not a stored document")
    return target


# --- reading -----------------------------------------------------------------------------


def agents_list(actor: Actor) -> list[Agent]:
    """The agents `actor` may read, sorted as the User Portal shows them."""
    return coreapi.get_client().list_agents(actor.auth)


def memory_read(actor: Actor, target: Target) -> Memory:
    return coreapi.get_client().get_memory(actor.auth, target.scope, target.agent_object_id)


def memory_load(actor: Actor, target: Target) -> Loaded:
    """The document, or the error that kept it: for pages that show either."""
    try:
        return Loaded(target, memory_read(actor, target))
    except CoreAPIError as exc:
        return Loaded(target, error=exc)


def memory_load_many(actor: Actor, targets: list[Target]) -> list[Loaded]:
    return fan_out(lambda target: memory_load(actor, target), targets)


def memory_reveal(actor: Actor, key: str) -> Loaded | None:
    """Support staff reading the memory `key` of the user they act for: audited with the
    reason, failed or not. None when the user has no such memory."""
    try:
        target = next((t for t in all_targets(agents_list(actor)) if t.key == key), None)
        if target is None:
            return None
        memory = memory_read(actor, target)
    except CoreAPIError as exc:
        audit_record(
            actor.who, Action.REVEAL, subject_upn=actor.subject_upn, reason=actor.reason, error=exc
        )
        raise
    audit_step(actor, Action.REVEAL, target, before=memory.content_markdown)
    return Loaded(target, memory)


def user_lookup(actor: Actor) -> list[Target]:
    """Support staff looking a user up: every memory CoreAPI lets the portal act on for
    them. Audited, failed or not."""
    try:
        targets = all_targets(agents_list(actor))
    except CoreAPIError as exc:
        audit_record(actor.who, Action.LOOKUP, subject_upn=actor.subject_upn, error=exc)
        raise
    audit_record(actor.who, Action.LOOKUP, subject_upn=actor.subject_upn)
    return targets


def credentials_failed(
    who: Identity, action: str, subject_upn: str, message: str, **fields: str
) -> None:
    """The portal could not get its own CoreAPI token to act for `subject_upn`."""
    audit_record(who, action, subject_upn=subject_upn, error=CoreAPIUnavailable(message), **fields)


# --- writing -----------------------------------------------------------------------------


def _read_for(actor: Actor, action: str, target: Target, count: int | None = None) -> Memory:
    """The document before a write; a failure is audited as the write's."""
    try:
        return memory_read(actor, target)
    except CoreAPIError as exc:
        audit_step(actor, action, target, error=exc, count=count)
        raise


def _settled(
    actor: Actor, target: Target, exc: CoreAPIOutcomeUnknown, done: Callable[[Memory], bool]
) -> Memory:
    """A write got no answer: read the document again. It is returned when `done` finds
    the write there; otherwise the outcome stays unknown (CoreAPI may still apply it)."""
    try:
        current = memory_read(actor, target)
    except CoreAPIError:
        raise exc from None
    if done(current):
        return current
    raise exc


def _write(
    actor: Actor,
    action: str,
    target: Target,
    send: Callable[[coreapi.CoreAPIClient], Memory],
    done: Callable[[Memory], bool],
    before: Memory | None,
    count: int | None = None,
) -> Memory:
    """One write, audited with the document before (when read) and after, failed or not,
    and with how many entries it took where the caller counts them; a person's own change
    keeps the version before it, encrypted (memory_ui.history).
    A write that got no answer is settled by reading again (`done`: is it there?)."""
    try:
        try:
            result = send(coreapi.get_client())
        except CoreAPIOutcomeUnknown as exc:
            result = _settled(actor, target, exc, done)
    except CoreAPIError as exc:
        audit_step(actor, action, target, error=exc, count=count)
        raise
    audit_step(
        actor,
        action,
        target,
        before=before.content_markdown if before else None,
        after=result.content_markdown,
        count=count,
    )
    if before is not None:
        # Inside `one_event` too: each memory a move changed keeps its version before.
        version_keep(actor, target.key, action, before.content_markdown, result.content_markdown)
    return result


def _changed_meanwhile(actor: Actor, target: Target, exc: CoreAPIError) -> MemoryChanged:
    """A conditional write found another version (412): what is stored now."""
    try:
        return MemoryChanged(memory_read(actor, target))
    except CoreAPIError:
        raise exc from None


def memory_append(
    actor: Actor,
    target: Target,
    text: str,
    reason: str | None = None,
    *,
    earlier: datetime | None = None,
) -> Memory:
    """Add `text` as a new entry. `earlier`: when an attempt to add the same note began then
    and got no answer, the document is read first, and if that attempt landed the note is
    not sent again (`AlreadyAdded`)."""
    target = _writable(target)
    text = neutralise_provenance(neutralise_entry_headings(text))
    reason = reason or None
    return _add_once(
        actor,
        Action.APPEND,
        target,
        lambda client: client.append_memory(
            actor.auth,
            target.scope,
            text,
            agent_object_id=target.agent_object_id,
            agent_name=target.agent_name or None,
            reason=reason,
        ),
        Block("added", text, reason),
        earlier=earlier,
        before=None,
    )


def memory_import_append(
    actor: Actor, target: Target, text: str, *, earlier: datetime | None = None
) -> Memory:
    """Add `text` as an imported block; `earlier` as for `memory_append`."""
    target = _writable(target)
    # The text goes under an "Imported" heading: a first line that reads as provenance
    # would claim ids; headings in it stay (an export re-imported keeps its entries).
    text = neutralise_provenance(text)
    return _add_once(
        actor,
        Action.IMPORT,
        target,
        lambda client: client.import_memory(
            actor.auth, target.scope, text, mode="append", agent_object_id=target.agent_object_id
        ),
        Block("imported", text),
        earlier=earlier,
        before=_read_for(actor, Action.IMPORT, target),
    )


def _add_once(
    actor: Actor,
    action: str,
    target: Target,
    send: Callable[[coreapi.CoreAPIClient], Memory],
    block: Block,
    *,
    earlier: datetime | None,
    before: Memory | None,
) -> Memory:
    """Sends an add, unless an attempt begun at `earlier` that got no answer landed the
    same block already (`AlreadyAdded`, nothing sent); `before` is audited when read."""
    if earlier is not None:
        current = before or _read_for(actor, action, target)
        if block.landed(current.content_markdown, earlier):
            raise AlreadyAdded(current)
    began = datetime.now(UTC)
    return _write(
        actor, action, target, send, lambda now: block.landed(now.content_markdown, began), before
    )


def _replace(
    actor: Actor, target: Target, text: str, current: Memory, action: str, count: int | None = None
) -> Memory:
    """The document becomes `text` if it is still `current` where CoreAPI can tell
    (If-Match); an empty text clears, since CoreAPI refuses empty imports."""

    def send(client: coreapi.CoreAPIClient) -> Memory:
        where = {"agent_object_id": target.agent_object_id, "if_match": current.etag}
        if not text.strip():
            return client.clear_memory(actor.auth, target.scope, **where)
        return client.import_memory(actor.auth, target.scope, text, mode="replace", **where)

    wanted = content_hash(text if text.strip() else "")
    try:
        return _write(
            actor,
            action,
            target,
            send,
            lambda now: content_hash(now.content_markdown) == wanted,
            current,
            count,
        )
    except CoreAPIPreconditionFailed as exc:
        raise _changed_meanwhile(actor, target, exc) from exc


def memory_rewrite(
    actor: Actor,
    target: Target,
    transform: Callable[[Memory], str | None],
    *,
    started_from: Version | None,
    action: str = Action.EDIT,
    keep_arrivals: bool = False,
    count: int | None = None,
) -> Rewritten:
    """Replace the whole document with `transform(current)`, unless it changed since
    `started_from` (then `MemoryChanged`; `started_from=None` overwrites deliberately) or
    `transform` returns None (`NothingToChange`).

    `keep_arrivals`: a change that does not overlap what arrived meanwhile goes through.
    When the only difference from `started_from` is entries appended after it
    (`arrivals.appended_since`), `transform` gets the version the person saw, the appended
    entries are put back after its result, and `arrived` names them. A conditional write
    refused (412) because yet another append landed is merged again, up to
    MERGE_ATTEMPTS times.

    `count`: how many entries the change takes (a batch of deletes), for its audit event.

    Where CoreAPI offers conditional writes (docs/conditional-writes.md) the replace
    carries the version it was computed from, so nothing written meanwhile is lost.
    Without them the window is one round trip, and the document is read again right
    after: `moved` says that something else changed it at the same moment."""
    target = _writable(target)
    current = _read_for(actor, action, target, count)
    for attempt in range(1, MERGE_ATTEMPTS + 1):
        arrived = None
        seen = current
        if started_from is not None and Version.of(current) != started_from:
            if keep_arrivals:
                arrived = appended_since(current.content_markdown, started_from.sha256)
            if arrived is None:
                raise MemoryChanged(current)
            seen = replace(current, content_markdown=arrived.seen)
        text = transform(seen)
        if text is None:
            raise NothingToChange(current)
        if arrived is not None:
            text = with_arrivals(text, arrived)
        try:
            result = _replace(actor, target, text, current, action, count)
            break
        except MemoryChanged as exc:
            if not keep_arrivals or started_from is None or attempt == MERGE_ATTEMPTS:
                raise
            current = exc.current
    moved = False
    if current.etag is None:
        try:
            moved = memory_read(actor, target).content_markdown != result.content_markdown
        except CoreAPIError:
            moved = False  # saved; whether more arrived since cannot be told now
    return Rewritten(current, result, moved, arrived)


def memory_replace(
    actor: Actor,
    target: Target,
    text: str,
    *,
    started_from: Version | None,
    action: str = Action.EDIT,
    keep_arrivals: bool = False,
) -> Memory:
    """The whole document becomes `text` (see `memory_rewrite`), followed, with
    `keep_arrivals`, by entries appended since `started_from`."""
    return memory_rewrite(
        actor,
        target,
        lambda _: text,
        started_from=started_from,
        action=action,
        keep_arrivals=keep_arrivals,
    ).after


def memory_clear(actor: Actor, target: Target, started_from: Version | None = None) -> Memory:
    """Clear the document, unless it changed since `started_from`, the version the
    confirmation showed (then `MemoryChanged`)."""
    target = _writable(target)
    before = _read_for(actor, Action.CLEAR, target)
    if started_from is not None and Version.of(before) != started_from:
        raise MemoryChanged(before)
    return _replace(actor, target, "", before, Action.CLEAR)


def memory_clear_many(actor: Actor, targets: list[Target]) -> list[Loaded]:
    """Each memory cleared on its own, one after another; a failure does not stop the rest."""
    results = []
    for target in targets:
        try:
            results.append(Loaded(target, memory_clear(actor, target)))
        except CoreAPIError as exc:
            results.append(Loaded(target, error=exc))
    return results
