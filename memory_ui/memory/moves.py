"""Moving or copying one entry to another memory of the same person (issue 22): between an
agent's memory and the shared one, or from one agent's to another's.

The entry lands at the end of the destination as it was written: the kind and time of its
heading and its provenance line (`> operation: … · session: …`) stay as they were, and
its reason says where it came from ("Moved from Travel Planner", or "Upcoming trip (moved
from Travel Planner)"). Its text is rebuilt with `documents.replace_entry`, so nothing in
it can pass for a heading or provenance of its own (issue 19).

Both writes carry a version check (`memory_rewrite` with `started_from` and If-Match), with
entries agents appended meanwhile merged as every other change merges them
(docs/architecture.md, Changes made meanwhile). The destination is written first and the
source second, so a failure in between leaves the entry in both memories, never in none:
`MoveDone.removal_error` says so and `entry_remove_moved` finishes the move later. The
step is audited as one event naming both memories (`move-entry`/`copy-entry`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from memory_ui.audit import Action, audit_record
from memory_ui.documents import (
    Entry,
    EntryEditError,
    appended,
    entry_heading,
    entry_label,
    neutralise_provenance,
    parse_document,
    remove_entry,
    replace_entry,
)
from memory_ui.documents.arrivals import appended_since
from memory_ui.documents.versions import Version
from memory_ui.identity import Actor
from memory_ui.memory.batch import Deleted
from memory_ui.sources.agent_memory import Memory, MemoryChanged, NothingToChange, Rewritten, Target
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_store


class Mode(enum.StrEnum):
    MOVE = "move"
    COPY = "copy"

    @property
    def action(self) -> str:
        return Action.MOVE_ENTRY if self is Mode.MOVE else Action.COPY_ENTRY

    @property
    def done(self) -> str:
        return "Moved" if self is Mode.MOVE else "Copied"


def place_name(target: Target) -> str:
    """A memory named in an entry's reason: "Shared memory" or the agent's display name."""
    return target.agent.display_name if target.agent else "Shared memory"


def landing_reason(entry: Entry, source: Target, mode: Mode) -> str:
    """The reason the entry lands with: where it came from, after its own reason."""
    said = f"{mode.done} from {place_name(source)}"
    return f"{entry.reason} ({said[0].lower()}{said[1:]})" if entry.reason else said


def landing_block(text: str, index: int, reason: str, now: datetime) -> str:
    """Entry `index` of `text` as it lands in another memory: heading kind and time and the
    provenance line kept, `reason` instead of its own. The text before the first dated
    entry has no heading, so it gets one dated `now` (and a provenance-looking first line
    is escaped, as for a typed note). `EntryEditError` when it cannot be one entry."""
    body = parse_document(text).entries[index].body
    rebuilt = parse_document(replace_entry(text, index, body, reason))
    entry = rebuilt.entries[index]
    block = "".join(rebuilt.lines[entry.start_line : entry.end_line]).strip()
    if entry.kind == "preamble":
        block = f"{entry_heading('Added', now, reason)}\n\n{neutralise_provenance(block)}"
    return block + "\n"


def land_in(current: str, block: str) -> str:
    """`current` with `block` added at the end as its last entry (as CoreAPI appends);
    `EntryEditError` when the document would swallow it (say, an unclosed code fence)."""
    head, _, body = block.partition("\n\n")
    result = appended(current, head, body)
    last = parse_document(result).entries[-1:]
    if not last or not _same_entry(last[0], parse_document(block).entries[-1]):
        raise EntryEditError(
            "The memory it would go to ends in a way that would take this entry in (an open "
            "code block, say); fix its end with Edit first."
        )
    return result


def _same_entry(one: Entry, other: Entry) -> bool:
    return (one.kind, one.timestamp, one.reason, one.operation_id, one.session_id, one.body) == (
        other.kind,
        other.timestamp,
        other.reason,
        other.operation_id,
        other.session_id,
        other.body,
    )


def _check_size(source_text: str, mode: Mode) -> None:
    """A move rewrites the source: refused up front when CoreAPI could not take it back in
    one write, rather than after the entry landed elsewhere."""
    if mode is Mode.MOVE and not memory_store().fits_one_write(source_text):
        raise EntryEditError(
            "This memory is too large to change here, so the entry cannot leave it; copy it."
        )


class EntryGone(Exception):
    """The entry is not in the source memory (any more)."""


@dataclass(frozen=True)
class EntryMovePlan:
    """What a move or copy would do, as read now: the entry in `source` and as it would
    land in `destination`."""

    mode: Mode
    source: Target
    source_memory: Memory
    index: int
    destination: Target
    destination_memory: Memory
    block: str

    @property
    def entry(self) -> Entry:
        return parse_document(self.source_memory.content_markdown).entries[self.index]

    @property
    def landed(self) -> Entry:
        return parse_document(self.block).entries[-1]

    @property
    def label(self) -> str:
        return entry_label(self.entry.reason or self.entry.body)

    @property
    def source_version(self) -> str:
        return Version.of(self.source_memory).token()

    @property
    def destination_version(self) -> str:
        return Version.of(self.destination_memory).token()

    @property
    def destination_count(self) -> int:
        return len(parse_document(self.destination_memory.content_markdown).entries)

    @property
    def left_behind(self) -> int:
        """Entries the source keeps: all but this one for a move, all for a copy."""
        count = len(parse_document(self.source_memory.content_markdown).entries)
        return count - 1 if self.mode is Mode.MOVE else count


def _entry_at(text: str, index: int) -> Entry:
    entries = parse_document(text).entries
    if not 0 <= index < len(entries):
        raise EntryGone
    return entries[index]


def entry_move_preview(
    actor: Actor, source: Target, index: int, destination: Target, mode: Mode
) -> EntryMovePlan:
    """The plan, read now; no writes. `EntryGone`, `EntryEditError` or a `SourceError`."""
    source_memory = memory_store().read(actor, source)
    entry = _entry_at(source_memory.content_markdown, index)
    _check_size(source_memory.content_markdown, mode)
    destination_memory = memory_store().read(actor, destination)
    reason = landing_reason(entry, source, mode)
    block = landing_block(source_memory.content_markdown, index, reason, datetime.now(UTC))
    if not memory_store().fits_one_write(land_in(destination_memory.content_markdown, block)):
        raise EntryEditError(
            f"{destination.label} is too large to take this entry in one write; nothing was done."
        )
    return EntryMovePlan(mode, source, source_memory, index, destination, destination_memory, block)


class SourceChanged(MemoryChanged):
    """The source memory changed since the preview (more than entries appended to it)."""


class DestinationChanged(MemoryChanged):
    """The destination memory changed since the preview (more than entries appended)."""


@dataclass(frozen=True)
class MoveDone:
    """What a move or copy did: landed in the destination (`landed`), removed from the
    source (`removed`, a move), or the removal's failure: the entry is then in both."""

    mode: Mode
    source: Target
    destination: Target
    label: str
    landed: Rewritten | None = None
    removed: Rewritten | None = None
    removal_error: SourceError | None = None
    removal_changed: bool = False

    @property
    def in_both(self) -> bool:
        return self.mode is Mode.MOVE and self.removed is None

    def undo_records(self) -> list[Deleted]:
        """What one Undo puts back (`stores.batch_undo`): each memory this changed."""
        return [
            Deleted(done_target, 1, done.before, done.after)
            for done_target, done in ((self.destination, self.landed), (self.source, self.removed))
            if done is not None
        ]


def _audit(
    actor: Actor,
    mode: Mode,
    source: Target,
    destination: Target,
    *,
    removed: Rewritten | None = None,
    source_text: str | None = None,
    landed: Rewritten | None = None,
    error: SourceError | None = None,
) -> None:
    """One event for the step: the source (before and after), the destination (after)."""
    audit_record(
        actor.who,
        mode.action,
        subject_upn=actor.subject_upn,
        scope=source.scope,
        agent=source.agent,
        before=removed.before.content_markdown if removed else source_text,
        after=removed.after.content_markdown if removed else source_text,
        reason=actor.reason,
        ticket=actor.ticket,
        error=error,
        destination_scope=destination.scope,
        destination_agent=destination.agent,
        destination_after=landed.after.content_markdown if landed else None,
    )


def _seen(actor: Actor, source: Target, version: Version) -> str:
    """The source as the preview read it; entries appended since are no change to the
    entry. `SourceChanged` otherwise."""
    current = memory_store().read(actor, source)
    if Version.of(current) == version:
        return current.content_markdown
    arrived = appended_since(current.content_markdown, version.sha256)
    if arrived is None:
        raise SourceChanged(current)
    return arrived.seen


def _remove(actor: Actor, source: Target, version: Version, entry: Entry, mode: Mode) -> Rewritten:
    """The source without the entry, if it is still at `version` (appends merged)."""

    def without(current: Memory) -> str | None:
        entries = parse_document(current.content_markdown).entries
        if entry.index >= len(entries) or entries[entry.index].source != entry.source:
            return None
        return remove_entry(current.content_markdown, entry.index)

    with memory_store().one_event():
        return memory_store().rewrite(
            actor, source, without, started_from=version, action=mode.action, keep_arrivals=True
        )


def entry_move(
    actor: Actor,
    source: Target,
    index: int,
    source_version: Version,
    destination: Target,
    destination_version: Version,
    mode: Mode,
) -> MoveDone:
    """Move (or copy) entry `index` of `source` as the preview read both memories. Raises
    `SourceChanged`/`DestinationChanged`, `EntryGone`, `EntryEditError` or the
    destination write's `SourceError` when nothing was written; returns the removal's
    failure in `MoveDone` once the entry landed."""
    try:
        seen = _seen(actor, source, source_version)
    except SourceError as exc:
        _audit(actor, mode, source, destination, error=exc)
        raise
    entry = _entry_at(seen, index)
    _check_size(seen, mode)
    reason = landing_reason(entry, source, mode)
    block = landing_block(seen, index, reason, datetime.now(UTC))
    try:
        with memory_store().one_event():
            landed = memory_store().rewrite(
                actor,
                destination,
                lambda current: land_in(current.content_markdown, block),
                started_from=destination_version,
                action=mode.action,
                keep_arrivals=True,
            )
    except MemoryChanged as exc:
        raise DestinationChanged(exc.current) from exc
    except SourceError as exc:
        _audit(actor, mode, source, destination, source_text=seen, error=exc)
        raise
    label = entry_label(entry.reason or entry.body)
    done = MoveDone(mode, source, destination, label, landed=landed)
    if mode is Mode.COPY:
        _audit(actor, mode, source, destination, source_text=seen, landed=landed)
        return done
    try:
        removed = _remove(actor, source, source_version, entry, mode)
    except (MemoryChanged, NothingToChange):
        _audit(actor, mode, source, destination, source_text=seen, landed=landed)
        return replace(done, removal_changed=True)
    except SourceError as exc:
        _audit(actor, mode, source, destination, source_text=seen, landed=landed, error=exc)
        return replace(done, removal_error=exc)
    _audit(actor, mode, source, destination, removed=removed, landed=landed)
    return replace(done, removed=removed)


def entry_remove_moved(
    actor: Actor, source: Target, index: int, source_version: Version, destination: Target
) -> MoveDone:
    """Finish a move whose removal failed: remove the entry from `source` (still at
    `source_version`, appends merged) once it is found in `destination`, so nothing is lost.
    `MoveDone.landed` then stands for the destination as it is now, for Undo."""
    seen = _seen(actor, source, source_version)
    entry = _entry_at(seen, index)
    now = memory_store().read(actor, destination)
    wanted = parse_document(
        landing_block(seen, index, landing_reason(entry, source, Mode.MOVE), datetime.now(UTC))
    ).entries[-1]
    entries = parse_document(now.content_markdown).entries
    found = next(
        (e for e in reversed(entries) if e.kind != "preamble" and _landed_as(e, wanted)), None
    )
    if found is None:
        raise EntryGone
    try:
        removed = _remove(actor, source, source_version, entry, Mode.MOVE)
    except SourceError as exc:
        _audit(actor, Mode.MOVE, source, destination, source_text=seen, error=exc)
        raise
    _audit(actor, Mode.MOVE, source, destination, removed=removed)
    # Undo takes it out of the destination again, if that is still as it is now.
    without = replace(now, content_markdown=remove_entry(now.content_markdown, found.index))
    landed = Rewritten(without, now)
    label = entry_label(entry.reason or entry.body)
    return MoveDone(Mode.MOVE, source, destination, label, landed=landed, removed=removed)


def _landed_as(found: Entry, wanted: Entry) -> bool:
    """The same entry, landed: everything but the time of a heading it was given."""
    same = (found.reason, found.operation_id, found.session_id, found.body)
    return same == (wanted.reason, wanted.operation_id, wanted.session_id, wanted.body)
