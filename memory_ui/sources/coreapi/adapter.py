"""CoreAPI as a `MemoryBackend` (issue 18): the protocol over `operations` and `exports`,
so the same generic code can list, read, append to, clear, erase and export either source.

Not wired into views: CoreAPI's pages keep calling `operations` directly, unchanged. CoreAPI
needs credentials, so a backend is made for one `Actor` (who acts, for whom) and serves only
that actor's subject. Every change goes through `operations`, which audits it (source
`coreapi`). A target is one stored document (the shared memory, or an agent's own); its
items are the document's entries (key: the entry's index), or one item holding the whole
text when the document has no entries.
"""

from __future__ import annotations

import datetime as dt
from functools import cached_property

from memory_ui.documents import parse_document
from memory_ui.sources import protocol as backends
from memory_ui.sources.coreapi import CoreAPIError
from memory_ui.sources.coreapi.exports import memory_export
from memory_ui.sources.coreapi.operations import (
    Actor,
    agents_list,
    memory_append,
    memory_clear,
    memory_read,
)
from memory_ui.sources.coreapi.targets import Target, all_targets
from memory_ui.sources.protocol import (
    Capability,
    Erasure,
    Item,
    ItemsPage,
    Outcome,
    Subject,
    Unsupported,
)

SOURCE = "coreapi"
CAPABILITIES = (
    Capability.APPEND | Capability.CLEAR_TARGET | Capability.ERASE_SUBJECT | Capability.EXPORT
)
ON_ITS_PAGES = (
    "For CoreAPI memory this is done on the memory's own page (search, edit, delete an "
    "entry, undo, import)."
)


def _item(index: int, text: str, description: str = "", updated: dt.datetime | None = None) -> Item:
    return Item(key=str(index), description=description, updated=updated, text=text)


class CoreAPIBackend:
    source = SOURCE
    capabilities = CAPABILITIES

    def __init__(self, actor: Actor) -> None:
        self._actor = actor

    def missing_reason(self, capability: Capability) -> str:
        return ON_ITS_PAGES

    def _subject_upn(self) -> str:
        return self._actor.subject_upn or self._actor.who.upn

    def _check(self, subject: Subject) -> None:
        """The actor's credentials reach one person's memory: refuse any other subject."""
        if subject.upn.lower() != self._subject_upn().lower():
            raise ValueError("this backend serves only its actor's subject")

    def _stored(self, target: backends.SourceTarget) -> Target:
        """The stored document a target names, looked up among the subject's own."""
        found = next((t for t in self._targets if t.key == target.key), None)
        if found is None:
            raise ValueError(f"{target.key} is not one of the subject's memories")
        return found

    @cached_property
    def _targets(self) -> list[Target]:
        """One agents-list call for the backend's life (one request or one command step)."""
        return all_targets(agents_list(self._actor))

    @staticmethod
    def _as_target(target: Target) -> backends.SourceTarget:
        return backends.SourceTarget(
            SOURCE, target.key, target.label, "", target.agent_name or None
        )

    # --- required ---------------------------------------------------------------------------

    def list_targets(self, subject: Subject) -> list[backends.SourceTarget]:
        """The shared memory and each agent's own (one agents-list call)."""
        self._check(subject)
        return [self._as_target(t) for t in self._targets]

    def read_page(
        self, subject: Subject, target: backends.SourceTarget, cursor: str | None = None
    ) -> ItemsPage:
        """The whole document in one page (CoreAPI reads a document in one call)."""
        self._check(subject)
        memory = memory_read(self._actor, self._stored(target))
        document = parse_document(memory.content_markdown)
        if document.entries:
            items = tuple(
                _item(e.index, e.body, e.reason or "", e.timestamp) for e in document.entries
            )
        elif memory.content_markdown.strip():
            items = (_item(0, memory.content_markdown, updated=memory.updated_on),)
        else:
            items = ()
        return ItemsPage(target, items)

    def read_item(self, subject: Subject, target: backends.SourceTarget, key: str) -> Item:
        item = next((i for i in self.read_page(subject, target).items if i.key == key), None)
        if item is None:
            raise KeyError(key)
        return item

    # --- capabilities -----------------------------------------------------------------------

    def append(
        self, subject: Subject, target: backends.SourceTarget, text: str, reason: str
    ) -> Item:
        self._check(subject)
        memory = memory_append(self._actor, self._stored(target), text, reason or None)
        entries = parse_document(memory.content_markdown).entries
        last = entries[-1] if entries else None
        if last is None:
            return _item(0, memory.content_markdown, updated=memory.updated_on)
        return _item(last.index, last.body, last.reason or "", last.timestamp)

    def clear_target(self, subject: Subject, target: backends.SourceTarget) -> list[Outcome]:
        self._check(subject)
        try:
            memory_clear(self._actor, self._stored(target))
        except CoreAPIError as exc:
            return [Outcome(target, target.key, "failed", exc.message)]
        return [Outcome(target, target.key, "erased")]

    def erase_subject(self, subject: Subject) -> Erasure:
        """Each stored document cleared on its own; a failure does not stop the rest."""
        self._check(subject)
        outcomes: list[Outcome] = []
        for target in self.list_targets(subject):
            outcomes += self.clear_target(subject, target)
        return Erasure(tuple(outcomes))

    def export(self, subject: Subject, target: backends.SourceTarget) -> str:
        self._check(subject)
        return memory_export(self._actor, self._stored(target))

    # --- not declared: CoreAPI's own pages do these (operations, search, exports) ------------

    def search(self, subject: Subject, query: str) -> list[tuple[backends.SourceTarget, Item]]:
        raise Unsupported(ON_ITS_PAGES)

    def edit_item(
        self, subject: Subject, target: backends.SourceTarget, key: str, old: str, new: str
    ) -> Item:
        raise Unsupported(ON_ITS_PAGES)

    def replace_item(
        self, subject: Subject, target: backends.SourceTarget, key: str, text: str
    ) -> Item:
        raise Unsupported(ON_ITS_PAGES)

    def delete_item(self, subject: Subject, target: backends.SourceTarget, key: str) -> Item:
        raise Unsupported(ON_ITS_PAGES)

    def restore_item(self, subject: Subject, target: backends.SourceTarget, item: Item) -> Item:
        raise Unsupported(ON_ITS_PAGES)
