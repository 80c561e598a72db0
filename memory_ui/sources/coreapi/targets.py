"""Which memory: the one vocabulary for naming a memory document across the portal.

A `Target` is the user's shared memory (`user`), one agent's own memory (`agent`), or
what an agent reads, both joined (`combined`, read-only). Everything that names a memory
to people, forms, files or URLs asks its Target: `key` (form values), `label` (lists and
headings), `name` (inside sentences), `title` (its page), `empty_message` (its page while
empty), `file_name` (archives), `download_stem` (downloads) and `route` (for
`memory_ui.web.urls.target_url`).
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_ui.sources.coreapi import AGENT_NAME, Agent

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
