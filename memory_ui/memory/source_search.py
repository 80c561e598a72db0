"""Searching the other memory systems beside the primary source's memories, all at once
(`search_everywhere`), and the one count of what a search found in every system
(`search_counts`): every source that can search, by its `MemoryBackend.search`. Each
system's own search narrows; then the portal's rule (the text taken literally,
`search.text_pattern`) decides, so every system matches alike."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

from memory_ui.identity import Actor
from memory_ui.memory.at_once import at_once
from memory_ui.memory.search import (
    SearchQuery,
    SearchResults,
    Segment,
    excerpt,
    memory_search,
    text_pattern,
)
from memory_ui.resurfacing import Deletions, deletions_of, person_of
from memory_ui.sources import protocol, registry
from memory_ui.sources.agent_memory import Target
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
    """An item of another source matching the text: where it is, and an excerpt;
    `came_back`: when the person deleted the item's text before, if it came back (its page
    flags it too: memory_ui/resurfacing.py)."""

    target: protocol.SourceTarget
    key: str
    description: str
    excerpt: list[Segment]
    came_back: datetime | None = None


@dataclass(frozen=True)
class SourceResults:
    source: Source
    hits: list[SourceHit] = field(default_factory=list)
    error: SourceError | None = None

    @property
    def targets(self) -> int:
        """The targets with a matching item: each is a memory, as a CoreAPI one is."""
        return len({hit.target.key for hit in self.hits})


def search_everywhere(
    actor: Actor, targets: list[Target], query: SearchQuery, *, others: bool
) -> tuple[SearchResults, list[SourceResults]]:
    """The primary source's memories in `targets` and, with `others`, every other source
    that can search and brings its adapter, each system searched at the same time within
    its own deadline (`at_once`): the search takes as long as the slowest system, and one
    that does not answer in time is reported with its error beside the others' results.

    Another source is searched for `query.text` by its own search, then by the portal's
    rule (the text taken literally), so every system matches alike; a date range applies
    to an item's last update. None is searched without text or with a reason filter (their
    items have no reasons).

    What the person deleted before is read once, here on the request's thread, for every
    system: a result that came back says so."""
    deletions = deletions_of(person_of(actor))
    pattern = text_pattern(query.text)
    searched = []
    if others and pattern is not None and not query.reason:
        searched = [
            source
            for source in registry.others()
            if source.backend is not None and source.can(Capability.SEARCH)
        ]
    results, *found = at_once(
        partial(memory_search, actor, targets, query, deletions=deletions),
        *(partial(_source_search, actor, query, pattern, deletions, source) for source in searched),
    )
    return results, found


def _source_search(
    actor: Actor,
    query: SearchQuery,
    pattern: re.Pattern[str],
    deletions: Deletions,
    source: Source,
) -> SourceResults:
    assert source.backend is not None  # search_everywhere keeps sources with adapters
    try:
        backend = source.backend(actor)
        pairs = backend.search(subject_of(actor), query.text)
    except SourceError as exc:
        return SourceResults(source, error=exc)
    matching = [
        (target, item)
        for target, item in pairs
        if any(pattern.search(part) for part in (item.key, item.description, item.text or ""))
        and (not query.start or (item.updated is not None and item.updated >= query.start))
        and (not query.end or (item.updated is not None and item.updated < query.end))
    ]
    hits = [
        SourceHit(
            target,
            item.key,
            item.description,
            excerpt(item.text or "", pattern),
            # Only an item the search gave with its text can be told apart.
            deletions.came_back(backend.source, item.text) if item.text else None,
        )
        for target, item in matching
    ]
    return SourceResults(source, hits)
