"""New since a person's last visit: when they last opened each memory (`MemoryVisit`),
and which entries were added after that.

An entry is new when its own timestamp (the `## Added …` line an agent wrote) is later
than the visit, and the memory is no longer the version seen then. Entries without a
time (a preamble, a document without dated entries) are never counted new: there is
nothing to tell when they came. Nor is a file moved in from an older memory system: its
heading is the time of the move, and its reason gives the file's own time. Nothing here
reads or keeps content: a visit is a time and a version token.

A memory the person has not opened here yet counts from their first visit to any memory
(their earliest `MemoryVisit`): what agents added since they started using the portal is
new to them too. Before any visit at all nothing is new: everything would be.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Min
from django.utils import timezone

from memory_ui.documents import Entry
from memory_ui.documents.versions import Version
from memory_ui.models import MemoryVisit
from memory_ui.sources.agent_memory import Loaded, Target


@dataclass(frozen=True)
class NewEntry:
    """One entry added since the last visit, with the memory it is in."""

    target: Target
    entry: Entry


def visits_of(user_oid: str) -> dict[str, MemoryVisit]:
    """Every memory this person has opened, by target key (one query)."""
    return {v.target_key: v for v in MemoryVisit.objects.filter(user_oid=user_oid)}


def first_visit(visits: dict[str, MemoryVisit]) -> datetime | None:
    """When this person first opened any memory here: the baseline of the ones they have
    not opened yet (None before any visit)."""
    return min((v.seen_at for v in visits.values()), default=None)


# Read on every view of a memory page, by its unique key: as a QuerySet, Django built and
# compiled this same SELECT on each call, ten times the cost of running it (about 0.25 ms a
# page, docs/performance.md). A raw query still gives the model, its fields converted.
_VISIT_BY_KEY = (
    f"SELECT * FROM {MemoryVisit._meta.db_table} WHERE user_oid = %s AND target_key = %s"  # noqa: S608
)


def visit_of(user_oid: str, target_key: str) -> MemoryVisit | None:
    return next(iter(MemoryVisit.objects.raw(_VISIT_BY_KEY, [user_oid, target_key])), None)


def visit_record(user_oid: str, loaded: Loaded, *, keep_marks: bool) -> MemoryVisit | None:
    """Remember that this person saw `loaded` now. `keep_marks`: a page being opened;
    otherwise "Mark as seen", which clears the marks. Nothing is recorded for a memory that
    could not be read.

    Opening the page moves the marks on (to what came since the opening before) only when
    something was added since then. Otherwise it is the same visit continued: a reload, or
    the page after the person's own edit, delete or move (none of which dates an entry
    later), so the entries marked new stay marked until "Mark as seen".

    Opening a version already seen writes nothing: the row would only get a later
    `seen_at`, and with the version unchanged nothing counts new from either time (a
    database write on every view, docs/performance.md). An entry dated between the two
    times but written only later counts new then, as it should."""
    if loaded.memory is None:
        return None
    now = timezone.now()
    version = Version.of(loaded.memory).token()
    visit, created = visit_of(user_oid, loaded.key), False
    if visit is None:  # get_or_create: a concurrent first opening may have made it
        visit, created = MemoryVisit.objects.get_or_create(
            user_oid=user_oid,
            target_key=loaded.key,
            defaults={"seen_at": now, "seen_version": version},
        )
    if created:
        if keep_marks:
            # Opened for the first time: the page marks what came since the person's first
            # visit elsewhere, as the dashboard and What's new counted it.
            earlier = MemoryVisit.objects.filter(user_oid=user_oid).exclude(pk=visit.pk)
            visit.previous_seen_at = earlier.aggregate(first=Min("seen_at"))["first"]
            if visit.previous_seen_at is not None:
                visit.save(update_fields=("previous_seen_at",))
        return visit
    if keep_marks and visit.seen_version == version:
        return visit
    if not keep_marks:
        visit.previous_seen_at = now
    elif new_entries(loaded, visit):
        visit.previous_seen_at = visit.seen_at
    visit.seen_at, visit.seen_version = now, version
    visit.save(update_fields=("seen_at", "seen_version", "previous_seen_at"))
    return visit


def new_since(loaded: Loaded, since: datetime | None, seen_version: str = "") -> list[Entry]:
    """The entries of `loaded` added after `since`, newest first; none when there was no
    visit yet (everything would be new: nothing to tell apart) or the memory is still the
    version seen."""
    if since is None or loaded.memory is None or loaded.prepared is None:
        return []
    if seen_version and Version.of(loaded.memory).token() == seen_version:
        return []
    # A file moved in from an older system is dated by the move, not by its own time.
    entries = [
        e
        for e in loaded.prepared.document.entries
        if e.timestamp and e.timestamp > since and e.file_changed is None
    ]
    # Newest first; entries of the same second in the order they were added.
    return sorted(entries, key=lambda e: (e.timestamp or since, e.index), reverse=True)


def new_entries(
    loaded: Loaded, visit: MemoryVisit | None, first: datetime | None = None
) -> list[Entry]:
    """New since the last time this memory was opened (the dashboard, What's new); for a
    memory never opened, since `first` (`first_visit`)."""
    if visit is None:
        return new_since(loaded, first)
    return new_since(loaded, visit.seen_at, visit.seen_version)


def marked_new(loaded: Loaded, visit: MemoryVisit | None) -> list[Entry]:
    """What the open memory page marks new: added since the visit before this one."""
    if visit is None:
        return []
    return new_since(loaded, visit.previous_seen_at)


def whats_new(loaded: list[Loaded], visits: dict[str, MemoryVisit]) -> list[NewEntry]:
    """New entries across every memory read, newest first."""
    first = first_visit(visits)
    found = [
        NewEntry(one.target, entry)
        for one in loaded
        for entry in new_entries(one, visits.get(one.key), first)
    ]
    return sorted(
        found, key=lambda n: (n.entry.timestamp or timezone.now(), n.entry.index), reverse=True
    )
