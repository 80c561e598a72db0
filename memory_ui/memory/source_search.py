"""Searching the other memory systems beside the primary source's memories, and the one
count of what a search found in every system (`search_counts`): every source that can
search, by its `MemoryBackend.search`. Each system's own search narrows; then the portal's
rule (the text taken literally, `search.text_pattern`) decides, so every system matches
alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memory_ui.identity import Actor
from memory_ui.memory.search import SearchQuery, SearchResults, Segment, excerpt, text_pattern
from memory_ui.sources import protocol, registry
from memory_ui.sources.generic import subject_of
from memory_ui.sources.protocol import Capability, Source, SourceError


@dataclass(frozen=True)
class SearchCounts:
    """What the search came to in every system searched: the page's one sentence."""

    matches: int
    memories: int
    unsearched: int  # memories (another system's as one) that could not be searched
    nothing_remembered: bool  # no system holds anything that could match


def search_counts(results: SearchResults, others: Sequence[SourceResults] = ()) -> SearchCounts:
    """The primary source's results and every other source's counted together."""
    found = sum(len(other.hits) for other in others)
    failed = sum(other.error is not None for other in others)
    return SearchCounts(
        matches=results.total + found,
        memories=len(results.matched) + sum(other.targets for other in others),
        unsearched=len(results.errors) + failed,
        nothing_remembered=results.nothing_remembered and not found and not failed,
    )


@dataclass(frozen=True)
class SourceHit:
    """An item of another source matching the text: where it is, and an excerpt."""

    target: protocol.SourceTarget
    key: str
    description: str
    excerpt: list[Segment]


@dataclass(frozen=True)
class SourceResults:
    source: Source
    hits: list[SourceHit] = field(default_factory=list)
    error: SourceError | None = None

    @property
    def targets(self) -> int:
        """The targets with a matching item: each is a memory, as a CoreAPI one is."""
        return len({hit.target.key for hit in self.hits})


def sources_search(actor: Actor, query: SearchQuery) -> list[SourceResults]:
    """Every other source that can search and brings its adapter, searched for
    `query.text` by its own search, then by the portal's rule (the text taken literally),
    so every system matches alike; a date range applies to an item's last update. None is
    searched without text or with a reason filter (their items have no reasons)."""
    pattern = text_pattern(query.text)
    if pattern is None or query.reason:
        return []
    found = []
    for source in registry.others():
        if source.backend is None or not source.can(Capability.SEARCH):
            continue
        try:
            pairs = source.backend(actor).search(subject_of(actor), query.text)
        except SourceError as exc:
            found.append(SourceResults(source, error=exc))
            continue
        hits = [
            SourceHit(target, item.key, item.description, excerpt(item.text or "", pattern))
            for target, item in pairs
            if any(pattern.search(part) for part in (item.key, item.description, item.text or ""))
            and (not query.start or (item.updated is not None and item.updated >= query.start))
            and (not query.end or (item.updated is not None and item.updated < query.end))
        ]
        found.append(SourceResults(source, hits))
    return found
