"""DRAFT: the `MemoryBackend` protocol, a front for several memory systems (issue 18).

Not wired into any view yet. A backend must list the targets a subject has and read one
page of a target; everything else is a declared capability, and the UI is to offer an
action only where the source declares it, saying in one sentence (`missing_reason`) what
the source does not allow where it does not. CoreAPI is to move behind this protocol
unchanged in behaviour; `legacy_backend.LegacyBackend` is the first adapter.
"""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from memory_ui.coreapi import CoreAPIError
from memory_ui.legacy import LegacyStoreError

# What a page catches around any source's call: both hierarchies carry a user-safe
# `message`, `portal_status`, `status` and `outcome_unknown`, so one alert shows either.
SOURCE_ERRORS = (CoreAPIError, LegacyStoreError)
type SourceError = CoreAPIError | LegacyStoreError


class Capability(enum.Flag):
    NONE = 0
    SEARCH = enum.auto()
    APPEND = enum.auto()
    EDIT_ITEM = enum.auto()
    DELETE_ITEM = enum.auto()
    RESTORE_ITEM = enum.auto()
    CLEAR_TARGET = enum.auto()
    ERASE_SUBJECT = enum.auto()
    EXPORT = enum.auto()
    IMPORT = enum.auto()
    CONDITIONAL_WRITE = enum.auto()  # a write with a version precondition


class Unsupported(Exception):
    """The source lacks the capability; `str()` is the one sentence users see."""


@dataclass(frozen=True)
class Subject:
    """Whose memory: the verified identity (never anything the browser sent)."""

    upn: str
    oid: str


@dataclass(frozen=True)
class Target:
    """One memory of a subject in one source: a CoreAPI document, a legacy store's files."""

    source: str
    key: str  # unique within the source (CoreAPI: scope/agent; legacy: the store's full name)
    title: str
    description: str = ""
    agent: str | None = None  # the agent it belongs to, when configuration says so


@dataclass(frozen=True)
class Item:
    """One item of a target: a CoreAPI entry, a legacy file. `text` None = not loaded."""

    key: str  # unique within the target (legacy: the path)
    description: str
    updated: dt.datetime | None
    text: str | None = None
    version: str | None = None  # for conditional writes, where the source has them
    has_text: bool = True  # False: the source says the item is empty (without loading it)


@dataclass(frozen=True)
class Page:
    target: Target
    items: tuple[Item, ...]
    next_cursor: str | None = None


@dataclass(frozen=True)
class Outcome:
    """One row of a clear or an erasure: what happened to one target or item, and why."""

    target: Target | None
    key: str
    result: str  # "erased" | "partly" | "not possible" | "failed"
    reason: str = ""
    # A target's row: how many of its items were erased, of how many (None: not known).
    erased: int = 0
    total: int | None = None


@dataclass(frozen=True)
class Erasure:
    outcomes: tuple[Outcome, ...] = field(default_factory=tuple)


@runtime_checkable
class MemoryBackend(Protocol):
    """Required: `source`, `capabilities`, `list_targets`, `read_page`. The optional
    operations below raise `Unsupported` unless `capabilities` declares them."""

    source: str
    capabilities: Capability

    def missing_reason(self, capability: Capability) -> str: ...

    def list_targets(self, subject: Subject) -> list[Target]: ...

    def read_page(self, subject: Subject, target: Target, cursor: str | None = None) -> Page: ...

    def read_item(self, subject: Subject, target: Target, key: str) -> Item: ...

    def search(self, subject: Subject, query: str) -> list[tuple[Target, Item]]: ...

    def append(self, subject: Subject, target: Target, text: str, reason: str) -> Item: ...

    def edit_item(self, subject: Subject, target: Target, key: str, old: str, new: str) -> Item: ...

    def replace_item(self, subject: Subject, target: Target, key: str, text: str) -> Item: ...

    def delete_item(self, subject: Subject, target: Target, key: str) -> Item: ...

    def restore_item(self, subject: Subject, target: Target, item: Item) -> Item: ...

    def clear_target(self, subject: Subject, target: Target) -> list[Outcome]: ...

    def erase_subject(self, subject: Subject) -> Erasure: ...

    def export(self, subject: Subject, target: Target) -> str: ...


def require(backend: MemoryBackend, capability: Capability) -> None:
    """Raise Unsupported, with the source's sentence, unless the backend declares it."""
    if capability not in backend.capabilities:
        raise Unsupported(backend.missing_reason(capability))
