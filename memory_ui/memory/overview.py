"""Support's overview of a person in every memory system, without content
(`overview_everywhere`): the primary source's memories loaded, and each other source that
can list counted per target (its items, and how many came back after the person deleted
them: memory_ui/resurfacing.py), every system read at the same time within its own deadline
(`at_once`), so the page takes as long as the slowest system and one that fails or answers
late is named with why, beside the others' counts. A source that cannot list, or that no
person's memory can be reached in, is named with why and whom to ask, never left out."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from memory_ui.identity import Actor
from memory_ui.memory.at_once import at_once
from memory_ui.resurfacing import Deletions
from memory_ui.sources import registry
from memory_ui.sources.agent_memory import Loaded, Target
from memory_ui.sources.listing import Counted, targets_counted
from memory_ui.sources.protocol import Source, SourceError


@dataclass(frozen=True)
class SystemCounts:
    """One other system in the overview: its targets counted, or why they are not."""

    source: Source
    targets: tuple[Counted, ...] = ()
    why: str = ""

    @property
    def keeps_theirs(self) -> bool:
        """Whether any target counted is the person's own (not only shared ones)."""
        return any(not counted.target.shared for counted in self.targets)

    @property
    def came_back(self) -> int:
        return sum(counted.came_back for counted in self.targets)


def not_counted_reason(source: Source) -> str:
    """Why the overview cannot count what `source` keeps ("" where it can), with whom to ask."""
    ask = f" Ask {source.owner}." if source.owner else ""
    if source.backend is None:
        return (source.unreachable or f"{source.title} cannot be read here.") + ask
    if source.cannot_list:
        return (source.cannot_list_to_support or source.cannot_list) + ask
    return ""


def overview_everywhere(
    actor: Actor, targets: list[Target], deletions: Deletions
) -> tuple[list[Loaded], list[SystemCounts]]:
    """The primary source's `targets` loaded, and every other source in registry order:
    counted where it can list, else with why not. `deletions`, read once on the request's
    thread, tells what came back in every system."""
    others = registry.others()
    counted = [source for source in others if not not_counted_reason(source)]
    loaded, *found = at_once(
        partial(registry.memory_store().load_many, actor, targets),
        *(partial(_counted, actor, deletions, source) for source in counted),
    )
    by_name = {system.source.name: system for system in found}
    systems = [
        by_name.get(source.name) or SystemCounts(source, why=not_counted_reason(source))
        for source in others
    ]
    return loaded, systems


def _counted(actor: Actor, deletions: Deletions, source: Source) -> SystemCounts:
    assert source.backend is not None  # overview_everywhere counts sources with adapters
    try:
        listed = targets_counted(actor, source.backend(actor), deletions)
    except SourceError as exc:
        return SystemCounts(source, why=f"It could not be read just now: {exc.message}")
    return SystemCounts(source, tuple(listed))
