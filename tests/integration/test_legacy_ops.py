"""The legacy stores' steps against the legacy store emulator, with the portal's real
service-principal token: the generic steps (memory_ui.sources.generic) over the stores'
backend (memory_ui.sources.legacy.backend), which the pages call, and the stores' own steps
over a person's whole memory (memory_ui.sources.legacy.operations). Scope from the verified
identity, every change audited with its source."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devstack.serve import RunningServer
from memory_ui import auth
from memory_ui.identity import Identity
from memory_ui.models import AuditEvent
from memory_ui.sources import generic, registry
from memory_ui.sources.coreapi import CallerAuth, UserIdentity
from memory_ui.sources.coreapi.operations import Actor
from memory_ui.sources.legacy import (
    LegacyConflict,
    LegacyForbidden,
    LegacyStoreError,
    LegacyUnauthorized,
    LegacyUnavailable,
)
from memory_ui.sources.legacy import operations as ops
from memory_ui.sources.legacy.adapter import (
    CONVERSATIONS_REASON,
    FORBIDDEN_REASON,
    READ_ONLY_REASON,
)
from memory_ui.sources.legacy.backend import stores_backend
from memory_ui.sources.legacy.values import GRAPH_OFF
from memory_ui.sources.protocol import Capability, Item, SourceTarget
from memory_ui.web.source_pages import Place
from tests.stack import free_port

TRAVEL = "main.agents.travel_planner_memory"
HELPDESK = "main.agents.it_helpdesk_memory"
BENEFITS = "main.agents.benefits_assistant_memory"
FINANCE = "main.finance.finance_insights_memory"
ALICE = Identity("a11ce000-0000-4000-8000-000000000001", "t", "alice@contoso.com", "Alice", (), "")
CAROL = Identity(
    "ca201000-0000-4000-8000-000000000003",
    "t",
    "carol@contoso.com",
    "Carol",
    ("Memory.Support",),
    "",
)


@pytest.fixture
def legacy(settings, portal_identity, fresh_legacy: RunningServer, db) -> Iterator[None]:
    settings.LEGACY_STORES_BASE_URL = fresh_legacy.url
    settings.LEGACY_STORES_AGENTS = (
        f'{{"travel-planner": "{TRAVEL}", "it-helpdesk": "{HELPDESK}",'
        f' "benefits-assistant": "{BENEFITS}", "finance-insights": "{FINANCE}"}}'
    )
    ops.reset_caches()
    yield
    ops.reset_caches()


@pytest.fixture
def alice(legacy) -> Actor:
    # The CoreAPI credentials are not used by these steps.
    return Actor(ALICE, CallerAuth(access_token="unused"))


@pytest.fixture
def carol_for_alice(legacy) -> Actor:
    upn = "alice@contoso.com"
    identity = UserIdentity(name=upn, user_name=upn, user_id="", upn=upn)
    return Actor(
        CAROL, CallerAuth("unused", identity), upn, reason="Deletion request", ticket="T-1"
    )


def _store(actor: Actor, key: str) -> Place:
    """The store as the pages work on it: the source, its backend and the target."""
    backend = stores_backend(actor)
    target = generic.target_of(actor, backend, key)
    assert target is not None
    return Place(registry.source("legacy"), backend, target)


def _target(place: Place) -> SourceTarget:
    assert place.target is not None
    return place.target


def _files(actor: Actor, place: Place) -> tuple:
    return generic.target_page(actor, place.backend, _target(place)).items


def _read(actor: Actor, place: Place, path: str):
    return generic.item_read(actor, place.backend, _target(place), path)


def _events(action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=action).order_by("id"))


def test_stores_are_the_readable_configured_ones_with_capabilities(alice: Actor) -> None:
    backend = stores_backend(alice)
    stores = [
        Place(registry.source("legacy"), backend, target)
        for target in backend.list_targets(generic.subject_of(alice))
    ]

    assert [_target(s).key for s in stores] == [TRAVEL, HELPDESK, BENEFITS]  # finance: no READ
    # The source can edit; the benefits store is read-only for the portal (READ only).
    assert Capability.EDIT_ITEM in backend.capabilities
    assert [s.allows(Capability.EDIT_ITEM) for s in stores] == [True, True, False]
    assert not stores[0].allows(Capability.CONDITIONAL_WRITE)
    assert "version check" in stores[0].refusal(Capability.CONDITIONAL_WRITE)


def test_a_store_key_from_the_browser_is_only_looked_up_in_configuration(alice: Actor) -> None:
    backend = stores_backend(alice)
    assert generic.target_of(alice, backend, TRAVEL) is not None
    assert generic.target_of(alice, backend, "main.agents.someone_elses_store") is None


def test_off_when_no_base_url(alice: Actor, settings) -> None:
    settings.LEGACY_STORES_BASE_URL = ""
    ops.reset_caches()

    # Not registered: no pages, no search, no steps.
    assert "legacy" not in [source.name for source in registry.sources()]


def test_files_page_has_metadata_without_contents(alice: Actor) -> None:
    items = _files(alice, _store(alice, TRAVEL))

    assert [i.key for i in items] == [
        "/memories/preferences.md",
        "/memories/profile.md",
        "/memories/trips/2026-06-berlin.md",
    ]
    assert all(i.text is None and i.has_text and i.updated for i in items)
    assert items[0].description == "Seat, flight and hotel preferences"


def test_replace_checks_the_version_and_is_audited(alice: Actor) -> None:
    store = _store(alice, TRAVEL)
    item = _read(alice, store, "/memories/profile.md")
    started = generic.version_of(item)

    def replace(text: str):
        path = "/memories/profile.md"
        return generic.item_replace(alice, store.backend, _target(store), path, text, started)

    after = replace("- UTC+1\n")

    assert after.text == "- UTC+1\n"
    event = _events("edit")[-1]
    assert (event.source, event.agent_name, event.agent_object_id) == (
        "legacy",
        "travel-planner",
        TRAVEL,
    )
    assert event.outcome == "ok" and event.bytes_after == len("- UTC+1\n")
    with pytest.raises(generic.ItemChanged) as changed:  # the version begun from is gone
        replace("- mine\n")
    assert changed.value.current is not None and changed.value.current.text == "- UTC+1\n"
    assert _read(alice, store, "/memories/profile.md").text == "- UTC+1\n"
    assert _events("edit")[-1].outcome == "error"


def test_entry_edit_needs_exactly_one_match(alice: Actor) -> None:
    store = _store(alice, TRAVEL)
    path = "/memories/preferences.md"

    def edit(old: str, new: str):
        version = generic.version_of(_read(alice, store, path))
        return generic.entry_edit(alice, store.backend, _target(store), path, old, new, version)

    with pytest.raises(generic.NotMatchedOnce):
        edit("not in the file", "x")
    after = edit("aisle seats", "window seats")

    assert "window seats" in (after.text or "") and "aisle" not in (after.text or "")
    assert generic.NotMatchedOnce.portal_status == 400


def test_delete_then_undo_and_undo_never_overwrites(alice: Actor) -> None:
    store = _store(alice, HELPDESK)
    before = _read(alice, store, "/memories/devices.md")

    deleted = generic.item_delete(alice, store.backend, _target(store), "/memories/devices.md")
    assert _files(alice, store) == ()
    restored = generic.item_restore(alice, store.backend, _target(store), deleted)

    assert (restored.text, restored.description) == (before.text, before.description)
    with pytest.raises(LegacyConflict):
        generic.item_restore(alice, store.backend, _target(store), deleted)
    assert [e.outcome for e in _events("delete-entry")] == ["ok"]
    assert [e.outcome for e in _events("undo")] == ["ok", "error"]
    assert _events("undo")[-1].error_status == 409


def test_clear_gives_per_file_results(alice: Actor) -> None:
    benefits = _store(alice, BENEFITS)  # READ only: deletes refused
    rows = generic.target_clear(alice, benefits.backend, _target(benefits))

    assert [(r.key, r.result, r.reason) for r in rows] == [
        ("/memories/enrolment.md", "not possible", FORBIDDEN_REASON)
    ]
    assert _events("clear")[-1].outcome == "error"
    travel = _store(alice, TRAVEL)
    rows = generic.target_clear(alice, travel.backend, _target(travel))
    assert {r.result for r in rows} == {"erased"} and len(rows) == 3
    assert _files(alice, _store(alice, TRAVEL)) == ()


def test_a_store_the_portal_may_not_read_is_refused_with_forbidden(alice: Actor) -> None:
    with pytest.raises(LegacyForbidden) as refused:
        _files(alice, _store(alice, FINANCE))
    assert refused.value.portal_status == 403


def test_search_covers_every_readable_store(alice: Actor) -> None:
    hits = stores_backend(alice).search(generic.subject_of(alice), "ThinkPad aisle")

    assert {(target.key, item.key) for target, item in hits} == {
        (TRAVEL, "/memories/preferences.md"),
        (HELPDESK, "/memories/devices.md"),
    }


def test_export_a_file_a_store_and_everything(alice: Actor) -> None:
    store = _store(alice, TRAVEL)

    one = generic.item_export(alice, store.backend, _target(store), "/memories/profile.md")
    assert "## /memories/profile.md" in one and "Pacific Time" in one
    assert "Berlin" not in one
    everything = ops.legacy_export_all(alice)
    assert [f.name for f in everything] == [f"legacy-{k}.md" for k in (TRAVEL, HELPDESK, BENEFITS)]
    assert "Hotel Adlon" in everything[0].text
    assert {e.source for e in _events("export")} == {"legacy"}


def test_support_reads_are_audited_as_reveals(carol_for_alice: Actor) -> None:
    store = _store(carol_for_alice, TRAVEL)

    item = _read(carol_for_alice, store, "/memories/profile.md")

    assert "Pacific" in (item.text or "")
    event = _events("reveal")[-1]
    assert (event.actor_upn, event.subject_upn, event.actor_is_support) == (
        "carol@contoso.com",
        "alice@contoso.com",
        True,
    )
    assert (event.reason, event.ticket, event.source) == ("Deletion request", "T-1", "legacy")


def _exported(actor: Actor) -> dict[str, dict[str, str]]:
    """What support's export hands over: store -> path -> version."""
    return {file.store: file.versions for file in ops.legacy_export_all(actor)}


def test_erasure_has_a_row_per_store_and_for_conversations(carol_for_alice: Actor) -> None:
    erasure = ops.legacy_erase_subject(carol_for_alice, _exported(carol_for_alice))

    rows = {(o.key, o.result, o.reason, o.erased, o.total) for o in erasure.outcomes}
    assert (TRAVEL, "erased", "3 files erased.", 3, 3) in rows
    # Read-only (WRITE refused): nothing erased there, so "not possible", never "partly".
    read_only = f"{FORBIDDEN_REASON[0].lower()}{FORBIDDEN_REASON[1:-1]}"
    benefits = f"None of 1 file erased; 1 left: {read_only}, ask hr-platform@contoso.com."
    assert (BENEFITS, "not possible", benefits, 0, 1) in rows
    # No READ either: the owner to ask, from LEGACY_STORES_KNOWN (the devstack's default).
    finance = "The portal has no access; ask finance-platform@contoso.com."
    assert (FINANCE, "not possible", finance, 0, None) in rows
    assert erasure.outcomes[-1].result == "not possible"
    assert erasure.outcomes[-1].reason == CONVERSATIONS_REASON
    assert _files(carol_for_alice, _store(carol_for_alice, TRAVEL)) == ()
    events = {(e.agent_object_id, e.outcome) for e in _events("erase")}
    assert events == {(TRAVEL, "ok"), (HELPDESK, "ok"), (BENEFITS, "error"), (FINANCE, "error")}


def test_the_erasure_plan_counts_files_and_says_what_cannot_be_erased(
    alice: Actor, carol_for_alice: Actor, settings
) -> None:
    settings.LEGACY_STORES_AGENTS = f'{{"travel-planner": "{TRAVEL}", "benefits": "{BENEFITS}"}}'
    ops.reset_caches()

    plan = ops.legacy_erasure_plan(carol_for_alice)

    rows = [(o.key, o.result, o.total) for o in plan.outcomes]
    assert rows == [
        (TRAVEL, "to erase", 3),
        (BENEFITS, "not possible", 1),
        # Known (LEGACY_STORES_KNOWN) but not configured: named, with whom to ask.
        (HELPDESK, "not possible", None),
        (FINANCE, "not possible", None),
        ("conversations", "not possible", None),
    ]
    reasons = {o.key: o.reason for o in plan.outcomes}
    assert "ask hr-platform@contoso.com" in reasons[BENEFITS]
    assert reasons[FINANCE] == "The portal has no access; ask finance-platform@contoso.com."
    assert len(_files(alice, _store(alice, TRAVEL))) == 3  # nothing changed
    assert not _events("erase")


def _keyed_by_oid(alice: Actor, settings) -> Item:
    """The stores keyed by object id, with one file of alice's under her own scope (she
    signs in with her oid): what support must reach by her UPN alone."""
    settings.LEGACY_STORES_SCOPE_TEMPLATE = "user-{oid}"
    ops.reset_caches()
    travel = _store(alice, TRAVEL)
    return travel.backend.append(generic.subject_of(alice), _target(travel), "- Aisle seat\n", "")


def test_support_reaches_an_oid_keyed_store_by_upn_through_graph(
    alice: Actor, carol_for_alice: Actor, settings, idp: RunningServer
) -> None:
    settings.GRAPH_BASE_URL = idp.url  # the devstack IdP serves Graph's user lookup
    written = _keyed_by_oid(alice, settings)

    travel = _store(carol_for_alice, TRAVEL)
    assert [i.key for i in _files(carol_for_alice, travel)] == [written.key]
    assert _read(carol_for_alice, travel, written.key).text == "- Aisle seat\n"
    plan = ops.legacy_erasure_plan(carol_for_alice)
    assert (TRAVEL, "to erase", 1) in [(o.key, o.result, o.total) for o in plan.outcomes]

    erasure = ops.legacy_erase_subject(carol_for_alice, _exported(carol_for_alice))

    assert (TRAVEL, "erased", 1) in [(o.key, o.result, o.erased) for o in erasure.outcomes]
    assert _files(alice, _store(alice, TRAVEL)) == ()
    # The upn-keyed demo files are someone else's scope now: untouched.
    settings.LEGACY_STORES_SCOPE_TEMPLATE = "{upn}"
    ops.reset_caches()
    assert len(_files(alice, _store(alice, TRAVEL))) == 3


def test_erasure_with_an_oid_scope_template_is_not_possible_for_support_without_graph(
    alice: Actor, carol_for_alice: Actor, settings
) -> None:
    settings.GRAPH_BASE_URL = ""
    _keyed_by_oid(alice, settings)

    erasure = ops.legacy_erase_subject(carol_for_alice, {})

    reason = f"{ops.OID_UNKNOWN} {GRAPH_OFF}"
    assert [(o.result, o.reason) for o in erasure.outcomes] == [("not possible", reason)]
    assert "ask the portal's operators" in reason
    assert _events("erase")[-1].outcome == "error"
    with pytest.raises(LegacyStoreError) as refused:
        _files(carol_for_alice, _store(carol_for_alice, TRAVEL))
    assert refused.value.message == reason
    assert len(_files(alice, _store(alice, TRAVEL))) == 1  # nothing erased


def test_a_graph_that_does_not_answer_refuses_support_saying_to_try_again(
    alice: Actor, carol_for_alice: Actor, settings
) -> None:
    settings.GRAPH_BASE_URL = f"https://127.0.0.1:{free_port()}"  # nothing listens
    _keyed_by_oid(alice, settings)

    with pytest.raises(LegacyUnavailable) as unanswered:
        _files(carol_for_alice, _store(carol_for_alice, TRAVEL))

    assert unanswered.value.message.startswith(ops.OID_UNKNOWN)
    assert "try again later, or ask the portal's operators" in unanswered.value.message
    plan = ops.legacy_erasure_plan(carol_for_alice)
    assert [(o.result, o.reason) for o in plan.outcomes] == [
        ("not possible", unanswered.value.message)
    ]


def test_a_upn_graph_does_not_know_is_refused(alice: Actor, settings, idp: RunningServer) -> None:
    settings.GRAPH_BASE_URL = idp.url
    _keyed_by_oid(alice, settings)
    upn = "nobody@contoso.com"
    identity = UserIdentity(name=upn, user_name=upn, user_id="", upn=upn)
    carol = Actor(CAROL, CallerAuth("unused", identity), upn, reason="Request", ticket="T-2")

    plan = ops.legacy_erasure_plan(carol)

    assert [o.reason for o in plan.outcomes] == [
        f"{ops.OID_UNKNOWN} The directory knows no one by that name; check the UPN."
    ]


def test_erasure_keeps_a_file_changed_since_the_export(
    alice: Actor, carol_for_alice: Actor
) -> None:
    exported = _exported(carol_for_alice)
    travel = _store(alice, TRAVEL)
    changed = generic.version_of(_read(alice, travel, "/memories/profile.md"))
    path, text = "/memories/profile.md", "Moved to Lisbon."
    generic.item_replace(alice, travel.backend, _target(travel), path, text, changed)

    erasure = ops.legacy_erase_subject(carol_for_alice, exported)

    rows = {o.key: (o.result, o.reason) for o in erasure.outcomes}
    assert rows[TRAVEL] == (
        "partly",
        "2 of 3 files erased; 1 left: changed since the export, kept: export again, then erase.",
    )
    assert rows[HELPDESK][0] == "erased"
    left = _files(alice, travel)
    assert [i.key for i in left] == ["/memories/profile.md"]
    assert "Lisbon" in (_read(alice, travel, "/memories/profile.md").text or "")
    assert (TRAVEL, "error") in {(e.agent_object_id, e.outcome) for e in _events("erase")}


def test_erasure_without_an_export_of_the_stores_erases_nothing(
    alice: Actor, carol_for_alice: Actor
) -> None:
    erasure = ops.legacy_erase_subject(carol_for_alice, None)

    assert [(o.result, o.reason) for o in erasure.outcomes] == [("not possible", ops.NOT_EXPORTED)]
    assert len(_files(alice, _store(alice, TRAVEL))) == 3
    assert _events("erase")[-1].outcome == "error"


def test_a_read_only_store_offers_no_change_and_a_writable_one_does(alice: Actor) -> None:
    benefits, travel = _store(alice, BENEFITS), _store(alice, TRAVEL)

    assert _target(benefits).read_only and not _target(travel).read_only
    for capability in (Capability.EDIT_ITEM, Capability.DELETE_ITEM, Capability.CLEAR_TARGET):
        assert not benefits.allows(capability) and benefits.refuses(capability)
        assert travel.allows(capability)
    assert benefits.allows(Capability.EXPORT) and benefits.allows(Capability.SEARCH)
    assert benefits.refusal(Capability.DELETE_ITEM) == READ_ONLY_REASON


def test_a_sign_in_service_that_does_not_answer_is_worth_trying_again(
    alice: Actor, settings
) -> None:
    # Nothing listens at the authority: no answer, unlike a refused credential (below).
    settings.ENTRA_AUTHORITY = f"https://127.0.0.1:{free_port()}/{settings.DEVSTACK_TENANT_ID}"
    auth.reset_caches()

    travel = _store(alice, TRAVEL)
    with pytest.raises(LegacyUnavailable) as unanswered:
        generic.item_delete(alice, travel.backend, _target(travel), "/memories/profile.md")

    assert unanswered.value.portal_status == 503
    assert _events("delete-entry")[-1].error_message == unanswered.value.message


def test_no_token_for_the_stores_is_the_portals_failure_and_audited(alice: Actor, settings) -> None:
    settings.ENTRA_CLIENT_SECRET = "wrong"  # the IdP refuses the portal's client credentials
    auth.reset_caches()

    travel = _store(alice, TRAVEL)
    with pytest.raises(LegacyUnauthorized) as refused:
        generic.item_delete(alice, travel.backend, _target(travel), "/memories/profile.md")

    assert refused.value.message == ops.NO_TOKEN and refused.value.portal_status == 502
    assert _events("delete-entry")[-1].error_message == ops.NO_TOKEN
