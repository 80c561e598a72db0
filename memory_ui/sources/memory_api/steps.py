"""The memory-api's audited steps over a person's whole memory (`protocol.Steps`), for
"Export everything" and support's deletion request. Not the generic ones: those erase item
by item, and an item delete here is a soft delete the service keeps. An erasure here is the
DSAR route per agent, after checking that nothing changed since the export, then a read-back
of the export that says what remains."""

from __future__ import annotations

from collections.abc import Callable

from memory_ui.audit import Action
from memory_ui.identity import Actor
from memory_ui.sources.generic import (
    CHANGED,
    NOT_EXPORTED,
    audit,
    own_targets,
    subject_of,
    target_export,
)
from memory_ui.sources.memory_api.adapter import NAME, MemoryApiBackend
from memory_ui.sources.protocol import (
    Erasure,
    Exported,
    ExportedFile,
    Item,
    Outcome,
    SourceError,
    SourceTarget,
    Subject,
)


def _items(backend: MemoryApiBackend, subject: Subject, target: SourceTarget) -> list[Item]:
    items: list[Item] = []
    cursor: str | None = None
    while True:
        page = backend.read_page(subject, target, cursor)
        items += page.items
        cursor = page.next_cursor
        if cursor is None:
            return items


class MemoryApiSteps:
    def __init__(self, make: Callable[[Actor], MemoryApiBackend]) -> None:
        self._make = make

    def plan(self, actor: Actor) -> Erasure:
        backend, subject = self._make(actor), subject_of(actor)
        return Erasure(
            tuple(
                Outcome(t, t.key, "to erase", total=len(_items(backend, subject, t)))
                for t in own_targets(backend, subject)
            )
        )

    def export_all(self, actor: Actor) -> list[ExportedFile]:
        backend, subject = self._make(actor), subject_of(actor)
        files = []
        for target in own_targets(backend, subject):
            versions = {i.key: i.version or "" for i in _items(backend, subject, target)}
            text = target_export(actor, backend, target)
            files.append(ExportedFile(f"{target.key}.md", text, target.key, versions))
        return files

    def erase_all(self, actor: Actor, exported: Exported) -> Erasure:
        backend, subject = self._make(actor), subject_of(actor)
        if exported is None:
            audit(actor, NAME, Action.ERASE, None, error=SourceError(NOT_EXPORTED, status=409))
            return Erasure((Outcome(None, NAME, "not possible", NOT_EXPORTED),))
        rows = []
        for target in own_targets(backend, subject):
            try:
                rows.append(self._erase(actor, backend, subject, target, exported))
            except SourceError as exc:  # this agent only: the others are still erased
                audit(actor, NAME, Action.ERASE, target, error=exc)
                rows.append(Outcome(target, target.key, "failed", exc.message))
        return Erasure(tuple(rows))

    def _erase(
        self,
        actor: Actor,
        backend: MemoryApiBackend,
        subject: Subject,
        target: SourceTarget,
        exported: dict[str, dict[str, str]],
    ) -> Outcome:
        now = {i.key: i.version or "" for i in _items(backend, subject, target)}
        if now != exported.get(target.key, {}):
            # The DSAR route takes an agent's memories all at once: one changed, none erased.
            reason = f"0 of {len(now)} erased; {CHANGED}"
            audit(actor, NAME, Action.ERASE, target, error=SourceError(reason), count=0)
            return Outcome(target, target.key, "changed", reason, 0, len(now))
        user = backend.user(subject)
        erased = backend.client.erase(user, target.agent)
        left = len(backend.client.export(user, target.agent)["memories"])
        reason = f"{erased} erased; {left} left when read back."
        if left:
            audit(actor, NAME, Action.ERASE, target, error=SourceError(reason), count=erased)
            return Outcome(target, target.key, "partly", reason, erased, erased + left)
        audit(actor, NAME, Action.ERASE, target, count=erased)
        return Outcome(target, target.key, "erased", reason, erased, erased)
