"""CoreAPI behind the MemoryBackend protocol (memory_ui.sources.coreapi.adapter) against the
CoreAPI emulator with alice's real delegated token: every capability it declares works
through the protocol, and every change is audited by operations."""

from __future__ import annotations

import pytest

from devstack.serve import RunningServer
from memory_ui.identity import Identity
from memory_ui.models import AuditEvent
from memory_ui.sources.coreapi import CallerAuth, CoreAPIConflict
from memory_ui.sources.coreapi.adapter import CoreAPIBackend
from memory_ui.sources.coreapi.operations import Actor
from memory_ui.sources.protocol import Capability, MemoryBackend, Subject, Unsupported, require
from memory_ui.sources.registry import source

ALICE = Identity("a11ce000-0000-4000-8000-000000000001", "t", "alice@contoso.com", "Alice", (), "")
SUBJECT = Subject(ALICE.upn, ALICE.oid)


@pytest.fixture
def portal_coreapi(fresh_coreapi: RunningServer) -> RunningServer:
    return fresh_coreapi


@pytest.fixture
def backend(db, portal, coreapi_tokens) -> CoreAPIBackend:
    actor = Actor(ALICE, CallerAuth(coreapi_tokens.delegated("alice@contoso.com")))
    return CoreAPIBackend(actor)


def test_it_is_a_memory_backend_with_what_the_registry_declares(backend: CoreAPIBackend) -> None:
    assert isinstance(backend, MemoryBackend)
    assert backend.capabilities == source("coreapi").capabilities
    # Every capability CoreAPI has (issue 27); what it lacks (a preview for one question,
    # keeping one of two held versions) is refused with a sentence.
    assert (
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
    ) in backend.capabilities
    for capability in Capability:
        if capability in backend.capabilities:
            require(backend, capability)
        else:
            with pytest.raises(Unsupported):
                require(backend, capability)


def test_search_edit_delete_and_restore_an_entry(backend: CoreAPIBackend) -> None:
    user = backend.list_targets(SUBJECT)[0]
    found = backend.search(SUBJECT, "pacific time")
    assert found and all("pacific time" in (i.text or "").casefold() for _, i in found)
    target, item = found[0]
    assert target.key == user.key
    before = backend.read_page(SUBJECT, user).items

    edited = backend.edit_item(SUBJECT, user, item.key, item.text or "", "Works on Eastern Time.")

    assert edited.key == item.key and edited.text == "Works on Eastern Time."
    assert edited.description == item.description  # the entry's reason stays
    with pytest.raises(CoreAPIConflict):  # it no longer reads what the caller started from
        backend.edit_item(SUBJECT, user, item.key, item.text or "", "Anything.")
    deleted = backend.delete_item(SUBJECT, user, item.key)
    assert deleted.text == "Works on Eastern Time."
    after = backend.read_page(SUBJECT, user).items
    assert len(after) == len(before) - 1
    assert all("Eastern Time" not in (i.text or "") for i in after)
    restored = backend.restore_item(SUBJECT, user, deleted)
    assert restored.text == "Works on Eastern Time."
    assert backend.read_page(SUBJECT, user).items[-1].text == "Works on Eastern Time."
    actions = list(AuditEvent.objects.order_by("id").values_list("action", "source"))
    assert actions == [
        ("edit", "coreapi"),
        ("delete-entry", "coreapi"),
        ("append", "coreapi"),
    ]


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
