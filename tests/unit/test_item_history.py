"""The history of a generic source's items (issue 29, item 3; memory_ui/sources/item_history.py
and the steps of memory_ui/sources/generic.py): each change of the person's own keeps the
version before under a key naming the source, the target and the item (digests, so never
longer than the column and never another source's or a CoreAPI memory's key); support's
changes keep none; a restore is a conditional write kept as a change of its own."""

from __future__ import annotations

import re

import pytest

from memory_ui import history
from memory_ui.history import versions_of
from memory_ui.identity import Actor, CallerAuth, Identity
from memory_ui.models import PriorVersion
from memory_ui.sources import generic
from memory_ui.sources.agent_memory import target_key
from memory_ui.sources.item_history import deleted_items, history_key, item_changes
from memory_ui.sources.protocol import Capability, Item, SourceTarget, Unsupported, Version
from tests.fake_legacy import NOTES, STORES, FakeLegacyBackend

pytestmark = pytest.mark.django_db

ALICE = Identity("a11ce", "t", "alice@contoso.com", "Alice", (), "")
CAROL = Identity("ca201", "t", "carol@contoso.com", "Carol", ("Memory.Support",), "")
ME = Actor(ALICE, CallerAuth(access_token="unused"))
SUPPORT = Actor(CAROL, CallerAuth(access_token="unused"), subject_upn="alice@contoso.com")
TRAVEL = SourceTarget("legacy", STORES["travel-planner"], "Travel")
PREFS = "/memories/preferences.md"
BEFORE = "# Travel\n\n- Prefers aisle seats"


@pytest.fixture
def backend() -> FakeLegacyBackend:
    fake = FakeLegacyBackend()
    fake.put("travel-planner", ALICE.upn, PREFS, BEFORE)
    return fake


def version(backend: FakeLegacyBackend, key: str = PREFS) -> str:
    return generic.version_of(backend.files[(TRAVEL.key, ALICE.upn)][key])


# --- keys ------------------------------------------------------------------------------------


def test_the_key_names_the_source_the_target_and_the_item_by_digests() -> None:
    key = history_key("legacy", TRAVEL, PREFS)

    assert re.fullmatch(r"legacy:[0-9a-f]{32}:[0-9a-f]{32}", key)
    assert "preferences" not in key and "travel" not in key  # the row names neither


def test_the_longest_keys_fit_the_column() -> None:
    longest = SourceTarget("a" * 16, "t" * 1024, "T")  # a source's name is at most 16 long
    limit = PriorVersion._meta.get_field("target_key").max_length

    assert len(history_key(longest.source, longest, "i" * 1024)) <= limit


def test_keys_of_different_sources_targets_and_items_never_meet() -> None:
    keys = {
        history_key("legacy", SourceTarget("legacy", "a:b", "T"), "c"),
        history_key("legacy", SourceTarget("legacy", "a", "T"), "b:c"),
        history_key("memory_api", SourceTarget("memory_api", "a:b", "T"), "c"),
        history_key("legacy", SourceTarget("legacy", "a:b", "T"), "d"),
    }
    assert len(keys) == 4
    # CoreAPI's memories: at most one colon, where every generic key has two.
    coreapi = {target_key("user"), target_key("agent", "legacy"), target_key("combined", "x")}
    assert all(key.count(":") <= 1 for key in coreapi)
    assert all(key.count(":") == 2 for key in keys)


# --- what is kept ------------------------------------------------------------------------------


def test_each_change_of_the_persons_keeps_the_version_before(backend) -> None:
    generic.item_replace(ME, backend, TRAVEL, PREFS, "- Window seats", version(backend))
    generic.entry_edit(ME, backend, TRAVEL, PREFS, "Window", "Aisle", version(backend))
    deleted = generic.item_delete(ME, backend, TRAVEL, PREFS)
    generic.item_restore(ME, backend, TRAVEL, deleted)

    changes = item_changes(ALICE.upn, "legacy", TRAVEL, PREFS)
    assert [(c.action, c.before, c.after) for c in changes] == [
        ("undo", "", "- Aisle seats"),
        ("delete-entry", "- Aisle seats", ""),
        ("edit", "- Window seats", "- Aisle seats"),
        ("edit", BEFORE, "- Window seats"),
    ]
    assert {c.item for c in changes} == {PREFS}
    assert PriorVersion.objects.filter(target_key=history_key("legacy", TRAVEL, PREFS)).count() == 4


def test_a_resolve_keeps_the_version_before(backend) -> None:
    backend.capabilities |= Capability.RESOLVE
    held = (Version("- Aisle"), Version("- Window"))
    files = backend.files[(TRAVEL.key, ALICE.upn)]
    files[PREFS] = Item(PREFS, "", None, "- Aisle\n- Window", held=held)

    generic.item_resolve(ME, backend, TRAVEL, PREFS, 1, version(backend))

    (change,) = item_changes(ALICE.upn, "legacy", TRAVEL, PREFS)
    assert (change.action, change.before, change.after) == ("edit", "- Aisle\n- Window", "- Window")


def test_support_keeps_none(backend) -> None:
    generic.item_replace(SUPPORT, backend, TRAVEL, PREFS, "support's", version(backend))
    generic.item_delete(SUPPORT, backend, TRAVEL, PREFS)

    assert not PriorVersion.objects.exists()


def test_a_deleted_item_is_listed_until_it_is_brought_back(backend) -> None:
    deleted = generic.item_delete(ME, backend, TRAVEL, PREFS)
    assert [c.item for c in deleted_items(ALICE.upn, "legacy", TRAVEL)] == [PREFS]
    assert deleted_items("bob@contoso.com", "legacy", TRAVEL) == []
    other = SourceTarget("legacy", STORES["it-helpdesk"], "Helpdesk")
    assert deleted_items(ALICE.upn, "legacy", other) == []

    generic.item_restore(ME, backend, TRAVEL, deleted)

    assert deleted_items(ALICE.upn, "legacy", TRAVEL) == []


def test_listing_deleted_items_decrypts_only_the_deletes(backend, monkeypatch) -> None:
    """Many edits of one file and the delete of another: a store's page opens the delete's
    row alone, so its cost does not grow with the person's history."""
    notes = "/memories/notes.md"
    backend.put("travel-planner", ALICE.upn, notes, "- Likes trains")
    for n in range(5):
        generic.item_replace(ME, backend, TRAVEL, PREFS, f"- Seat {n}", version(backend))
    generic.item_delete(ME, backend, TRAVEL, notes)
    opened = []
    real = history._opened
    monkeypatch.setattr(history, "_opened", lambda row: opened.append(row.id) or real(row))

    deleted = deleted_items(ALICE.upn, "legacy", TRAVEL)

    assert [(c.item, c.before) for c in deleted] == [(notes, "- Likes trains")]
    assert len(opened) == 1

    generic.item_delete(ME, backend, TRAVEL, PREFS)
    assert [c.item for c in deleted_items(ALICE.upn, "legacy", TRAVEL)] == [PREFS, notes]


# --- restoring -----------------------------------------------------------------------------------


def _before(_now: str) -> str:
    return BEFORE


def test_a_restore_over_the_item_is_conditional_and_kept_as_a_change(backend) -> None:
    generic.item_replace(ME, backend, TRAVEL, PREFS, "- Window seats", version(backend))
    shown = version(backend)
    backend.put("travel-planner", ALICE.upn, PREFS, "changed meanwhile")

    with pytest.raises(generic.ItemChanged):
        generic.item_put_back(ME, backend, TRAVEL, PREFS, _before, shown)
    assert backend.files[(TRAVEL.key, ALICE.upn)][PREFS].text == "changed meanwhile"

    generic.item_put_back(ME, backend, TRAVEL, PREFS, _before, version(backend))

    assert backend.files[(TRAVEL.key, ALICE.upn)][PREFS].text == BEFORE
    newest = versions_of(ALICE.upn, history_key("legacy", TRAVEL, PREFS))[0]
    assert (newest.action, newest.before, newest.after) == (
        "restore-version",
        "changed meanwhile",
        BEFORE,
    )


def test_a_deleted_item_is_restored_else_appended_else_refused(backend) -> None:
    generic.item_delete(ME, backend, TRAVEL, PREFS)
    files = backend.files[(TRAVEL.key, ALICE.upn)]

    restored = generic.item_put_back(ME, backend, TRAVEL, PREFS, _before, "")
    assert (restored.key, files[PREFS].text) == (PREFS, BEFORE)
    with pytest.raises(generic.ItemChanged):  # it is there again: nothing overwritten
        generic.item_put_back(ME, backend, TRAVEL, PREFS, lambda _now: "older", "")
    assert files[PREFS].text == BEFORE

    generic.item_delete(ME, backend, TRAVEL, PREFS)
    backend.capabilities &= ~Capability.RESTORE_ITEM
    appended = generic.item_put_back(ME, backend, TRAVEL, PREFS, _before, "")
    assert (appended.key, files[NOTES].text) == (NOTES, BEFORE) and PREFS not in files
    # Added to another item, which may hold more than it: kept under the deleted one only,
    # which says so and is no longer listed as deleted (nor restored a second time).
    assert item_changes(ALICE.upn, "legacy", TRAVEL, NOTES) == []
    (kept, _deleted, *_) = item_changes(ALICE.upn, "legacy", TRAVEL, PREFS)
    assert (kept.action, kept.after) == ("restore-version", BEFORE)
    assert deleted_items(ALICE.upn, "legacy", TRAVEL) == []
    with pytest.raises(generic.ItemChanged):
        generic.item_put_back(ME, backend, TRAVEL, PREFS, _before, "")
    assert files[NOTES].text == BEFORE  # not appended twice

    backend.capabilities &= ~Capability.APPEND
    with pytest.raises(Unsupported):
        generic.item_put_back(ME, backend, TRAVEL, "/memories/other.md", _before, "")
