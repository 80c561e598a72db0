"""The legacy stores as the portal's shared pages and steps read them (`Source.backend`):
the adapter (`operations._backend()`, one per process) with what it alone does not say.
Each store is named for people (its agent's name made readable) and marked read only where
the portal lacks WRITE MEMORY STORE; support acting for someone by UPN gets the object id a
scope over {oid} needs from Microsoft Graph, or is refused saying why; a write a store refuses (403) is
remembered, so the store is offered as read only from then on. Nothing here is audited:
`sources.generic` audits every step with the source's name, as for every source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from memory_ui.budget import fan_out
from memory_ui.identity import Actor
from memory_ui.sources.legacy import LegacyForbidden, LegacyNotFound, operations
from memory_ui.sources.legacy.adapter import READ_ONLY_REASON, LegacyBackend
from memory_ui.sources.protocol import (
    Capability,
    Erasure,
    Item,
    ItemsPage,
    Outcome,
    SourceTarget,
    Subject,
)

PATH_PREFIX = "/memories/"
MAX_PATH = 1024  # the stores' own limit (docs/legacy-stores.md, Paths)
NOT_A_PATH = "Not a memory file path."


def readable_name(target: SourceTarget) -> str:
    """A store's name for people: its agent's made readable ("travel-planner": "Travel
    Planner"); the full name only for a store without an agent (pages that know the
    agent's display name use that instead)."""
    words = (target.agent or "").replace("-", " ").replace("_", " ").split()
    return " ".join(word[:1].upper() + word[1:] for word in words) or target.key


class StoresBackend:
    """A `MemoryBackend` over the legacy adapter, for any actor (the scope comes from the
    subject each call is given)."""

    def __init__(self, adapter: LegacyBackend) -> None:
        self._adapter = adapter
        self.source = adapter.source
        self.capabilities = adapter.capabilities

    def missing_reason(self, capability: Capability) -> str:
        return self._adapter.missing_reason(capability)

    def shown(self, target: SourceTarget) -> SourceTarget:
        """`target` as pages show it: named for people, read only where it is (the store's
        privileges, kept a minute by the adapter)."""
        read_only = "" if self._adapter.writable(target) else READ_ONLY_REASON
        return replace(target, title=readable_name(target), read_only=read_only)

    def _checked(self, subject: Subject) -> Subject:
        return operations.scoped(subject)

    def _write[T](self, target: SourceTarget, step: Callable[[], T]) -> T:
        try:
            return step()
        except LegacyForbidden:
            self._adapter.refused_write(target)  # offered no more until the grant changes
            raise

    def list_targets(self, subject: Subject) -> list[SourceTarget]:
        """The configured stores the portal may read (one call each, a few at a time)."""
        self._checked(subject)
        described = fan_out(self._adapter.describe, self._adapter.configured_targets())
        return [self.shown(target) for target in described if target is not None]

    def find_target(self, subject: Subject, key: str) -> SourceTarget | None:
        """The configured store of that key, asking it nothing but its privileges (kept a
        minute): what a page's URL names is looked up here, never trusted."""
        self._checked(subject)
        found = (t for t in self._adapter.configured_targets() if t.key == key)
        return next((self.shown(target) for target in found), None)

    def read_page(
        self, subject: Subject, target: SourceTarget, cursor: str | None = None
    ) -> ItemsPage:
        page = self._adapter.read_page(self._checked(subject), target, cursor)
        return replace(page, target=target)

    def read_item(self, subject: Subject, target: SourceTarget, key: str) -> Item:
        return self._adapter.read_item(self._checked(subject), target, _path(key))

    def search(self, subject: Subject, query: str) -> list[tuple[SourceTarget, Item]]:
        found = self._adapter.search(self._checked(subject), query)
        shown: dict[str, SourceTarget] = {}
        for target, _ in found:
            if target.key not in shown:
                shown[target.key] = self.shown(target)
        return [(shown[target.key], item) for target, item in found]

    def append(self, subject: Subject, target: SourceTarget, text: str, reason: str) -> Item:
        subject = self._checked(subject)
        return self._write(target, lambda: self._adapter.append(subject, target, text, reason))

    def edit_item(
        self, subject: Subject, target: SourceTarget, key: str, old: str, new: str
    ) -> Item:
        subject = self._checked(subject)
        key = _path(key)
        return self._write(target, lambda: self._adapter.edit_item(subject, target, key, old, new))

    def replace_item(self, subject: Subject, target: SourceTarget, key: str, text: str) -> Item:
        subject = self._checked(subject)
        key = _path(key)
        return self._write(target, lambda: self._adapter.replace_item(subject, target, key, text))

    def delete_item(self, subject: Subject, target: SourceTarget, key: str) -> Item:
        subject = self._checked(subject)
        key = _path(key)
        return self._write(target, lambda: self._adapter.delete_item(subject, target, key))

    def restore_item(self, subject: Subject, target: SourceTarget, item: Item) -> Item:
        subject = self._checked(subject)
        return self._write(target, lambda: self._adapter.restore_item(subject, target, item))

    def clear_target(self, subject: Subject, target: SourceTarget) -> list[Outcome]:
        subject = self._checked(subject)
        return self._write(target, lambda: self._adapter.clear_target(subject, target))

    def erase_subject(self, subject: Subject) -> Erasure:
        return self._adapter.erase_subject(self._checked(subject))

    def export(self, subject: Subject, target: SourceTarget) -> str:
        return self._adapter.export(self._checked(subject), target)


def _path(key: str) -> str:
    """`key` when it is a memory file's path (under /memories/), which the stores keep
    every file at; else no such file, asking the store nothing."""
    if not key.startswith(PATH_PREFIX) or len(key) == len(PATH_PREFIX) or len(key) > MAX_PATH:
        raise LegacyNotFound(NOT_A_PATH)
    return key


def stores_backend(actor: Actor) -> StoresBackend:
    """The source's backend for `actor` (every actor shares the process's adapter)."""
    return StoresBackend(operations._backend())
