"""Searching the other memory systems beside CoreAPI's memories, and the one count of
what a search found in every system (`search_counts`): the legacy stores by their own
search, and every source with only its adapter (the generic source pages) by its
`MemoryBackend.search`. Each system's own search narrows; then the portal's rule (the text
taken literally, `search.text_pattern`) decides, so every system matches alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memory_ui.identity import Actor
from memory_ui.memory.search import SearchQuery, SearchResults, Segment, excerpt, text_pattern
from memory_ui.sources import protocol, registry
from memory_ui.sources.generic import subject_of
from memory_ui.sources.legacy import LegacyStoreError
from memory_ui.sources.legacy.operations import Store, legacy_enabled, legacy_search
from memory_ui.sources.protocol import Capability, Source, SourceError

# --- the legacy memory stores ------------------------------------------------------------


@dataclass(frozen=True)
class LegacyHit:
    """A legacy store's file matching the text: where it is, and an excerpt."""

    store: Store
    path: str
    description: str
    excerpt: list[Segment]


@dataclass(frozen=True)
class LegacyResults:
    hits: list[LegacyHit] = field(default_factory=list)
    error: LegacyStoreError | None = None

    @property
    def stores(self) -> int:
        """The stores with a matching file: each is a memory, as a CoreAPI one is."""
        return len({hit.store.key for hit in self.hits})


@dataclass(frozen=True)
class SearchCounts:
    """What the search came to in every system searched: the page's one sentence."""

    matches: int
    memories: int
    unsearched: int  # memories (the legacy stores as one) that could not be searched
    nothing_remembered: bool  # no system holds anything that could match


def search_counts(
    results: SearchResults,
    legacy: LegacyResults | None,
    others: Sequence[SourceResults] = (),
) -> SearchCounts:
    """CoreAPI's results, the legacy stores' and every other source's counted together."""
    legacy = legacy or LegacyResults()
    found = sum(len(other.hits) for other in others)
    failed = sum(other.error is not None for other in others)
    return SearchCounts(
        matches=results.total + len(legacy.hits) + found,
        memories=len(results.matched) + legacy.stores + sum(other.targets for other in others),
        unsearched=len(results.errors) + (legacy.error is not None) + failed,
        nothing_remembered=(
            results.nothing_remembered
            and not legacy.hits
            and not legacy.error
            and not found
            and not failed
        ),
    )


def legacy_search_results(actor: Actor, query: SearchQuery) -> LegacyResults | None:
    """The user's legacy store files matching `query.text`, or None when they are not
    searched: the source is off, there is no text, or a reason filter (files have no
    reasons). The stores' own search (any word) narrows, then the portal's rule (the text
    taken literally) decides, so both systems match alike; a date range applies to the
    file's last update."""
    pattern = text_pattern(query.text)
    if pattern is None or query.reason or not legacy_enabled():
        return None
    try:
        found = legacy_search(actor, query.text)
    except LegacyStoreError as exc:
        return LegacyResults(error=exc)
    hits = []
    for hit in found:
        item = hit.item
        text = item.text or ""
        if not any(pattern.search(part) for part in (item.key, item.description, text)):
            continue
        if query.start and (item.updated is None or item.updated < query.start):
            continue
        if query.end and (item.updated is None or item.updated >= query.end):
            continue
        hits.append(LegacyHit(hit.store, item.key, item.description, excerpt(text, pattern)))
    return LegacyResults(hits)


# --- every other source with only its adapter (the generic source pages) ---------------


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
    """Every other source that can search and brings only its adapter, searched for
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
