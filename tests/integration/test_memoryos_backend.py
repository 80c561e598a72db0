"""MemoryBackend over MemoryOS (memory_ui.sources.memoryos) against its emulator (seed 002):
what the seed really gives (retrieve and feedback: SEARCH and PREVIEW; no list, export, edit
or delete), the exact context an agent is given, a correction that reaches the service, and
its failures as the source's errors. The registry entry is checked through settings alone."""

from __future__ import annotations

import pytest

from devstack import memoryos as emulator
from devstack.coreapi.faults import Faults
from devstack.serve import RunningServer
from memory_ui.sources import registry
from memory_ui.sources.memoryos.adapter import (
    NO_ERASURE,
    NO_LIST,
    NOTICES,
    MemoryOsBackend,
    MemoryOsNoPerson,
)
from memory_ui.sources.memoryos.client import MemoryOsClient
from memory_ui.sources.memoryos.errors import (
    MemoryOsNotFound,
    MemoryOsRateLimited,
    MemoryOsRefused,
    MemoryOsUnavailable,
)
from memory_ui.sources.protocol import (
    Capability,
    MemoryBackend,
    PreviewState,
    SourceTarget,
    Subject,
    Unsupported,
    require,
)
from tests.devstack.memoryos_api import KEY, PASSTHROUGH_KEY, Api, ids
from tests.stack import free_port

AGENTS = {"travel-planner": "Travel Planner", "it-helpdesk": "IT Helpdesk"}
ALICE = Subject("alice@contoso.com", "a11ce000-0000-4000-8000-000000000001")
SUPPORT_FOR_ALICE = Subject("alice@contoso.com", "")  # support staff know the UPN only
TRAVEL = SourceTarget("memoryos", "travel-planner", "Travel Planner", agent="travel-planner")


def backend_for(url: str, key: str = KEY, **client: object) -> MemoryOsBackend:
    return MemoryOsBackend(
        MemoryOsClient(url, lambda: key, backoff=0.01, **client), AGENTS, "{oid}"
    )


@pytest.fixture
def backend(fresh_memoryos: RunningServer) -> MemoryOsBackend:
    return backend_for(fresh_memoryos.url)


def test_it_declares_search_and_preview_alone(backend: MemoryOsBackend) -> None:
    assert isinstance(backend, MemoryBackend)
    assert backend.capabilities == Capability.SEARCH | Capability.PREVIEW
    for capability in (Capability.EXPORT, Capability.ERASE_SUBJECT):
        with pytest.raises(Unsupported, match="Not possible: MemoryOS offers no"):
            require(backend, capability)
    with pytest.raises(Unsupported, match="cannot list"):
        require(backend, Capability.LIST)
    travel = TRAVEL
    with pytest.raises(Unsupported, match="no way to delete"):
        backend.delete_item(ALICE, travel, "any")
    with pytest.raises(Unsupported, match="cannot be edited"):
        backend.replace_item(ALICE, travel, "any", "text")


def test_targets_are_the_configured_agents_and_cannot_be_listed(backend: MemoryOsBackend) -> None:
    targets = backend.list_targets(ALICE)

    assert [(t.key, t.title, t.agent) for t in targets] == [
        ("travel-planner", "Travel Planner", "travel-planner"),
        ("it-helpdesk", "IT Helpdesk", "it-helpdesk"),
    ]
    assert targets[0] == TRAVEL
    with pytest.raises(Unsupported, match="cannot list") as no_page:
        backend.read_page(ALICE, targets[0])
    assert str(no_page.value) == NO_LIST
    with pytest.raises(Unsupported, match="cannot list"):
        backend.read_item(ALICE, targets[0], "any")


def test_preview_is_exactly_what_the_agent_is_given(
    backend: MemoryOsBackend, fresh_memoryos: RunningServer
) -> None:
    question = "Which seat does Alice prefer?"

    retrieval = backend.retrieve(ALICE, TRAVEL, question, limit=5)
    preview = backend.preview(ALICE, TRAVEL, question, limit=5)
    served = Api(fresh_memoryos.url).ok(query=question, agent_id="travel-planner", limit=5)

    assert retrieval.context == preview.context == served["system_prompt_addition"]
    assert [m.id for m in retrieval.memories] == [r["id"] for r in served["data"]]
    assert [item.key for item in preview.items] == [r["id"] for r in served["data"]]
    first = retrieval.memories[0]
    assert first.id in ids("aisle-seats")
    assert (first.category, first.importance) == ("preference", 8.5)
    assert first.provenance is not None and first.provenance.service == "travel-booking"
    assert retrieval.clarification is not None  # the seat conflict: shown, never answered
    assert (retrieval.quota_mode, retrieval.degraded, retrieval.passthrough) == (
        "FULL",
        False,
        False,
    )
    assert not (ids("thinkpad") & {m.id for m in retrieval.memories})  # agent filter sent
    told = preview.items[0]
    assert (told.key, told.text, told.category, told.importance) == (
        first.id,
        first.content,
        "preference",
        8.5,
    )
    assert told.origin is not None and told.origin.service == "travel-booking"
    assert told.origin.event == first.provenance.event_id
    assert told.last_used is not None  # the retrieval just before moved it (S6)
    assert preview.clarification == retrieval.clarification.question
    assert (preview.state, preview.notice, preview.limit) == (PreviewState.FULL, "", 5)
    assert preview.reference and preview.target == TRAVEL


def test_a_correction_reaches_the_service_as_user_corrected(
    backend: MemoryOsBackend, fresh_memoryos: RunningServer
) -> None:
    preview = backend.preview(ALICE, TRAVEL, "Which seat does Alice prefer?", 10)
    assert preview.reference
    memory = preview.items[0].key

    receipt = backend.report(ALICE, TRAVEL, preview.reference, memory, "I prefer window seats now.")

    (arrived,) = Api(fresh_memoryos.url).received()
    assert receipt == arrived["correction_job_id"] and receipt
    assert arrived["correction"] == "I prefer window seats now."
    assert arrived["used_memory_ids"] == [memory]
    assert arrived["external_user_id"] == ALICE.oid
    assert arrived["metadata"]["agent_id"] == "travel-planner"


def test_search_asks_each_agent(backend: MemoryOsBackend) -> None:
    found = backend.search(ALICE, "ThinkPad aisle seats")

    agents = {target.key for target, _ in found}
    assert agents == {"travel-planner", "it-helpdesk"}
    texts = {item.text for _, item in found}
    assert "Alice uses a ThinkPad X1 Carbon with Windows 11." in texts


def test_passthrough_says_so(fresh_memoryos: RunningServer) -> None:
    backend = backend_for(fresh_memoryos.url, PASSTHROUGH_KEY)

    retrieval = backend.retrieve(ALICE, TRAVEL, "seats", 10)
    preview = backend.preview(ALICE, TRAVEL, "seats", 10)

    assert (retrieval.passthrough, retrieval.memories, retrieval.retrieval_id) == (True, (), None)
    assert (preview.state, preview.items, preview.reference, preview.context) == (
        PreviewState.PASSTHROUGH,
        (),
        "",
        "",
    )
    assert preview.notice == NOTICES[PreviewState.PASSTHROUGH]


def test_without_graph_support_cannot_name_the_person(backend: MemoryOsBackend, settings) -> None:
    settings.GRAPH_BASE_URL = ""
    with pytest.raises(MemoryOsNoPerson):
        backend.preview(SUPPORT_FOR_ALICE, TRAVEL, "seats", 10)
    # Nor by a template around the object id: "user-" would be nobody's, or anybody's.
    around = MemoryOsBackend(backend._client, AGENTS, "user-{oid}")
    with pytest.raises(MemoryOsNoPerson):
        around.preview(SUPPORT_FOR_ALICE, TRAVEL, "seats", 10)


def test_support_names_the_person_by_the_object_id_graph_gives(
    backend: MemoryOsBackend, fresh_memoryos: RunningServer, settings, idp, portal_identity
) -> None:
    """Support knows the UPN: Microsoft Graph (the devstack IdP's) gives the object id the
    template needs, so support is told what the agent is told about alice, as she is."""
    settings.GRAPH_BASE_URL = idp.url
    store = emulator.emulator(fresh_memoryos).store.db

    for_support = backend.preview(SUPPORT_FOR_ALICE, TRAVEL, "seats", 10)

    assert for_support.context and for_support.context == (
        backend.preview(ALICE, TRAVEL, "seats", 10).context
    )
    users = {row[0] for row in store.rows("SELECT external_user_id FROM retrievals")}
    assert users == {ALICE.oid}


def test_failures_are_the_sources_errors(fresh_memoryos: RunningServer) -> None:
    travel = TRAVEL
    with pytest.raises(MemoryOsRefused) as refused:
        backend_for(fresh_memoryos.url, "mem_live_wrong").preview(ALICE, travel, "seats", 10)
    assert "portal's own access" in refused.value.message
    with pytest.raises(MemoryOsNotFound):
        backend_for(fresh_memoryos.url).report(ALICE, travel, "no-such-retrieval", "m", "text")
    with pytest.raises(MemoryOsUnavailable):
        backend_for(f"http://127.0.0.1:{free_port()}", retries=0).preview(ALICE, travel, "q", 10)


def test_retrievals_are_retried_and_throttling_is_its_own_error(
    fresh_memoryos: RunningServer,
) -> None:
    app = emulator.emulator(fresh_memoryos)
    travel = TRAVEL
    app.faults = Faults(error_rate=1.0, error_status=503)
    with pytest.raises(MemoryOsUnavailable):
        backend_for(fresh_memoryos.url, retries=1).preview(ALICE, travel, "seats", 10)
    app.faults = Faults(throttle_rate=1.0)
    with pytest.raises(MemoryOsRateLimited):
        backend_for(fresh_memoryos.url).preview(ALICE, travel, "seats", 10)
    app.faults = Faults()
    assert backend_for(fresh_memoryos.url).preview(ALICE, travel, "seats", 10).items


@pytest.mark.django_db
def test_registered_through_settings_it_cannot_be_erased_or_exported(
    settings, fresh_memoryos: RunningServer
) -> None:
    settings.MEMORYOS_BASE_URL = fresh_memoryos.url
    settings.PORTAL_MEMORY_SOURCES = [
        "memory_ui.sources.coreapi",
        "memory_ui.sources.memoryos",
        "memory_ui.sources.agent_notes",
    ]

    source = registry.source("memoryos")

    assert source.capabilities == Capability.SEARCH | Capability.PREVIEW
    assert source.missing_reason(Capability.ERASE_SUBJECT) == NO_ERASURE
    assert source.cannot_list == NO_LIST and source.previews
    assert source.backend is not None and source.steps is not None
    settings.MEMORYOS_BASE_URL = ""
    assert [s.name for s in registry.sources()] == ["coreapi", "agent_notes"]
