"""A shared target (`SourceTarget.shared`: what agents share with others, shown to the
person but not kept about them alone) on the steps every source that brings only its
adapter shares (`sources.generic.BackendSteps`) and on support's overview
(`listing.targets_counted`): never planned, exported or erased as the person's, named on
the overview without a count and never read for one."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from memory_ui.identity import Actor, CallerAuth, Identity
from memory_ui.memory.overview import SystemCounts
from memory_ui.resurfacing import Deletions
from memory_ui.sources import listing
from memory_ui.sources.generic import BackendSteps
from memory_ui.sources.listing import Counted
from memory_ui.sources.protocol import Source, SourceTarget, Subject
from tests.fake_legacy import STORES, FakeLegacyBackend

pytestmark = pytest.mark.django_db

ALICE = Identity("a11ce", "t", "alice@contoso.com", "Alice", (), "")
ME = Actor(ALICE, CallerAuth(access_token="unused"))
SHARED = SourceTarget("legacy", "workspace-shared", "Shared", shared=True)
TRAVEL = STORES["travel-planner"]


@dataclass
class WithShared(FakeLegacyBackend):
    """The fake legacy stores with one more target holding what agents share with all."""

    reads: list[str] = field(default_factory=list)

    def list_targets(self, subject: Subject) -> list[SourceTarget]:
        return [*super().list_targets(subject), SHARED]

    def read_page(self, subject, target, cursor=None):
        self.reads.append(target.key)
        return super().read_page(subject, target, cursor)


@pytest.fixture
def backend() -> WithShared:
    fake = WithShared()
    fake.put("travel-planner", ALICE.upn, "/memories/seat.md", "Aisle seats")
    fake.files[(SHARED.key, ALICE.upn)] = dict(fake.files[(TRAVEL, ALICE.upn)])
    return fake


def test_the_steps_never_plan_export_or_erase_a_shared_target(backend: WithShared) -> None:
    steps = BackendSteps(lambda actor: backend)

    planned = [row.key for row in steps.plan(ME).outcomes]
    exported = steps.export_all(ME)
    erased = steps.erase_all(ME, {f.target: f.versions for f in exported}).outcomes

    assert SHARED.key not in planned and TRAVEL in planned
    assert [f.target for f in exported] == [TRAVEL]
    assert [(row.key, row.result) for row in erased if row.total] == [(TRAVEL, "erased")]
    assert SHARED.key not in [row.key for row in erased]
    assert backend.files[(SHARED.key, ALICE.upn)]  # what others see is left alone


def test_supports_overview_names_a_shared_target_without_reading_it(backend: WithShared) -> None:
    counted = listing.targets_counted(ME, backend, Deletions(ALICE.upn))

    shared = next(c for c in counted if c.target == SHARED)
    travel = next(c for c in counted if c.target.key == TRAVEL)
    assert (shared.items, shared.came_back, shared.error) == (0, 0, None)
    assert travel.items == 1
    assert SHARED.key not in backend.reads


def test_a_system_holding_only_shared_memories_keeps_nothing_of_the_persons() -> None:
    source = Source(name="legacy", title="Legacy", description="")
    own = SourceTarget("legacy", TRAVEL, "Travel")

    assert not SystemCounts(source, (Counted(SHARED),)).keeps_theirs
    assert SystemCounts(source, (Counted(SHARED), Counted(own, 1))).keeps_theirs
