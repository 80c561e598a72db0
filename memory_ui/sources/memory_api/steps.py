"""The memory-api's audited steps over a person's whole memory (`protocol.Steps`), for
"Export everything" and support's deletion request. Not the generic ones: those erase item
by item, and an item delete here is a soft delete the service keeps. The targets are what
the service keeps about the person (`held_targets`: the export, soft-deleted rows too), not
the pages' listing of live memories. An erasure here is the DSAR route per agent, after
checking that nothing changed since the export, then a read-back of the export that says
what remains; the memories without an agent last, since the route erases those only with
the whole subject (M30)."""

from __future__ import annotations

from collections.abc import Callable

from memory_ui.audit import Action
from memory_ui.identity import Actor
from memory_ui.sources.generic import (
    CHANGED,
    NOT_EXPORTED,
    audit,
    export_name,
    subject_of,
    target_export,
)
from memory_ui.sources.memory_api.adapter import NAME, MemoryApiBackend, item_of
from memory_ui.sources.protocol import (
    Erasure,
    Exported,
    ExportedFile,
    Outcome,
    SourceError,
    SourceTarget,
    Subject,
)

OTHERS_KEPT = (
    "the memory service erases memories without an agent only with every agent's, and "
    "{others} of an agent's are still held."
)


class MemoryApiSteps:
    def __init__(self, make: Callable[[Actor], MemoryApiBackend]) -> None:
        self._make = make

    def plan(self, actor: Actor) -> Erasure:
        backend, subject = self._make(actor), subject_of(actor)
        return Erasure(
            tuple(
                Outcome(target, target.key, "to erase", total=len(items))
                for target, items in backend.held_targets(subject)
            )
        )

    def export_all(self, actor: Actor) -> list[ExportedFile]:
        backend, subject = self._make(actor), subject_of(actor)
        files = []
        for target, items in backend.held_targets(subject):
            # The versions are read before the file: a change between the two makes the
            # erasure say "changed", never erase what the file does not hold.
            versions = {i.key: i.version or "" for i in items}
            text = target_export(actor, backend, target)
            files.append(ExportedFile(export_name(target.key, files), text, target.key, versions))
        return files

    def erase_all(self, actor: Actor, exported: Exported) -> Erasure:
        backend, subject = self._make(actor), subject_of(actor)
        if exported is None:
            audit(actor, NAME, Action.ERASE, None, error=SourceError(NOT_EXPORTED, status=409))
            return Erasure((Outcome(None, NAME, "not possible", NOT_EXPORTED),))
        rows = []
        # The agents' targets first, the memories without an agent last (M30).
        for target, _ in backend.held_targets(subject):
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
        user = backend.user(subject)
        held = backend.client.export(user, target.agent)["memories"]
        now = {m["id"]: item_of(m).version or "" for m in held if m["agent"] == target.agent}
        if now != exported.get(target.key, {}):
            # The DSAR route takes an agent's memories all at once: one changed, none erased.
            reason = f"0 of {len(now)} erased; {CHANGED}"
            audit(actor, NAME, Action.ERASE, target, error=SourceError(reason), count=0)
            return Outcome(target, target.key, "changed", reason, 0, len(now))
        if others := len(held) - len(now):
            # Without an agent the DSAR route erases the subject's every memory (M30): not
            # while an agent's are held (kept above as changed, or written since).
            reason = f"0 of {len(now)} erased; {OTHERS_KEPT.format(others=others)}"
            audit(actor, NAME, Action.ERASE, target, error=SourceError(reason), count=0)
            return Outcome(target, target.key, "not possible", reason, 0, len(now))
        erased = backend.client.erase(user, target.agent)
        # Without an agent this reads back the whole subject: what is left of anything.
        left = len(backend.client.export(user, target.agent)["memories"])
        reason = f"{erased} erased; {left} left when read back."
        if left:
            audit(actor, NAME, Action.ERASE, target, error=SourceError(reason), count=erased)
            return Outcome(target, target.key, "partly", reason, erased, erased + left)
        audit(actor, NAME, Action.ERASE, target, count=erased)
        return Outcome(target, target.key, "erased", reason, erased, erased)
