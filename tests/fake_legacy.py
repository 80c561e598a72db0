"""An in-memory `MemoryBackend` standing in for the legacy stores in view tests, with the
capabilities a test chooses: the devstack's emulator declares every capability the real
source has, so a source that lacks one (the UI hides the action and says why) can only be
produced here. It keeps files per (store, subject) like the stores keep them per scope;
the real adapter is covered against the emulator in tests/integration."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from memory_ui.sources.legacy import LegacyConflict, LegacyNotFound
from memory_ui.sources.legacy.adapter import CAPABILITIES
from memory_ui.sources.protocol import (
    Capability,
    Erasure,
    Item,
    ItemsPage,
    Outcome,
    SourceTarget,
    Subject,
)

STORES = {
    "travel-planner": "main.agents.travel_planner_memory",
    "it-helpdesk": "main.agents.it_helpdesk_memory",
}
NOW = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.UTC)
NOTES = "/memories/notes.md"  # where an append goes


def missing_sentence(capability: Capability) -> str:
    """A sentence unique to each capability, so a test can tell which one is shown."""
    return f"This test source does not allow {capability.name}."


@dataclass
class FakeLegacyBackend:
    capabilities: Capability = CAPABILITIES
    source: str = "legacy"
    page_size: int = 100
    # (store key, upn) -> path -> item
    files: dict[tuple[str, str], dict[str, Item]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    # Stores where the portal lacks WRITE MEMORY STORE. Not recorded in `calls`: the real
    # adapter keeps a store's privileges a minute, so they cost a page no call.
    read_only: set[str] = field(default_factory=set)
    # Stores known but not configured (LEGACY_STORES_KNOWN): store -> whom to ask.
    unreachable: dict[str, str] = field(default_factory=dict)

    def put(
        self,
        store: str,
        upn: str,
        path: str,
        text: str,
        description: str = "",
        updated: dt.datetime = NOW,
    ) -> None:
        item = Item(path, description, updated, text)
        self.files.setdefault((STORES[store], upn), {})[path] = item

    def _files(self, subject: Subject, target: SourceTarget) -> dict[str, Item]:
        return self.files.setdefault((target.key, subject.upn), {})

    def missing_reason(self, capability: Capability) -> str:
        return missing_sentence(capability)

    def configured_targets(self) -> list[SourceTarget]:
        return [SourceTarget("legacy", key, key, "", agent) for agent, key in STORES.items()]

    def list_targets(self, subject: Subject) -> list[SourceTarget]:
        self.calls.append("list_targets")
        return self.configured_targets()

    def describe(self, target: SourceTarget) -> SourceTarget | None:
        self.calls.append("describe")
        return target

    def writable(self, target: SourceTarget) -> bool:
        return target.key not in self.read_only

    def refused_write(self, target: SourceTarget) -> None:
        self.read_only.add(target.key)

    def read_page(
        self, subject: Subject, target: SourceTarget, cursor: str | None = None
    ) -> ItemsPage:
        self.calls.append("read_page")
        paths = sorted(self._files(subject, target))
        start = int(cursor or 0)
        chosen = paths[start : start + self.page_size]
        items = tuple(replace(self._files(subject, target)[p], text=None) for p in chosen)
        more = start + self.page_size < len(paths)
        return ItemsPage(target, items, str(start + self.page_size) if more else None)

    def read_item(self, subject: Subject, target: SourceTarget, key: str) -> Item:
        self.calls.append("read_item")
        try:
            return self._files(subject, target)[key]
        except KeyError:
            raise LegacyNotFound() from None

    def replace_item(self, subject: Subject, target: SourceTarget, key: str, text: str) -> Item:
        item = replace(self.read_item(subject, target, key), text=text, updated=NOW)
        self._files(subject, target)[key] = item
        return item

    def edit_item(
        self, subject: Subject, target: SourceTarget, key: str, old: str, new: str
    ) -> Item:
        text = self.read_item(subject, target, key).text or ""
        return self.replace_item(subject, target, key, text.replace(old, new, 1))

    def delete_item(self, subject: Subject, target: SourceTarget, key: str) -> Item:
        before = self.read_item(subject, target, key)
        del self._files(subject, target)[key]
        return before

    def append(self, subject: Subject, target: SourceTarget, text: str, reason: str) -> Item:
        """As the stores do: to the target's notes file, created on first use."""
        files = self._files(subject, target)
        notes = files.get(NOTES)
        joined = f"{notes.text.rstrip()}\n\n{text}" if notes and notes.text else text
        files[NOTES] = Item(NOTES, "", NOW, joined)
        return files[NOTES]

    def restore_item(self, subject: Subject, target: SourceTarget, item: Item) -> Item:
        files = self._files(subject, target)
        if item.key in files:
            raise LegacyConflict()
        files[item.key] = replace(item, updated=NOW)
        return files[item.key]

    def clear_target(
        self,
        subject: Subject,
        target: SourceTarget,
        unchanged: Callable[[SourceTarget, Item], bool] | None = None,
    ) -> list[Outcome]:
        files = self._files(subject, target)
        rows = []
        for key in sorted(files):
            if unchanged is not None and not unchanged(target, files[key]):
                rows.append(Outcome(target, key, "changed", "Changed since the export; kept."))
                continue
            del files[key]
            rows.append(Outcome(target, key, "erased"))
        return rows

    def plan_erasure(self, subject: Subject) -> Erasure:
        """As the adapter answers: a row per store with the subject's files counted, one
        per store known but not reachable, then one for conversations."""
        self.calls.append("plan_erasure")
        rows = []
        for target in self.configured_targets():
            count = len(self._files(subject, target))
            if target.key in self.read_only:
                rows.append(Outcome(target, target.key, "not possible", "Read only.", total=count))
            else:
                rows.append(Outcome(target, target.key, "to erase", total=count))
        return Erasure((*rows, *self._unreachable()))

    def erase_subject(
        self, subject: Subject, unchanged: Callable[[SourceTarget, Item], bool] | None = None
    ) -> Erasure:
        """As the adapter answers: a row per store (a read-only one not asked to delete),
        one per store known but not reachable, then one for conversations."""
        rows = []
        for target in self.configured_targets():
            if target.key in self.read_only:
                count = len(self._files(subject, target))
                rows.append(Outcome(target, target.key, "not possible", "Read only.", 0, count))
                continue
            done = self.clear_target(subject, target, unchanged)
            erased = sum(row.result == "erased" for row in done)
            result = "erased" if erased == len(done) else "partly" if erased else "changed"
            rows.append(Outcome(target, target.key, result, "Files.", erased, len(done)))
        return Erasure((*rows, *self._unreachable()))

    def _unreachable(self) -> list[Outcome]:
        rows = [
            Outcome(
                SourceTarget("legacy", key, key), key, "not possible", f"No access; ask {owner}."
            )
            for key, owner in self.unreachable.items()
        ]
        return [*rows, Outcome(None, "conversations", "not possible", "Cannot be listed.")]

    def export_items(self, subject: Subject, target: SourceTarget) -> list[Item]:
        files = self._files(subject, target)
        return [files[key] for key in sorted(files)]

    def export(self, subject: Subject, target: SourceTarget) -> str:
        files = self._files(subject, target)
        return f"# {target.title}\n" + "".join(
            f"\n## {k}\n\n{files[k].text}\n" for k in sorted(files)
        )

    def search(self, subject: Subject, query: str) -> list[tuple[SourceTarget, Item]]:
        found = []
        for target in self.configured_targets():
            for item in self._files(subject, target).values():
                if query.casefold() in (item.text or "").casefold():
                    found.append((target, item))
        return found
