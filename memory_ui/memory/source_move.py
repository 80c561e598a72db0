"""Moving what a source being turned down keeps (`Source.turned_down`: the legacy stores'
files) into the primary source, CoreAPI (issue 18, item 5; issue 27), for one user (the
portal's pages) and for many (`manage.py move_legacy_memory`). The source side is read and
deleted through its backend only (`list_targets`, `read_page`, `read_item`, `delete_item`,
each audited by `sources.generic`), so any source being turned down moves alike.

An item (a legacy file) goes to the CoreAPI memory of the agent its target belongs to
(`SourceTarget.agent`), or to the memory shared with every agent when the user has no such
agent. Its text is cut into pieces (list items and paragraphs); a piece the agent already
reads (its own memory or the shared one, whitespace ignored) is skipped. The rest is
appended with the reason "Moved from <target> <item> (file last changed <its update
time>)" (CoreAPI dates the heading by the move itself, so the item's own time is kept in
the reason), then read back: an item counts as verified only when every piece is in
CoreAPI. Only verified items are deleted from the source, and only when asked. Since what
is already there is skipped, running the move twice adds nothing and a move that failed
halfway is resumed by running it again. Audited as one `move` event per item that was moved
or failed (the append inside records none of its own), nothing for one already there, and
the deletions.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from memory_ui.audit import Action, audit_record
from memory_ui.documents import moved_file_reason
from memory_ui.identity import Actor
from memory_ui.sources.agent_memory import USER_MEMORY_LABEL, Agent, Target
from memory_ui.sources.generic import item_delete, item_read, target_of, target_page, version_of
from memory_ui.sources.protocol import MemoryBackend, Source, SourceError, SourceTarget
from memory_ui.sources.registry import memory_store

ITEM_START = re.compile(r"\s{0,3}(?:[-*+]|\d{1,9}[.)])\s")
MARKER = re.compile(r"^\s*(?:\\?#+|[-*+]|\d{1,9}[.)]|>)?\s*")
NOT_FOUND_BACK = "CoreAPI did not show all of the moved text when read back; run the move again."


class Step(enum.StrEnum):
    MOVE = "move"  # some text to append
    ALREADY_THERE = "already there"  # every item is already in CoreAPI
    EMPTY = "empty"  # the file has no text


class Result(enum.StrEnum):
    MOVED = "moved"  # appended and verified
    ALREADY_THERE = "already there"  # nothing appended: verified as present
    NOT_VERIFIED = "not verified"  # appended but the read-back misses some text
    EMPTY = "empty"  # nothing to move
    FAILED = "failed"  # nothing known to be appended (see `reason`)


UNFINISHED = (Result.FAILED, Result.NOT_VERIFIED)


@dataclass(frozen=True)
class Origin:
    """Where a move takes items from: a person's target in a source being turned down,
    through that source's backend."""

    source: str
    backend: MemoryBackend
    target: SourceTarget


def move_origin(actor: Actor, source: Source, key: str) -> Origin | None:
    """The actor's target `key` in `source` (None: not theirs, or not configured)."""
    assert source.backend is not None
    backend = source.backend(actor)
    target = target_of(actor, backend, key)
    return Origin(source.name, backend, target) if target else None


@dataclass(frozen=True)
class PlannedFile:
    """One item in a preview: where its text goes, what is new and what is there."""

    origin: Origin
    path: str  # the item's key
    description: str
    destination: Target
    new_items: tuple[str, ...]
    present_items: tuple[str, ...]
    version: str  # the item as planned (`generic.version_of`): deleted only unchanged
    updated: datetime | None = None  # the item's last change, as its source gives it

    @property
    def step(self) -> Step:
        if self.new_items:
            return Step.MOVE
        return Step.ALREADY_THERE if self.present_items else Step.EMPTY

    @property
    def reason(self) -> str:
        """The reason CoreAPI records with the append, with the file's own time."""
        return moved_file_reason(f"{self.origin.target.key} {self.path}", self.updated)


@dataclass(frozen=True)
class MovePlan:
    files: tuple[PlannedFile, ...]
    errors: tuple[tuple[str, str], ...] = ()  # (item or target key, user-safe message)

    @property
    def adds_nothing(self) -> bool:
        """CoreAPI already has every item (or there is none): a move would add nothing."""
        return not any(planned.new_items for planned in self.files)

    @property
    def widening(self) -> str:
        """What the preview says before a move that widens who reads the text; "" when it
        does not. A target is listed to everyone (their own items), also when the person
        cannot use its agent in CoreAPI; then the text goes to the memory shared with every
        agent, so agents that never read it would. No destination keeps readership as it
        was (that agent's memory is not theirs), and the source is being turned down, so the
        move stays offered and says so plainly (README, Legacy memory stores)."""
        if not any(planned.destination.scope == "user" for planned in self.files):
            return ""
        if len(self.files) == 1:
            return (
                "The agent that kept this file is not one of your agents in CoreAPI, so it "
                f"goes to “{USER_MEMORY_LABEL}”: every agent you use will read it, not only "
                "the one that kept it. To keep it from the others, do not move it."
            )
        return (
            "The agent that kept these files is not one of your agents in CoreAPI, so they "
            f"go to “{USER_MEMORY_LABEL}”: every agent you use will read them, not only the "
            "one that kept them. To keep them from the others, do not move them."
        )


@dataclass(frozen=True)
class MovedFile:
    planned: PlannedFile
    result: Result
    deleted: bool = False  # the source's copy was deleted (only verified ones, when asked)
    reason: str = ""
    written: str | None = None  # the destination document after this file's append

    @property
    def did_something(self) -> bool:
        """Appended or failed: what the move's event is for (a file already there changed
        nothing in CoreAPI; deleting its copy is an event of its own)."""
        return self.written is not None or self.result in UNFINISHED


@dataclass(frozen=True)
class MoveReport:
    files: tuple[MovedFile, ...]

    def count(self, result: Result) -> int:
        return sum(1 for moved in self.files if moved.result == result)


def items_of(text: str) -> list[str]:
    """A file's text as items: each list item with its continuation lines, each paragraph
    or heading; blank lines separate. The unit of "already there"."""
    items: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        starts_item = bool(ITEM_START.match(line)) or line.lstrip().startswith("#")
        if not line.strip() or (starts_item and current):
            if current:
                items.append("\n".join(current))
            current = []
        if line.strip():
            current.append(line.rstrip())
    if current:
        items.append("\n".join(current))
    return items


def _normal(text: str) -> str:
    """Text as compared: whitespace collapsed, list and heading markers and the escapes the
    portal adds to headings (neutralise_entry_headings) left out."""
    lines = (MARKER.sub("", line) for line in text.splitlines())
    return " ".join(" ".join(lines).split())


def _present(item: str, documents: list[str]) -> bool:
    wanted = _normal(item)
    return any(wanted in doc for doc in documents)


def _destination(origin: Origin, agents: list[Agent]) -> Target:
    """The CoreAPI memory of the target's agent (configuration), when the user has it;
    otherwise the memory shared with every agent."""
    kept_for = origin.target.agent
    agent = next((a for a in agents if kept_for and a.name == kept_for), None)
    return Target("agent", agent) if agent else Target("user")


def _documents(actor: Actor, destination: Target) -> list[str]:
    """What the agent already reads, normalised: its own memory and the shared one."""
    targets = [destination] if destination.scope == "user" else [destination, Target("user")]
    return [_normal(memory_store().read(actor, target).content_markdown) for target in targets]


def _keys(actor: Actor, origin: Origin) -> list[str]:
    keys: list[str] = []
    cursor: str | None = None
    while True:
        page = target_page(actor, origin.backend, origin.target, cursor)
        keys += [item.key for item in page.items]
        cursor = page.next_cursor
        if cursor is None:
            return keys


def move_preview(actor: Actor, origin: Origin, keys: list[str] | None = None) -> MovePlan:
    """What a move of `keys` (default: every item of the target) would do; no writes. One
    CoreAPI agent list and one or two document reads, then one read per item."""
    destination = _destination(origin, memory_store().agents(actor))
    documents = _documents(actor, destination)
    planned, errors = [], []
    for key in keys if keys is not None else _keys(actor, origin):
        try:
            item = item_read(actor, origin.backend, origin.target, key)
        except SourceError as exc:
            errors.append((key, exc.message))
            continue
        pieces = items_of(item.text or "")
        planned.append(
            PlannedFile(
                origin=origin,
                path=key,
                description=item.description,
                destination=destination,
                new_items=tuple(i for i in pieces if not _present(i, documents)),
                present_items=tuple(i for i in pieces if _present(i, documents)),
                version=version_of(item),
                updated=item.updated,
            )
        )
    return MovePlan(tuple(planned), tuple(errors))


def _audit_move(actor: Actor, moved: MovedFile, text: str) -> None:
    """The move's one event: from which target to which CoreAPI memory."""
    failed = moved.result in UNFINISHED
    destination, origin = moved.planned.destination, moved.planned.origin
    audit_record(
        actor.who,
        Action.MOVE,
        subject_upn=actor.subject_upn,
        source=origin.source,
        agent_name=origin.target.agent or "",
        store=origin.target.key,
        before=text,
        error=SourceError(moved.reason or moved.result) if failed else None,
        reason=moved.planned.reason,
        ticket=actor.ticket,
        destination_scope=destination.scope,
        destination_agent=destination.agent,
        destination_after=moved.written,
    )


def _append(actor: Actor, planned: PlannedFile) -> tuple[str | None, str]:
    """Appends the file's new items: the destination after (None when nothing was sent or
    it failed) and "" when done, else the user-safe reason."""
    if not planned.new_items:
        return None, ""
    text = "\n".join(planned.new_items)
    try:
        with memory_store().one_event():  # the move's own event says it (`_audit_move`)
            memory = memory_store().append(actor, planned.destination, text, reason=planned.reason)
    except SourceError as exc:
        return None, exc.message
    return memory.content_markdown, ""


def _delete_verified(actor: Actor, planned: PlannedFile) -> str:
    """Deletes the source's copy unless it changed since it was planned; "" when deleted."""
    origin = planned.origin
    try:
        current = item_read(actor, origin.backend, origin.target, planned.path)
        if version_of(current) != planned.version:
            return "It changed after it was moved; run the move again."
        item_delete(actor, origin.backend, origin.target, planned.path)
    except SourceError as exc:
        return exc.message
    return ""


def move_run(
    actor: Actor,
    origin: Origin,
    keys: list[str] | None = None,
    *,
    delete_verified: bool = False,
    progress: Callable[[MovedFile], None] | None = None,
) -> MoveReport:
    """Plans again (never trusts a preview the browser kept), appends each file's new
    items, reads the destination back once, and deletes the source's copies verified to be in
    CoreAPI when `delete_verified`. `progress` is called after each file's append (with
    its provisional result) so a command can draw a progress bar."""
    plan = move_preview(actor, origin, keys)
    appended: list[tuple[PlannedFile, str | None, str]] = []
    for planned in plan.files:
        written, failure = _append(actor, planned)
        appended.append((planned, written, failure))
        if progress:
            result = Result.FAILED if failure else Result.MOVED
            progress(MovedFile(planned, result, reason=failure))
    documents: list[str] = []
    read_back_failure = ""
    if plan.files:  # one destination per target: one read-back for every item
        try:
            documents = _documents(actor, plan.files[0].destination)
        except SourceError as exc:
            read_back_failure = exc.message
    report = []
    for planned, written, failure in appended:
        moved = replace(_verify(planned, failure, documents, read_back_failure), written=written)
        if delete_verified and moved.result in (Result.MOVED, Result.ALREADY_THERE):
            reason = _delete_verified(actor, planned)
            moved = replace(moved, deleted=not reason, reason=reason)
        if moved.did_something:
            _audit_move(actor, moved, "\n".join(planned.new_items + planned.present_items))
        report.append(moved)
    failed = tuple(
        MovedFile(_unread(origin, key), Result.FAILED, reason=m) for key, m in plan.errors
    )
    return MoveReport(tuple(report) + failed)


def _verify(
    planned: PlannedFile, failure: str, documents: list[str], read_back_failure: str
) -> MovedFile:
    if failure:
        return MovedFile(planned, Result.FAILED, reason=failure)
    if read_back_failure:
        return MovedFile(planned, Result.NOT_VERIFIED, reason=read_back_failure)
    items = planned.new_items + planned.present_items
    if not all(_present(item, documents) for item in items):
        return MovedFile(planned, Result.NOT_VERIFIED, reason=NOT_FOUND_BACK)
    if planned.step is Step.EMPTY:
        return MovedFile(planned, Result.EMPTY)
    result = Result.MOVED if planned.new_items else Result.ALREADY_THERE
    return MovedFile(planned, result)


def _unread(origin: Origin, key: str) -> PlannedFile:
    return PlannedFile(origin, key, "", Target("user"), (), (), "")
