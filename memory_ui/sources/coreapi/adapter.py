"""CoreAPI as a `MemoryBackend`: the protocol over `operations` and `exports`, with every
capability CoreAPI has (`CAPABILITIES`, which the registry's `Source` declares too), so
generic code can list, search, read, append to, edit, delete, restore, clear, erase and
export CoreAPI memory as it does any source's.

CoreAPI's own pages use the richer agent-memory store (`store.py`): entry headings, the
markdown round trip, what an agent sees. CoreAPI needs credentials, so a backend is made
for one `Actor` (who acts, for whom) and serves only that actor's subject. Every change
goes through `operations`, which audits it (source `coreapi`); an entry's change is a
conditional rewrite of its document there, so what agents appended meanwhile is kept. A
target is one stored document (the shared memory, or an agent's own); its items are the
document's entries (key: the entry's index), or one item holding the whole text when the
document has no entries.
"""

from __future__ import annotations

import datetime as dt
from functools import cached_property

from memory_ui.audit import Action
from memory_ui.documents import parse_document, remove_entry, replace_entry
from memory_ui.sources import protocol as backends
from memory_ui.sources.agent_memory import Target, all_targets
from memory_ui.sources.coreapi import CoreAPIConflict, CoreAPIError, Memory
from memory_ui.sources.coreapi.exports import memory_export
from memory_ui.sources.coreapi.operations import (
    Actor,
    agents_list,
    memory_append,
    memory_clear,
    memory_read,
    memory_rewrite,
)
from memory_ui.sources.protocol import (
    Capability,
    Erasure,
    Item,
    ItemsPage,
    Outcome,
    Preview,
    Subject,
    Unsupported,
)

SOURCE = "coreapi"
CAPABILITIES = (
    Capability.LIST
    | Capability.SEARCH
    | Capability.APPEND
    | Capability.EDIT_ITEM
    | Capability.DELETE_ITEM
    | Capability.RESTORE_ITEM
    | Capability.CLEAR_TARGET
    | Capability.ERASE_SUBJECT
    | Capability.EXPORT
    | Capability.IMPORT
    | Capability.CONDITIONAL_WRITE
)


def _item(index: int, text: str, description: str = "", updated: dt.datetime | None = None) -> Item:
    return Item(key=str(index), description=description, updated=updated, text=text)


class CoreAPIBackend:
    source = SOURCE
    capabilities = CAPABILITIES

    def __init__(self, actor: Actor) -> None:
        self._actor = actor

    def missing_reason(self, capability: Capability) -> str:
        return "CoreAPI does not offer this."  # its memory pages show what an agent sees

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

    def preview(
        self, subject: Subject, target: backends.SourceTarget, question: str, limit: int
    ) -> Preview:
        raise Unsupported(self.missing_reason(Capability.PREVIEW))

    def report(
        self,
        subject: Subject,
        target: backends.SourceTarget,
        reference: str,
        key: str,
        correction: str,
    ) -> str:
        raise Unsupported(self.missing_reason(Capability.PREVIEW))

    def search(self, subject: Subject, query: str) -> list[tuple[backends.SourceTarget, Item]]:
        """Entries whose text or reason holds `query`, ignoring case, in every document."""
        self._check(subject)
        wanted = query.casefold()
        return [
            (target, item)
            for target in self.list_targets(subject)
            for item in self.read_page(subject, target).items
            if wanted in (item.text or "").casefold() or wanted in item.description.casefold()
        ]

    def edit_item(
        self, subject: Subject, target: backends.SourceTarget, key: str, old: str, new: str
    ) -> Item:
        """`new` for the entry, unless it no longer reads `old` (then CoreAPIConflict)."""
        if (self.read_item(subject, target, key).text or "").strip() != old.strip():
            raise CoreAPIConflict("This entry changed since you started.", status=409)
        return self.replace_item(subject, target, key, new)

    def replace_item(
        self, subject: Subject, target: backends.SourceTarget, key: str, text: str
    ) -> Item:
        self._check(subject)
        index = int(key)

        def transform(memory: Memory) -> str | None:
            entries = parse_document(memory.content_markdown).entries
            if not entries:  # the whole text is the one item
                return text
            if index >= len(entries):
                raise KeyError(key)
            return replace_entry(memory.content_markdown, index, text, entries[index].reason or "")

        done = memory_rewrite(self._actor, self._stored(target), transform, started_from=None)
        return self._item_of(done.after, index)

    def delete_item(self, subject: Subject, target: backends.SourceTarget, key: str) -> Item:
        """The entry taken out of its document (what agents appended meanwhile stays)."""
        deleted = self.read_item(subject, target, key)
        index = int(key)

        def transform(memory: Memory) -> str | None:
            if not parse_document(memory.content_markdown).entries:
                return ""
            return remove_entry(memory.content_markdown, index)

        memory_rewrite(
            self._actor,
            self._stored(target),
            transform,
            started_from=None,
            action=Action.DELETE_ENTRY,
        )
        return deleted

    def restore_item(self, subject: Subject, target: backends.SourceTarget, item: Item) -> Item:
        """A deleted entry added back, as a new entry with its reason."""
        return self.append(subject, target, item.text or "", item.description)

    def _item_of(self, memory: Memory, index: int) -> Item:
        entries = parse_document(memory.content_markdown).entries
        if not entries:
            return _item(0, memory.content_markdown, updated=memory.updated_on)
        entry = entries[index]
        return _item(entry.index, entry.body, entry.reason or "", entry.timestamp)
