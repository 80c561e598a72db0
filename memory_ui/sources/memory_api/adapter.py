"""The workspace memory-api as a `MemoryBackend`: a person's memories grouped by agent
(one target per agent), items are memories by id, edit is a supersede (PATCH: the service
keeps the earlier observation, shown as the item's history), a conflict (several active
observations) resolved by the PATCH of the one kept (M8), delete a soft delete (the service
keeps the row: not an erasure), its Undo the memory written again as a new one (M28), clear
the DSAR route (for the memories without an agent, subject-wide, only once no agent's are
held: M30); a deletion request's targets are what the export holds (M29, steps.py). The
workspace's shared memories (`include_shared`) are one more target, read only, which no
export or erasure of the person's covers."""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import replace
from typing import Any

from memory_ui.directory import (
    Directory,
    DirectoryRefused,
    DirectoryUnavailable,
    UnknownPerson,
)
from memory_ui.sources.memory_api.client import MemoryApiClient
from memory_ui.sources.memory_api.config import SubjectRule
from memory_ui.sources.memory_api.errors import (
    MemoryApiNotFound,
    MemoryApiOthersHeld,
    MemoryApiSetupError,
    MemoryApiUnavailable,
    SubjectUnavailable,
)
from memory_ui.sources.protocol import (
    Capability,
    Erasure,
    Item,
    ItemsPage,
    Outcome,
    Preview,
    SourceTarget,
    Subject,
    Unsupported,
    Version,
)

NAME = "memory_api"
TITLE = "Workspace memory"
NO_AGENT = "-"  # the target of memories no agent is named on
SHARED = "shared"  # the target of the workspace's shared memories (not a person's tier)
SHARED_READ_ONLY = (
    "Shared by agents with everyone in the workspace, not kept about you alone: shown here, "
    "not changed, and not in your export or erasure."
)
CORE = (
    "Institutional memory (what the workspace's documents teach its agents) comes with the "
    "memory service's Enterprise edition; this workspace runs Core, so only what agents "
    "share is shown."
)
EDIT_NOTE = (
    "A correction becomes the version agents use; the earlier one stays with the workspace "
    "memory service, marked as replaced (shown under Earlier versions)."
)
DELETE_NOTE = (
    "Deleting hides this memory from agents; the workspace memory service still keeps it "
    "(a soft delete), so it is not erased. A deletion request through support erases it."
)
OTHERS_HELD = (
    "The memory service erases memories without an agent only together with every agent's: "
    "clear each agent's memories first, then these."
)
# Which agents, since one whose memories were all deleted is no longer listed (M30).
STILL_HELD = " It still holds memories of yours from {agents} (deleted ones count: it keeps them)."
RESTORE_NOTE = (
    "it comes back as a new memory (a new id); the deleted one stays with the workspace "
    "memory service, soft-deleted, its earlier versions with it"
)
CAPABILITIES = (
    Capability.LIST
    | Capability.SEARCH
    | Capability.RESOLVE
    | Capability.EDIT_ITEM
    | Capability.DELETE_ITEM
    | Capability.RESTORE_ITEM
    | Capability.CLEAR_TARGET
    | Capability.ERASE_SUBJECT
    | Capability.EXPORT
)
MISSING = {
    Capability.APPEND: "Agents write workspace memory; the portal does not add to it.",
    Capability.IMPORT: "The workspace memory cannot import a document.",
    Capability.CONDITIONAL_WRITE: (
        "The workspace memory has no version check; the portal reads and compares first."
    ),
    Capability.PREVIEW: "The workspace memory does not say what an agent is given for a question.",
}


def _target(agent: str | None) -> SourceTarget:
    key = agent or NO_AGENT
    title = f"What {agent} remembers" if agent else "Remembered without an agent"
    return SourceTarget(NAME, key, title, "Kept by the workspace's memory service.", agent)


SHARED_TARGET = SourceTarget(
    NAME,
    SHARED,
    "Shared across the workspace",
    "What agents share with everyone in the workspace.",
    read_only=SHARED_READ_ONLY,
    shared=True,
)


def _mine(memory: dict[str, Any]) -> bool:
    return memory["tier"] == "user"


def _when(value: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def item_of(memory: dict[str, Any]) -> Item:
    """A memory as an item: its newest active observation as the text; its version is the
    active observations' ids, which a supersede changes."""
    active = [o for o in memory["observations"] if o["status"] == "active"]
    held = f"; {len(active)} versions held" if len(active) > 1 else ""
    version = hashlib.sha256(",".join(o["id"] for o in active).encode()).hexdigest()
    return Item(
        key=memory["id"],
        description=f"{memory['type']}{': ' + memory['about'] if memory['about'] else ''}{held}",
        updated=_when(memory["updated_at"]),
        text=memory["content"],
        version=version,
        has_text=bool(memory["content"]),
        # A listed memory carries its active observations only; a read, every one (M4).
        history=tuple(_version(o) for o in memory["observations"] if o["status"] == "superseded"),
        held=tuple(_version(o) for o in active) if len(active) > 1 else (),
    )


def _version(observation: dict[str, Any]) -> Version:
    return Version(
        observation["content"],
        _when(observation["created_at"]),
        _when(observation.get("superseded_at")),
    )


def _object_id(directory: Directory, upn: str) -> str:
    """The person's object id, the directory's failures as the memory-api's own: Graph
    refusing the portal is its set-up (operators are told), never the person's fault."""
    try:
        return directory.object_id(upn)
    except UnknownPerson as exc:
        raise SubjectUnavailable(exc.message, status=exc.status) from exc
    except DirectoryRefused as exc:  # only support acts by UPN: said to them, not the person
        raise MemoryApiSetupError(
            exc.operator_detail, status=exc.status, logged=True, message=exc.message
        ) from exc
    except DirectoryUnavailable as exc:
        raise MemoryApiUnavailable(exc.message, status=exc.status) from exc


class MemoryApiBackend:
    source = NAME
    capabilities = CAPABILITIES

    def __init__(
        self, client: MemoryApiClient, rule: SubjectRule, directory: Directory | None = None
    ) -> None:
        self.client = client
        self.rule = rule
        self.directory = directory
        self._enterprise: bool | None = None  # asked once: an edition does not change

    def _shared(self, user: str) -> SourceTarget:
        """The shared target; on Core it says in one sentence what Enterprise would add,
        rather than showing a refusal."""
        if self._enterprise is None:
            self._enterprise = self.client.enterprise(user)
        return SHARED_TARGET if self._enterprise else replace(SHARED_TARGET, description=CORE)

    def missing_reason(self, capability: Capability) -> str:
        return MISSING.get(capability, f"This is not possible in {TITLE}.")

    def user(self, subject: Subject) -> str:
        """The subject's virtual_user_id; support acting by UPN gets the object id the rule
        needs from the directory."""
        if self.rule.needs_oid and not subject.oid and self.directory is not None:
            subject = Subject(subject.upn, _object_id(self.directory, subject.upn))
        return self.rule.virtual_user_id(subject)

    def list_targets(self, subject: Subject) -> list[SourceTarget]:
        """The person's agents, then the shared target where the workspace shares any."""
        user = self.user(subject)
        found = self.client.all_memories(user, shared=True)
        agents = {m["agent"] for m in found if _mine(m)}
        shared = [self._shared(user)] if any(not _mine(m) for m in found) else []
        return [_target(a) for a in sorted(agents, key=lambda a: a or "")] + shared

    def find_target(self, subject: Subject, key: str) -> SourceTarget:
        """The target a page names, without a call: every read is scoped to the subject's
        own virtual_user_id (and the shared rows to the workspace), so a key from a URL can
        only narrow what the person may see by agent, never reach anyone else's; an agent
        with nothing of theirs is an empty page. Saves the page a listing call."""
        if key == SHARED:
            return self._shared(self.user(subject))
        return _target(None if key == NO_AGENT else key)

    def read_page(
        self, subject: Subject, target: SourceTarget, cursor: str | None = None
    ) -> ItemsPage:
        if target.key == SHARED:
            found, next_cursor = self.client.memories(self.user(subject), None, cursor, shared=True)
            rows = [m for m in found if not _mine(m)]
            return ItemsPage(target, tuple(item_of(m) for m in rows), next_cursor)
        found, next_cursor = self.client.memories(self.user(subject), target.agent, cursor)
        mine = [m for m in found if m["agent"] == target.agent]
        return ItemsPage(target, tuple(item_of(m) for m in mine), next_cursor)

    def read_item(self, subject: Subject, target: SourceTarget, key: str) -> Item:
        if target.key == SHARED:
            # A shared row is no one's: read from the list that shows it, not by a user.
            for memory in self.client.all_memories(self.user(subject), shared=True):
                if memory["id"] == key and not _mine(memory):
                    return item_of(memory)
            raise MemoryApiNotFound("That memory is no longer there.", status=404)
        return item_of(self._memory(subject, target, key))

    def _memory(self, subject: Subject, target: SourceTarget, key: str) -> dict[str, Any]:
        memory = self.client.memory(key, self.user(subject))
        if memory["agent"] != target.agent:
            raise MemoryApiNotFound("That memory is not in this agent's memory.", status=404)
        return memory

    def search(self, subject: Subject, query: str) -> list[tuple[SourceTarget, Item]]:
        return [
            (_target(m["agent"]), item_of(m)) for m in self.client.search(self.user(subject), query)
        ]

    def append(self, subject: Subject, target: SourceTarget, text: str, reason: str) -> Item:
        raise Unsupported(MISSING[Capability.APPEND])

    def edit_item(
        self, subject: Subject, target: SourceTarget, key: str, old: str, new: str
    ) -> Item:
        text = self.read_item(subject, target, key).text or ""
        return self.replace_item(subject, target, key, text.replace(old, new, 1))

    def replace_item(self, subject: Subject, target: SourceTarget, key: str, text: str) -> Item:
        self._memory(subject, target, key)
        return item_of(self.client.supersede(key, self.user(subject), text))

    def delete_item(self, subject: Subject, target: SourceTarget, key: str) -> Item:
        before = self.read_item(subject, target, key)
        self.client.soft_delete(key, self.user(subject))
        return before

    def restore_item(self, subject: Subject, target: SourceTarget, item: Item) -> Item:
        """A deleted memory back: the service has no undelete, so it is written again
        (`POST /memories`) with the deleted one's type and about, which the export still
        holds (M16); a new memory, with a new id, while the deleted one stays soft-deleted
        (M28)."""
        user = self.user(subject)
        # Without an agent the export is the whole subject's; M7 matches the same agent only.
        exported = self.client.export(user, target.agent)["memories"]
        kept = [m for m in exported if m["agent"] == target.agent]
        deleted = next((m for m in kept if m["id"] == item.key and m["deleted_at"]), None)
        kind = {"memory_type": deleted["type"], "about": deleted["about"]} if deleted else {}
        live = {m["about"] for m in kept if not m["deleted_at"] and m.get("about")}
        if kind.get("about") in live:
            # The same `about` would add it to that live memory as one more version (M7):
            # written without it, it is a memory of its own, as the person was told.
            del kind["about"]
        return item_of(self.client.create(user, target.agent, item.text or "", **kind))

    def preview(self, subject: Subject, target: SourceTarget, question: str, limit: int) -> Preview:
        raise Unsupported(MISSING[Capability.PREVIEW])

    def report(
        self, subject: Subject, target: SourceTarget, reference: str, key: str, correction: str
    ) -> str:
        raise Unsupported(MISSING[Capability.PREVIEW])

    def clear_target(self, subject: Subject, target: SourceTarget) -> list[Outcome]:
        """Erases the agent's memories of the person (DSAR route, soft-deleted ones too).
        The route cannot name "no agent": for the memories without one it erases every
        agent's, so that target is cleared only once no other agent's are held (M30)."""
        user = self.user(subject)
        held = self.client.export(user, target.agent)["memories"]
        if others := sorted({m["agent"] for m in held if m["agent"] != target.agent}):
            raise MemoryApiOthersHeld(OTHERS_HELD + STILL_HELD.format(agents=", ".join(others)))
        self.client.erase(user, target.agent)
        left = {m["id"] for m in self.client.export(user, target.agent)["memories"]}
        keys = sorted(m["id"] for m in held)
        return [Outcome(target, key, "failed" if key in left else "erased") for key in keys]

    def erase_subject(self, subject: Subject) -> Erasure:
        """Everything the service keeps about the person, soft-deleted memories too (M29):
        each agent's, then those without an agent once no agent's are held (M30). A
        deletion request goes through `steps` instead, which erases only what it exported."""
        rows: list[Outcome] = []
        for target, _items in self.held_targets(subject):
            try:
                rows += self.clear_target(subject, target)
            except MemoryApiOthersHeld as exc:
                rows.append(Outcome(target, target.key, "not possible", exc.message))
        return Erasure(tuple(rows))

    def held_targets(self, subject: Subject) -> list[tuple[SourceTarget, tuple[Item, ...]]]:
        """What the service keeps about the person, per target, for a deletion request (M29):
        the subject-wide export holds soft-deleted rows (M16), so an agent whose every memory
        the person deleted is still found, which the listing (live rows) misses. Shared
        rows are not in it (the export is the person's tier only). The agents come first
        and the memories without an agent last: erasing those is subject-wide (M30)."""
        held = self.client.export(self.user(subject))["memories"]
        agents: list[str | None] = sorted({m["agent"] for m in held if m["agent"]})
        if any(m["agent"] is None for m in held):
            agents.append(None)
        return [
            (_target(agent), tuple(item_of(m) for m in held if m["agent"] == agent))
            for agent in agents
        ]

    def export(self, subject: Subject, target: SourceTarget) -> str:
        """The agent's memories of the person as markdown: every observation the service
        keeps, superseded and soft-deleted ones included, since they are still held."""
        if target.key == SHARED:
            exported = list(self.client.all_memories(self.user(subject), shared=True))
            exported = [m for m in exported if not _mine(m)]
        else:
            # Without an agent the export covers every agent's memories: only the target's.
            kept = self.client.export(self.user(subject), target.agent)["memories"]
            exported = [m for m in kept if m["agent"] == target.agent]
        lines = [f"# {target.title}", ""]
        for memory in exported:
            lines.append(f"## {memory['type']}: {memory['about'] or memory['id']}")
            if memory["deleted_at"]:
                lines.append(f"Deleted {memory['deleted_at']} (still held by the service).")
            for observation in memory["observations"]:
                lines.append(
                    f"- ({observation['status']}, {observation['created_at']}) "
                    f"{observation['content']}"
                )
            lines.append("")
        return "\n".join(lines)
