"""CoreAPI behind the MemoryBackend protocol (memory_ui.sources.coreapi.adapter) against the
CoreAPI emulator with alice's real delegated token; changes audited by operations."""

from __future__ import annotations

import pytest

from devstack.serve import RunningServer
from memory_ui.identity import Identity
from memory_ui.models import AuditEvent
from memory_ui.sources.coreapi import CallerAuth
from memory_ui.sources.coreapi.adapter import ON_ITS_PAGES, CoreAPIBackend
from memory_ui.sources.coreapi.operations import Actor
from memory_ui.sources.protocol import Capability, MemoryBackend, Subject, Unsupported, require

ALICE = Identity("a11ce000-0000-4000-8000-000000000001", "t", "alice@contoso.com", "Alice", (), "")
SUBJECT = Subject(ALICE.upn, ALICE.oid)


@pytest.fixture
def portal_coreapi(fresh_coreapi: RunningServer) -> RunningServer:
    return fresh_coreapi


@pytest.fixture
def backend(db, portal, coreapi_tokens) -> CoreAPIBackend:
    actor = Actor(ALICE, CallerAuth(coreapi_tokens.delegated("alice@contoso.com")))
    return CoreAPIBackend(actor)


def test_it_is_a_memory_backend(backend: CoreAPIBackend) -> None:
    assert isinstance(backend, MemoryBackend)
    assert Capability.APPEND in backend.capabilities
    with pytest.raises(Unsupported, match="own page"):
        require(backend, Capability.EDIT_ITEM)
    assert backend.missing_reason(Capability.IMPORT) == ON_ITS_PAGES
    with pytest.raises(Unsupported, match="own page"):
        backend.delete_item(SUBJECT, backend.list_targets(SUBJECT)[0], "0")


def test_targets_and_pages_are_the_documents_and_their_entries(backend: CoreAPIBackend) -> None:
    targets = backend.list_targets(SUBJECT)

    assert targets[0].key == "user" and {t.source for t in targets} == {"coreapi"}
    assert "agent:travel-planner" in [t.key for t in targets]
    page = backend.read_page(SUBJECT, targets[0])
    assert page.next_cursor is None
    assert any("Pacific Time" in (i.text or "") for i in page.items)
    assert page.items[0].description  # the entry's reason


def test_append_clear_and_export_are_audited(backend: CoreAPIBackend) -> None:
    travel = next(t for t in backend.list_targets(SUBJECT) if t.agent == "travel-planner")

    item = backend.append(SUBJECT, travel, "- Prefers trains under 4 hours.", "Told the portal")

    assert "trains" in (item.text or "") and item.description == "Told the portal"
    assert "trains" in backend.export(SUBJECT, travel)
    assert [o.result for o in backend.clear_target(SUBJECT, travel)] == ["erased"]
    assert backend.read_page(SUBJECT, travel).items == ()
    actions = list(AuditEvent.objects.order_by("id").values_list("action", "source"))
    assert actions == [("append", "coreapi"), ("export", "coreapi"), ("clear", "coreapi")]


def test_only_the_actors_subject(backend: CoreAPIBackend) -> None:
    with pytest.raises(ValueError, match="only its actor's subject"):
        backend.list_targets(Subject("bob@contoso.com", ""))
