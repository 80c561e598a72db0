"""Five memories with forty entries each (the shared one and four agents'), chosen by one
filter: the 200-entry case of select and delete many, for tests/integration/test_batch.py
and bench/batch.py. Written and read straight through CoreAPI (no portal) as alice."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from devstack.config import Fixtures
from devstack.coreapi import formats
from memory_ui.sources.coreapi import CallerAuth, agent_object_id
from memory_ui.sources.coreapi.client import CoreAPIClient

ALICE = "alice@contoso.com"
# The three demo agents alice reads, and a fourth she is given here.
AGENTS = ("benefits-assistant", "it-helpdesk", "travel-planner", "finance-insights")
MEMORIES = (None, *AGENTS)  # None: the shared memory
PER_MEMORY = 40
REASON = "Batch import"


def with_four_agents(demo: Fixtures) -> Fixtures:
    """The demo, with alice also reading finance-insights (no demo user may, by default)."""
    agents = tuple(
        dataclasses.replace(a, readers={**a.readers, ALICE: "Reader"})
        if a.name == "finance-insights"
        else a
        for a in demo.agents
    )
    return dataclasses.replace(demo, agents=agents)


@dataclasses.dataclass
class AsAlice:
    """CoreAPI as alice, straight: to write the entries and check what the portal did."""

    client: CoreAPIClient
    auth: CallerAuth
    instance_id: str

    def where(self, agent: str | None) -> tuple[str, str | None]:
        if agent is None:
            return "user", None
        return "agent", agent_object_id(self.instance_id, agent)

    def documents(self) -> dict[str | None, str]:
        """What CoreAPI holds in each of the five memories now."""
        return {
            agent: self.client.get_memory(self.auth, *self.where(agent)).content_markdown
            for agent in MEMORIES
        }

    def add_entries(self) -> None:
        """Forty entries with the reason "Batch import" after what each memory holds,
        written as CoreAPI's own appends would be, in one import per memory."""
        start = datetime(2026, 11, 1, 8, tzinfo=UTC)
        for agent, text in self.documents().items():
            for n in range(PER_MEMORY):
                at = start + timedelta(minutes=n)
                text = formats.append_entry(text, f"- Imported line {n}.", at, REASON)
            scope, object_id = self.where(agent)
            self.client.import_memory(
                self.auth, scope, text, mode="replace", agent_object_id=object_id
            )
