"""Acting on many entries at once: which entries a selection holds in each memory, what a
preview shows of them, and deleting them with one version check per memory.

A preview shows each entry by the line that matches the search's text, says what else the
entry holds (it goes too), and where only list items of an entry match, names them: the
delete can then take just those items and keep the rest of the entry.

A selection names entries by memory and index, as read at one version of each memory.
The delete removes them only from a memory still at that version (`memory_rewrite` with
`started_from`), so an entry an agent added meanwhile is never taken along, and entries
are never deleted by position in a document that moved. Each memory is its own write:
one can fail or have changed while the others are done, and the results say which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property

from memory_ui.audit import Action
from memory_ui.documents import (
    Document,
    Entry,
    ListItem,
    entry_label,
    list_items_between,
    parse_document,
    remove_lines,
)
from memory_ui.documents.versions import Version
from memory_ui.identity import Actor
from memory_ui.memory.search import (
    SearchQuery,
    Segment,
    excerpt,
    matching_entries,
    text_pattern,
)
from memory_ui.resurfacing import Deletions, deletions_forget, deletions_record, person_of
from memory_ui.sources.agent_memory import Loaded, Memory, MemoryChanged, NothingToChange, Target
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_source, memory_store

PREVIEW_LINES = 5  # entries shown per memory in a preview
OTHER_LINE = 100  # characters of the first other line of an entry, named in the preview
# List items are found by markdown-it's block parse of the entry, slow on hostile
# megabytes: a longer entry is offered whole only.
ITEMS_MAX_CHARS = 100_000
# List, quote and heading marks before a line's own text.
_LINE_MARKS = re.compile(r"[ \t]*(?:(?:[-+*>#]+|\d{1,9}[.)])[ \t]+)*")


def amount(entries: int, items: int = 0) -> str:
    """ "2 entries", "1 list item", "1 entry and 2 list items"."""
    parts = [f"{entries} entr{'y' if entries == 1 else 'ies'}"] if entries or not items else []
    if items:
        parts.append(f"{items} list item{'' if items == 1 else 's'}")
    return " and ".join(parts)


@dataclass(frozen=True)
class EntryPreview:
    """One chosen entry as the preview shows it: the line matching the search's text (the
    match marked) or its first line, what else it holds (deleted with it), and the list
    items that hold every match when the entry keeps more without them (else none)."""

    entry: Entry
    line: list[Segment]
    others: int  # non-blank lines of the entry besides the matching ones
    other: str  # the first of them, as a label ("" when none)
    items: tuple[ListItem, ...] = ()


def entry_preview(
    document: Document, entry: Entry, pattern: re.Pattern[str] | None
) -> EntryPreview:
    lines = [line for line in entry.body.splitlines() if line.strip()]
    matching = {n for n, line in enumerate(lines) if pattern and pattern.search(line)}
    first = min(matching, default=0)
    shown = excerpt(_LINE_MARKS.sub("", lines[first], count=1), pattern) if lines else []
    rest = [line for n, line in enumerate(lines) if n not in matching and n != first]
    other = entry_label(rest[0], OTHER_LINE) if rest else ""
    items = _matching_items(document, entry, pattern, len(lines)) if pattern else ()
    return EntryPreview(entry, shown, len(rest), other, items)


def _matching_items(
    document: Document, entry: Entry, pattern: re.Pattern[str], body_lines: int
) -> tuple[ListItem, ...]:
    """The entry's top-level list items that hold every match of `pattern` in its text, if
    some of its text is left without them."""
    if len(entry.source) > ITEMS_MAX_CHARS:
        return ()
    items = list_items_between(document.lines, entry.start_line, entry.end_line)
    matching = [item for item in items if item.depth == 0 and pattern.search(item.text)]
    in_items = sum(len(pattern.findall(item.text)) for item in matching)
    if not matching or in_items != len(pattern.findall(entry.body)):
        return ()
    item_lines = sum(1 for item in matching for line in item.text.splitlines() if line.strip())
    return tuple(matching) if item_lines < body_lines else ()


@dataclass(frozen=True)
class ListedEntry:
    """A chosen entry as the select page lists it: when the person deleted it before, if it
    came back (`selection_came_back`)."""

    entry: Entry
    came_back: datetime | None = None


@dataclass(frozen=True)
class Chosen:
    """The entries chosen in one memory, as read for the preview (newest first)."""

    loaded: Loaded
    indexes: list[int]
    pattern: re.Pattern[str] | None = None  # the search's text, when it has one
    came_back: dict[int, datetime] = field(default_factory=dict)  # by entry index

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
    def listed(self) -> list[ListedEntry]:
        return [ListedEntry(entry, self.came_back.get(entry.index)) for entry in self.entries]

    @cached_property
    def previews(self) -> list[EntryPreview]:
        """Every chosen entry's preview (the list items of any entry can go alone)."""
        if self.loaded.prepared is None:
            return []
        document = self.loaded.prepared.document
        return [entry_preview(document, entry, self.pattern) for entry in self.entries]

    @property
    def shown(self) -> list[EntryPreview]:
        return self.previews[:PREVIEW_LINES]

    @property
    def more(self) -> int:
        return max(0, len(self.indexes) - PREVIEW_LINES)

    @property
    def with_items(self) -> list[EntryPreview]:
        """The entries whose matching list items can go alone."""
        return [preview for preview in self.previews if preview.items]


@dataclass(frozen=True)
class Selection:
    chosen: list[Chosen]  # memories with at least one entry chosen
    failed: list[Loaded] = field(default_factory=list)  # memories that could not be read

    @property
    def total(self) -> int:
        return sum(len(c.indexes) for c in self.chosen)

    @property
    def listed(self) -> int:
        """Entries that are lists holding more than their matching items."""
        return sum(len(c.with_items) for c in self.chosen)

    @property
    def only_items(self) -> str:
        """The button that deletes only the matching list items, and the other entries whole."""
        items = sum(len(p.items) for c in self.chosen for p in c.with_items)
        whole = self.total - self.listed
        label = f"Delete only the {items} matching list item{'' if items == 1 else 's'}"
        return f"{label} and {amount(whole)} whole" if whole else label


def select_matching(loaded: list[Loaded], query: SearchQuery) -> Selection:
    """Every entry matching `query` in the memories read ("Select all N matching")."""
    pattern = text_pattern(query.text)
    chosen = [
        Chosen(one, found, pattern)
        for one in loaded
        if one.prepared is not None and (found := matching_entries(one.prepared.document, query))
    ]
    return Selection(chosen, [one for one in loaded if one.error is not None])


def selection_came_back(selection: Selection, deletions: Deletions) -> Selection:
    """`selection` with each chosen entry the person deleted before marked (only the chosen
    entries are hashed, and only when they deleted anything)."""
    if not deletions.deleted:
        return selection
    source = memory_source()
    chosen = [
        replace(one, came_back=_came_back(one.entries, deletions, source))
        for one in selection.chosen
    ]
    return replace(selection, chosen=chosen)


def _came_back(entries: list[Entry], deletions: Deletions, source: str) -> dict[int, datetime]:
    found = ((entry.index, deletions.came_back(source, entry.body)) for entry in entries)
    return {index: when for index, when in found if when}


def select_picked(
    loaded: list[Loaded], picked: dict[str, set[int]], query: SearchQuery | None = None
) -> Selection:
    """The entries ticked one by one (`picked`: target key to indexes), those that exist;
    shown by their lines matching `query`'s text when the ticks came with a search."""
    pattern = text_pattern(query.text) if query else None
    chosen = []
    for one in loaded:
        if one.prepared is None:
            continue
        count = len(one.prepared.document.entries)
        indexes = sorted((i for i in picked.get(one.key, ()) if 0 <= i < count), reverse=True)
        if indexes:
            chosen.append(Chosen(one, indexes, pattern))
    return Selection(chosen, [one for one in loaded if one.error is not None])


def without_entries(
    text: str, indexes: set[int], items: dict[int, list[tuple[int, int]]] | None = None
) -> str | None:
    """The document without those entries (None when none of them is there), parsed once;
    for an entry in `items`, without only those line ranges, each one of its top-level list
    items (else None: the document is not the one the ranges were read from).

    Ranges with only blank lines between them go as one, and the ranges from the last one
    up: removing a range tidies only the blank lines at its own seam, which lie after the
    text kept before it, so the ranges still to remove keep their line numbers. The same
    text as removing entries one at a time (tests/unit/test_batch.py), without a parse per
    entry."""
    document = parse_document(text)
    entries = document.entries
    present = sorted(i for i in indexes if 0 <= i < len(entries))
    if not present:
        return None
    ranges: list[tuple[int, int]] = []
    for index in present:
        entry = entries[index]
        only = (items or {}).get(index)
        if not only:
            ranges.append((entry.start_line, entry.end_line))
            continue
        listed = list_items_between(document.lines, entry.start_line, entry.end_line)
        if not set(only) <= {(i.start_line, i.end_line) for i in listed if i.depth == 0}:
            return None
        ranges.extend(sorted(set(only)))
    runs: list[tuple[int, int]] = []
    for start, end in ranges:
        between = document.lines[runs[-1][1] : start] if runs else None
        if between is not None and not any(line.strip() for line in between):
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
    for start, end in reversed(runs):
        text = remove_lines(text, start, end)
    return text


@dataclass(frozen=True)
class Deleted:
    """What the delete did in one memory: `before`/`after` when done, else why not."""

    target: Target
    count: int  # entries deleted whole
    before: Memory | None = None
    after: Memory | None = None
    changed: bool = False  # it changed since the preview: nothing deleted in it
    error: SourceError | None = None
    items: int = 0  # list items deleted from entries that stay

    @property
    def done(self) -> bool:
        return self.after is not None

    @property
    def what(self) -> str:
        return amount(self.count, self.items)


def batch_delete(
    actor: Actor,
    target: Target,
    version: Version,
    indexes: set[int],
    items: dict[int, list[tuple[int, int]]] | None = None,
) -> Deleted:
    """Delete the chosen entries of one memory if it is still at `version`; of an entry in
    `items`, only those of its list items (line ranges at `version`)."""
    items = {index: ranges for index, ranges in (items or {}).items() if index in indexes}
    count, listed = len(indexes) - len(items), sum(len(set(r)) for r in items.values())
    try:
        done = memory_store().rewrite(
            actor,
            target,
            lambda current: without_entries(current.content_markdown, indexes, items),
            started_from=version,
            action=Action.DELETE_ENTRY,
            count=len(indexes),
        )
    except (MemoryChanged, NothingToChange):
        return Deleted(target, count, changed=True, items=listed)
    except SourceError as exc:
        return Deleted(target, count, error=exc, items=listed)
    removed = _removed_texts(done.before.content_markdown, indexes, items)
    deletions_record(person_of(actor), memory_source(), removed)
    return Deleted(target, count, done.before, done.after, items=listed)


def _removed_texts(
    text: str, indexes: set[int], items: dict[int, list[tuple[int, int]]]
) -> list[str]:
    """What `without_entries` took out of `text`: whole entries' bodies, and the list items
    it took out of entries that stay."""
    document = parse_document(text)
    entries = document.entries
    removed = []
    for index in (i for i in indexes if 0 <= i < len(entries)):
        entry = entries[index]
        if index not in items:
            removed.append(entry.body)
            continue
        ranges = set(items[index])
        listed = list_items_between(document.lines, entry.start_line, entry.end_line)
        removed += [i.text for i in listed if (i.start_line, i.end_line) in ranges]
    return removed


def _restored_texts(before: str, after: str) -> list[str]:
    """What an Undo put back into `before` to make `after`: the entries it holds that
    `before` did not, and their list items (small entries only: see ITEMS_MAX_CHARS)."""
    was = {entry.body for entry in parse_document(before).entries}
    document = parse_document(after)
    back = []
    for entry in document.entries:
        if entry.body in was:
            continue
        back.append(entry.body)
        if len(entry.body) <= ITEMS_MAX_CHARS:
            listed = list_items_between(document.lines, entry.start_line, entry.end_line)
            back += [item.text for item in listed if item.depth == 0]
    return back


@dataclass(frozen=True)
class Restored:
    """What Undo did in one memory: restored, or why not."""

    target: Target
    count: int
    done: bool = False
    changed: bool = False  # it changed after the delete: restoring would lose that
    error: SourceError | None = None
    items: int = 0

    @property
    def what(self) -> str:
        return amount(self.count, self.items)


def batch_restore(
    actor: Actor, target: Target, before: str, after: Version | None, count: int, items: int = 0
) -> Restored:
    """Put one memory back as it was before the batch, if it is still as the batch left it."""
    try:
        done = memory_store().rewrite(
            actor, target, lambda _: before, started_from=after, action=Action.UNDO, count=count
        )
    except (MemoryChanged, NothingToChange):
        return Restored(target, count, changed=True, items=items)
    except SourceError as exc:
        return Restored(target, count, error=exc, items=items)
    restored = _restored_texts(done.before.content_markdown, done.after.content_markdown)
    deletions_forget(person_of(actor), memory_source(), restored)
    return Restored(target, count, done=True, items=items)
