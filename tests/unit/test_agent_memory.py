"""The memory pages reach the primary source only as an `AgentMemoryStore`
(`registry.memory_store()`): CoreAPI's store offers each of its steps with the same
parameters, so a page cannot call a step the protocol does not name."""

from __future__ import annotations

import inspect

import pytest
from django.core.exceptions import ImproperlyConfigured

from memory_ui.sources.agent_memory import AgentMemoryStore
from memory_ui.sources.coreapi.store import CoreAPIMemories
from memory_ui.sources.registry import memory_store

STEPS = [
    name
    for name, member in inspect.getmembers(AgentMemoryStore, inspect.isfunction)
    if not name.startswith("_")
]


def test_the_registry_hands_out_the_primary_sources_store():
    assert isinstance(memory_store(), CoreAPIMemories)


@pytest.mark.parametrize("step", STEPS)
def test_coreapis_store_offers_each_step_with_its_parameters(step):
    wanted = inspect.signature(getattr(AgentMemoryStore, step)).parameters
    offered = inspect.signature(getattr(CoreAPIMemories, step)).parameters
    assert list(offered) == [name for name in wanted if name != "self"]


def test_the_store_offers_nothing_the_protocol_does_not_name():
    public = {name for name in vars(CoreAPIMemories) if not name.startswith("_")}
    assert public == set(STEPS)


def test_without_a_primary_store_the_portal_says_so(settings):
    settings.PORTAL_MEMORY_SOURCES = ["memory_ui.sources.agent_notes"]
    with pytest.raises(ImproperlyConfigured, match="no primary source keeps agent memory"):
        memory_store()
