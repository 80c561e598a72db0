"""Moving files of the legacy memory stores into CoreAPI (issue 18, item 5), for one user
(the portal's pages) and for many (`manage.py move_legacy_memory`).

A file goes to the CoreAPI memory of the agent its store belongs to (LEGACY_STORES_AGENTS),
or to the memory shared with every agent when the user has no such agent. Its text is cut
into items (list items and paragraphs); an item whose text the agent already reads (its own
memory or the shared one, whitespace ignored) is skipped. The rest is appended with the
reason "Moved from <store> <path>", then read back: a file counts as verified only when
every item is in CoreAPI. Only verified files are deleted from the store, and only when
asked. Since what is already there is skipped, running the move twice adds nothing and a
move that failed halfway is resumed by running it again. Every step is audited.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from memory_ui.memory.legacy_ops import Store
from memory_ui.memory.operations import Actor
from memory_ui.memory.targets import Target


class Step(enum.StrEnum):
    MOVE = "move"  # some text to append
    ALREADY_THERE = "already there"  # every item is already in CoreAPI
    EMPTY = "empty"  # the file has no text


class Result(enum.StrEnum):
    MOVED = "moved"  # appended and verified
    ALREADY_THERE = "already there"  # nothing appended: verified as present
    NOT_VERIFIED = "not verified"  # appended but the read-back misses some text
    FAILED = "failed"  # nothing known to be appended (see `reason`)


@dataclass(frozen=True)
class PlannedFile:
    """One legacy file in a preview: where its text goes, what is new and what is there."""

    store: Store
    path: str
    description: str
    destination: Target
    new_items: tuple[str, ...]
    present_items: tuple[str, ...]

    @property
    def step(self) -> Step:
        if self.new_items:
            return Step.MOVE
        return Step.ALREADY_THERE if self.present_items else Step.EMPTY

    @property
    def reason(self) -> str:
        """The reason CoreAPI records with the append."""
        return f"Moved from {self.store.key} {self.path}"


@dataclass(frozen=True)
class MovePlan:
    files: tuple[PlannedFile, ...]
    errors: tuple[tuple[str, str], ...] = ()  # (path or store, user-safe message)


@dataclass(frozen=True)
class MovedFile:
    planned: PlannedFile
    result: Result
    deleted: bool = False  # the legacy copy was deleted (only verified ones, when asked)
    reason: str = ""


@dataclass(frozen=True)
class MoveReport:
    files: tuple[MovedFile, ...]

    def count(self, result: Result) -> int:
        return sum(1 for moved in self.files if moved.result == result)


def move_preview(actor: Actor, store: Store, paths: list[str] | None = None) -> MovePlan:
    """What a move of `paths` (default: every file of the store) would do; no writes."""
    raise NotImplementedError


def move_run(
    actor: Actor, store: Store, paths: list[str] | None = None, *, delete_verified: bool = False
) -> MoveReport:
    """Plans again (never trusts a preview the browser kept), appends, reads back, and
    deletes the legacy copies verified to be in CoreAPI when `delete_verified`."""
    raise NotImplementedError
