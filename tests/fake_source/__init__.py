"""A third memory source that exists only for tests: a team notebook, registered through
settings alone (`PORTAL_MEMORY_SOURCES` naming this package), with one adapter and no
change to the portal's shared code. It proves that adding a memory system is a package and
a settings entry. Its memory lives in this process (`NOTEBOOK`), since the devstack has no
such system; everything above the adapter (registry, steps, audit, pages) is the
production path.

`settings.NOTEBOOK_WITHOUT` (capability names) takes capabilities away, so tests can
remove each in turn; `NOTEBOOK.down` makes every call fail as an unreachable system does.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from django.conf import settings

from memory_ui.identity import Actor
from memory_ui.sources.generic import BackendSteps
from memory_ui.sources.protocol import (
    Capability,
    Erasure,
    Item,
    ItemsPage,
    Outcome,
    Preview,
    Source,
    SourceError,
    SourceTarget,
    Subject,
    Unsupported,
)

NAME = "notebook"
TITLE = "Team notebook"
CAPABILITIES = (
    Capability.LIST
    | Capability.SEARCH
    | Capability.EDIT_ITEM
    | Capability.DELETE_ITEM
    | Capability.RESTORE_ITEM
    | Capability.CLEAR_TARGET
    | Capability.ERASE_SUBJECT
    | Capability.EXPORT
)
MISSING = {
    Capability.SEARCH: "The team notebook cannot be searched.",
    Capability.EDIT_ITEM: "The team notebook's notes cannot be edited here.",
    Capability.DELETE_ITEM: "The team notebook's notes cannot be deleted one by one.",
    Capability.RESTORE_ITEM: "The team notebook keeps no copy of a deleted note: no Undo.",
    Capability.CLEAR_TARGET: "A team notebook page cannot be cleared at once.",
    Capability.ERASE_SUBJECT: "The team notebook cannot erase a person's notes.",
    Capability.EXPORT: "The team notebook cannot be downloaded.",
    Capability.APPEND: "The team notebook takes no notes from the portal.",
    Capability.IMPORT: "The team notebook cannot import a document.",
    Capability.CONDITIONAL_WRITE: "The team notebook has no version check.",
    Capability.LIST: "The team notebook cannot be read page by page.",
    Capability.PREVIEW: "The team notebook is not given to agents.",
}
WHEN = dt.datetime(2026, 11, 30, 9, 0, tzinfo=dt.UTC)


class NotebookDown(SourceError):
    portal_status = 503


@dataclass
class Notebook:
    """Pages (targets) of notes (items) per person (UPN)."""

    pages: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    down: bool = False

    def of(self, upn: str) -> dict[str, dict[str, str]]:
        if self.down:
            raise NotebookDown("The team notebook is unavailable, try again.", status=503)
        return self.pages.setdefault(upn.casefold(), {})


NOTEBOOK = Notebook()


def _target(key: str) -> SourceTarget:
    return SourceTarget(NAME, key, f"Notebook page {key}", "Notes the team keeps about you.")


def _item(key: str, text: str | None) -> Item:
    return Item(key=key, description="", updated=WHEN, text=text)


class NotebookBackend:
    source = NAME

    def __init__(self, capabilities: Capability) -> None:
        self.capabilities = capabilities

    def missing_reason(self, capability: Capability) -> str:
        return MISSING[capability]

    def _page(self, subject: Subject, target: SourceTarget) -> dict[str, str]:
        return NOTEBOOK.of(subject.upn).setdefault(target.key, {})

    def list_targets(self, subject: Subject) -> list[SourceTarget]:
        return [_target(key) for key in sorted(NOTEBOOK.of(subject.upn))]

    def read_page(
        self, subject: Subject, target: SourceTarget, cursor: str | None = None
    ) -> ItemsPage:
        notes = self._page(subject, target)
        return ItemsPage(target, tuple(_item(key, text) for key, text in sorted(notes.items())))

    def read_item(self, subject: Subject, target: SourceTarget, key: str) -> Item:
        notes = self._page(subject, target)
        if key not in notes:
            raise NotebookDown("No such note.", status=404)
        return _item(key, notes[key])

    def search(self, subject: Subject, query: str) -> list[tuple[SourceTarget, Item]]:
        return [
            (_target(page), _item(key, text))
            for page, notes in sorted(NOTEBOOK.of(subject.upn).items())
            for key, text in sorted(notes.items())
            if query.casefold() in text.casefold()
        ]

    def append(self, subject: Subject, target: SourceTarget, text: str, reason: str) -> Item:
        raise Unsupported(MISSING[Capability.APPEND])

    def edit_item(
        self, subject: Subject, target: SourceTarget, key: str, old: str, new: str
    ) -> Item:
        text = self.read_item(subject, target, key).text or ""
        return self.replace_item(subject, target, key, text.replace(old, new, 1))

    def replace_item(self, subject: Subject, target: SourceTarget, key: str, text: str) -> Item:
        self.read_item(subject, target, key)
        self._page(subject, target)[key] = text
        return _item(key, text)

    def delete_item(self, subject: Subject, target: SourceTarget, key: str) -> Item:
        before = self.read_item(subject, target, key)
        del self._page(subject, target)[key]
        return before

    def restore_item(self, subject: Subject, target: SourceTarget, item: Item) -> Item:
        self._page(subject, target)[item.key] = item.text or ""
        return item

    def clear_target(self, subject: Subject, target: SourceTarget) -> list[Outcome]:
        notes = self._page(subject, target)
        rows = [Outcome(target, key, "erased") for key in sorted(notes)]
        notes.clear()
        return rows

    def erase_subject(self, subject: Subject) -> Erasure:
        raise Unsupported("erased target by target through the steps")

    def export(self, subject: Subject, target: SourceTarget) -> str:
        notes = self._page(subject, target)
        return "".join(f"## {key}\n\n{text}\n\n" for key, text in sorted(notes.items()))

    def preview(self, subject: Subject, target: SourceTarget, question: str, limit: int) -> Preview:
        raise Unsupported(MISSING[Capability.PREVIEW])

    def report(
        self, subject: Subject, target: SourceTarget, reference: str, key: str, correction: str
    ) -> str:
        raise Unsupported(MISSING[Capability.PREVIEW])


def _capabilities() -> Capability:
    removed = Capability.NONE
    for name in getattr(settings, "NOTEBOOK_WITHOUT", ()):
        removed |= Capability[name]
    return CAPABILITIES & ~removed


def source() -> Source:
    capabilities = _capabilities()
    make: Callable[[Actor], NotebookBackend] = lambda actor: NotebookBackend(capabilities)  # noqa: E731
    return Source(
        name=NAME,
        title=TITLE,
        description="Notes a team keeps about the people it works with.",
        capabilities=capabilities,
        missing={
            capability: MISSING[capability] for capability in Capability if capability in MISSING
        },
        steps=BackendSteps(make),
        backend=make,
        items=("note", "notes"),
    )
