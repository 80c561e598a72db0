"""Agent memory: what a person's agents remember about them as markdown documents, one
shared with every agent (`user` scope) and one per agent (`agent`), plus what an agent reads
of both (`combined`). The portal's own memory pages (the dashboard's cards, a memory's page,
its entries, edits, deletes, moves, batches, search, imports, the archive, support's look-up)
are written against this module and `AgentMemoryStore`, never against a source's package: the
registry hands them the store of the primary source (`registry.memory_store()`), which for
FoundationaLLM is CoreAPI (`memory_ui/sources/coreapi/store.py`).

A `Target` names one memory everywhere: the user's shared memory, one agent's own, or
what an agent reads. Everything that names a memory to people, forms, files or URLs asks
its Target: `key` (form values), `label` (lists and headings), `name` (inside sentences),
`title` (its page), `empty_message` (its page while empty), `file_name` (archives),
`download_stem` (downloads) and `route` (for `memory_ui.web.urls.target_url`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Protocol

from memory_ui.documents import Document, count_entries
from memory_ui.documents.arrivals import Arrived
from memory_ui.documents.paging import Prepared, prepared
from memory_ui.documents.versions import Version
from memory_ui.identity import Actor, Identity
from memory_ui.sources.protocol import SourceError

AGENT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")  # an agent's name, as FoundationaLLM rules it


@dataclass(frozen=True)
class Memory:
    """One memory document as the store read it. `content_markdown` is untrusted: agents
    write it from prompts."""

    scope: str
    upn: str
    user_name: str | None = None
    name: str | None = None
    agent_object_id: str | None = None
    agent_name: str | None = None
    content_markdown: str = ""
    created_on: datetime | None = None
    updated_on: datetime | None = None
    # The document's version for a conditional write (If-Match), when the store offers one
    # (docs/conditional-writes.md); None when it does not.
    etag: str | None = None

    @property
    def has_content(self) -> bool:
        """Anything but whitespace: for templates, which would otherwise call .strip, a copy
        of the whole document (up to megabytes) each time they ask."""
        text = self.content_markdown
        return bool(text) and not text.isspace()


@dataclass(frozen=True)
class Agent:
    """An agent the caller may use, as the store lists them."""

    name: str
    object_id: str
    display_name: str
    description: str = ""
    roles: tuple[str, ...] = ()
    enabled: bool = True


SCOPES = ("user", "agent", "combined")
# The user-scope memory's one name in lists, headings, Activity and the audit trail ("Your
# memory" is the dashboard, which holds all of them).
USER_MEMORY_LABEL = "Shared with every agent"
WRITABLE_SCOPES = ("user", "agent")


@dataclass(frozen=True)
class Target:
    scope: str
    agent: Agent | None = None

    def __post_init__(self) -> None:
        if self.scope not in SCOPES or (self.scope == "user") != (self.agent is None):
            raise ValueError("scope 'user' has no agent; 'agent' and 'combined' need one")

    @property
    def writable(self) -> bool:
        """Stored as one document (combined is a view of two)."""
        return self.scope in WRITABLE_SCOPES

    @property
    def agent_name(self) -> str:
        return self.agent.name if self.agent else ""

    @property
    def agent_object_id(self) -> str | None:
        return self.agent.object_id if self.agent else None

    @property
    def key(self) -> str:
        return target_key(self.scope, self.agent_name)

    @property
    def label(self) -> str:
        if self.agent is None:
            return USER_MEMORY_LABEL
        if self.scope == "combined":
            return f"What {self.agent.display_name} sees"
        return self.agent.display_name

    @property
    def name(self) -> str:
        return memory_name(self.scope, self.agent.display_name if self.agent else "")

    @property
    def title(self) -> str:
        if self.agent is None:
            return "What all agents remember about you"
        if self.scope == "combined":
            return f"What {self.agent.display_name} sees: your memory and its own"
        return f"What {self.agent.display_name} remembers"

    @property
    def empty_message(self) -> str:
        """What its page says while nothing is remembered in it."""
        if self.agent is None:
            return "No agent remembers anything about you yet."
        if self.scope == "combined":
            return "This agent sees nothing about you yet."
        return "This agent remembers nothing about you yet."

    @property
    def file_name(self) -> str:
        return f"{self.scope}-{self.agent_name}.md" if self.agent else "user.md"

    @property
    def download_stem(self) -> str:
        return f"memory-{self.scope}-{self.agent_name}" if self.agent else "memory-user"

    def route(self, page: str = "memory") -> tuple[str, tuple[str, ...]]:
        """The URL name and arguments of this memory's `page` (memory, card, export,
        import, import_preview, import_confirm): every such route is `<page>_<scope>`."""
        return f"{page}_{self.scope}", (self.agent_name,) if self.agent else ()


def target_key(scope: str, agent_name: str = "") -> str:
    """How a form names a memory: "user", "agent:<name>" or "combined:<name>"."""
    return f"{scope}:{agent_name}" if scope != "user" else "user"


def memory_name(scope: str, agent_label: str) -> str:
    """A memory named inside a sentence: "your shared memory", "Travel Planner's memory"."""
    if scope == "user":
        return "your shared memory"
    if scope == "combined":
        return f"what {agent_label} sees"
    return f"{agent_label}'s memory"


def valid_agent_name(name: str) -> bool:
    return bool(AGENT_NAME.fullmatch(name))


def all_targets(agents: list[Agent]) -> list[Target]:
    """Every stored document of a user: their shared memory and each agent's."""
    return [Target("user"), *(Target("agent", agent) for agent in agents)]


@dataclass(frozen=True)
class Loaded:
    """One memory as a step left it: the document, or the error the store gave."""

    target: Target
    memory: Memory | None = None
    error: SourceError | None = None

    @property
    def key(self) -> str:
        return self.target.key

    @cached_property
    def prepared(self) -> Prepared | None:
        """The document parsed (once per version in this process: see `paging`)."""
        if self.memory is None:
            return None
        return prepared(self.memory.content_markdown, Version.of(self.memory).sha256)

    @property
    def document(self) -> Document | None:
        return self.prepared.document if self.prepared else None

    @cached_property
    def entry_count(self) -> int:
        """Counted without parsing the document into entries (dashboard cards)."""
        return count_entries(self.memory.content_markdown) if self.memory else 0

    @cached_property
    def size_bytes(self) -> int:
        return len(self.memory.content_markdown.encode()) if self.memory else 0

    @cached_property
    def rewritable(self) -> bool:
        """Whether the store would take this document back in one write (an edit, a delete,
        an undo); agents' appends can grow it past that."""
        if self.memory is None:
            return False
        from memory_ui.sources.registry import memory_store  # the registry imports this module

        return memory_store().fits_one_write(
            self.memory.content_markdown, lambda: self.prepared.json_chars
        )


class MemoryChanged(Exception):
    """The document changed since the user's version; `current` is what is stored now."""

    def __init__(self, current: Memory) -> None:
        super().__init__("The memory changed since you started.")
        self.current = current


class NothingToChange(Exception):
    """A rewrite found nothing to do (the entry it would remove is not there)."""

    def __init__(self, current: Memory) -> None:
        super().__init__("Nothing to change.")
        self.current = current


class AlreadyAdded(Exception):
    """A re-sent addition whose earlier attempt got no answer had landed after all, so
    nothing was sent again; `current` is what is stored now."""

    def __init__(self, current: Memory) -> None:
        super().__init__("It was already added.")
        self.current = current


@dataclass(frozen=True)
class Rewritten:
    before: Memory
    after: Memory
    moved: bool = False  # something else changed it right after (see `rewrite`)
    arrived: Arrived | None = None  # entries appended meanwhile, kept (see `rewrite`)


class AgentMemoryStore(Protocol):
    """What the portal's memory pages ask of the primary source. Every read of content for
    someone and every change is audited by the store, failed or not; a change that would
    overwrite what changed since `started_from` raises `MemoryChanged`."""

    def agents(self, actor: Actor) -> list[Agent]: ...

    def read(self, actor: Actor, target: Target) -> Memory: ...

    def load(self, actor: Actor, target: Target) -> Loaded: ...

    def load_many(self, actor: Actor, targets: list[Target]) -> list[Loaded]: ...

    def reveal(self, actor: Actor, key: str) -> Loaded | None: ...

    def lookup(self, actor: Actor) -> list[Target]: ...

    def credentials_failed(
        self, who: Identity, action: str, subject_upn: str, message: str, **fields: str
    ) -> None: ...

    def append(
        self,
        actor: Actor,
        target: Target,
        text: str,
        reason: str | None = None,
        *,
        earlier: datetime | None = None,
    ) -> Memory: ...

    def import_append(
        self, actor: Actor, target: Target, text: str, *, earlier: datetime | None = None
    ) -> Memory: ...

    def rewrite(
        self,
        actor: Actor,
        target: Target,
        transform: Callable[[Memory], str | None],
        *,
        started_from: Version | None,
        action: str = ...,
        keep_arrivals: bool = False,
        count: int | None = None,
    ) -> Rewritten: ...

    def replace(
        self,
        actor: Actor,
        target: Target,
        text: str,
        *,
        started_from: Version | None,
        action: str = ...,
        keep_arrivals: bool = False,
    ) -> Memory: ...

    def clear(
        self, actor: Actor, target: Target, started_from: Version | None = None
    ) -> Memory: ...

    def clear_many(self, actor: Actor, targets: list[Target]) -> list[Loaded]: ...

    def export(self, actor: Actor, target: Target) -> str: ...

    def export_many(self, actor: Actor, targets: list[Target]) -> list[str]: ...

    def one_event(self) -> AbstractContextManager[None]:
        """The writes made inside record no audit event of their own: their caller records
        one for all (moving an entry is a delete and an add)."""
        ...

    def fits_one_write(self, text: str, json_chars: Callable[[], int] | None = None) -> bool:
        """Whether a replace with `text` fits the store's request limit."""
        ...
