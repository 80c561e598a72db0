"""Acting on many entries at once: which entries a selection holds in each memory, what a
preview shows of them, and deleting them with one version check per memory.

A selection names entries by memory and index, as read at one version of each memory.
The delete removes them only from a memory still at that version (`memory_rewrite` with
`started_from`), so an entry an agent added meanwhile is never taken along, and entries
are never deleted by position in a document that moved. Each memory is its own write:
one can fail or have changed while the others are done, and the results say which.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_ui.audit import Action
from memory_ui.coreapi import CoreAPIError, Memory
from memory_ui.memory.documents import Entry, entry_label, parse_document, remove_lines
from memory_ui.memory.operations import (
    Actor,
    Loaded,
    MemoryChanged,
    NothingToChange,
    Version,
    memory_rewrite,
)
from memory_ui.memory.search import SearchQuery, matching_entries
from memory_ui.memory.targets import Target

PREVIEW_LINES = 5  # first lines shown per memory in a preview
FIRST_LINE = 100  # characters of each


@dataclass(frozen=True)
class Chosen:
    """The entries chosen in one memory, as read for the preview (newest first)."""

    loaded: Loaded
    indexes: list[int]

    @property
    def target(self) -> Target:
        return self.loaded.target

    @property
    def version(self) -> str:
        return Version.of(self.loaded.memory).token() if self.loaded.memory else ""

    @property
    def entries(self) -> list[Entry]:
        document = self.loaded.prepared.document if self.loaded.prepared else None
        return [document.entries[i] for i in self.indexes] if document else []

    @property
    def first_lines(self) -> list[str]:
        return [entry_label(e.body, FIRST_LINE) for e in self.entries[:PREVIEW_LINES]]

    @property
    def more(self) -> int:
        return max(0, len(self.indexes) - PREVIEW_LINES)


@dataclass(frozen=True)
class Selection:
    chosen: list[Chosen]  # memories with at least one entry chosen
    failed: list[Loaded] = field(default_factory=list)  # memories that could not be read

    @property
    def total(self) -> int:
        return sum(len(c.indexes) for c in self.chosen)


def select_matching(loaded: list[Loaded], query: SearchQuery) -> Selection:
    """Every entry matching `query` in the memories read ("Select all N matching")."""
    chosen = [
        Chosen(one, found)
        for one in loaded
        if one.prepared is not None and (found := matching_entries(one.prepared.document, query))
    ]
    return Selection(chosen, [one for one in loaded if one.error is not None])


def select_picked(loaded: list[Loaded], picked: dict[str, set[int]]) -> Selection:
    """The entries ticked one by one (`picked`: target key to indexes), those that exist."""
    chosen = []
    for one in loaded:
        if one.prepared is None:
            continue
        count = len(one.prepared.document.entries)
        indexes = sorted((i for i in picked.get(one.key, ()) if 0 <= i < count), reverse=True)
        if indexes:
            chosen.append(Chosen(one, indexes))
    return Selection(chosen, [one for one in loaded if one.error is not None])


def without_entries(text: str, indexes: set[int]) -> str | None:
    """The document without those entries (None when none of them is there), parsed once.
    Adjacent entries go as one range of lines, and the ranges from the last one up: removing
    a range tidies only the blank lines at its own seam, which lie after the entry kept
    before it, so the ranges still to remove keep their line numbers. The same text as
    removing them one at a time (tests/unit/test_batch.py), without a parse per entry."""
    entries = parse_document(text).entries
    present = sorted(i for i in indexes if 0 <= i < len(entries))
    if not present:
        return None
    runs: list[tuple[int, int]] = []  # (start_line, end_line) of adjacent entries
    for index in present:
        entry = entries[index]
        if runs and runs[-1][1] == entry.start_line:
            runs[-1] = (runs[-1][0], entry.end_line)
        else:
            runs.append((entry.start_line, entry.end_line))
    for start, end in reversed(runs):
        text = remove_lines(text, start, end)
    return text


@dataclass(frozen=True)
class Deleted:
    """What the delete did in one memory: `before`/`after` when done, else why not."""

    target: Target
    count: int
    before: Memory | None = None
    after: Memory | None = None
    changed: bool = False  # it changed since the preview: nothing deleted in it
    error: CoreAPIError | None = None

    @property
    def done(self) -> bool:
        return self.after is not None


def batch_delete(actor: Actor, target: Target, version: Version, indexes: set[int]) -> Deleted:
    """Delete the chosen entries of one memory if it is still at `version`."""
    try:
        done = memory_rewrite(
            actor,
            target,
            lambda current: without_entries(current.content_markdown, indexes),
            started_from=version,
            action=Action.DELETE_ENTRY,
            count=len(indexes),
        )
    except (MemoryChanged, NothingToChange):
        return Deleted(target, len(indexes), changed=True)
    except CoreAPIError as exc:
        return Deleted(target, len(indexes), error=exc)
    return Deleted(target, len(indexes), done.before, done.after)


@dataclass(frozen=True)
class Restored:
    """What Undo did in one memory: restored, or why not."""

    target: Target
    count: int
    done: bool = False
    changed: bool = False  # it changed after the delete: restoring would lose that
    error: CoreAPIError | None = None


def batch_restore(
    actor: Actor, target: Target, before: str, after: Version | None, count: int
) -> Restored:
    """Put one memory back as it was before the batch, if it is still as the batch left it."""
    try:
        memory_rewrite(
            actor, target, lambda _: before, started_from=after, action=Action.UNDO, count=count
        )
    except (MemoryChanged, NothingToChange):
        return Restored(target, count, changed=True)
    except CoreAPIError as exc:
        return Restored(target, count, error=exc)
    return Restored(target, count, done=True)
