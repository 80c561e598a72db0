"""The memory-api source (memory_ui.sources.memory_api) against the memory-api emulator:
the configuration checked at start-up, the virtual_user_id rules, the projected token file
re-read when it rotates, the adapter's operations and the erasure steps with read-back."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from devstack import memory_api as emulator_module
from devstack.memory_api.identity import (
    load_settings,
    service_account_token,
    write_projected_token,
    write_pseudonym_key,
)
from devstack.pki import ensure_pki
from devstack.serve import RunningServer
from memory_ui.directory import Directory
from memory_ui.identity import Actor, CallerAuth, Identity
from memory_ui.models import AuditEvent
from memory_ui.sources import registry
from memory_ui.sources.coreapi import UserIdentity
from memory_ui.sources.memory_api import backend_for
from memory_ui.sources.memory_api.adapter import MemoryApiBackend, _object_id
from memory_ui.sources.memory_api.config import SubjectRule, TokenFile
from memory_ui.sources.memory_api.errors import (
    MemoryApiSetupError,
    MemoryApiUnavailable,
    SubjectUnavailable,
)
from memory_ui.sources.protocol import MemoryBackend, SourceTarget, Subject
from tests.stack import free_port

SETTINGS = load_settings()
ALICE = Identity("a11ce000-0000-4000-8000-000000000001", "t", "alice@contoso.com", "Alice", (), "")
CAROL = Identity(
    "ca201000-0000-4000-8000-000000000003",
    "t",
    "carol@contoso.com",
    "Carol",
    ("Memory.Support",),
    "",
)
ALICE_SUBJECT = Subject("alice@contoso.com", ALICE.oid)
BOB_SUBJECT = Subject("bob@contoso.com", "b0b00000-0000-4000-8000-000000000002")
SOURCES = "memory_ui.sources.coreapi,memory_ui.sources.memory_api"
NAMESPACE_ONLY = "trusted by namespace only, not exact-listed"


@pytest.fixture
def memory_api_server(tmp_path: Path) -> Iterator[RunningServer]:
    server = emulator_module.start(home=tmp_path)
    yield server
    server.stop()


@pytest.fixture
def configured(
    settings, tmp_path: Path, memory_api_server: RunningServer, portal_identity, idp
) -> Path:
    """The portal set up as the devstack sets it, over this test's emulator; Graph is the
    session's IdP."""
    settings.GRAPH_BASE_URL = idp.url
    pki = ensure_pki(tmp_path)
    settings.MEMORY_API_BASE_URL = memory_api_server.url
    settings.MEMORY_API_WORKSPACE_UID = SETTINGS.workspace.uid
    settings.MEMORY_API_TOKEN_FILE = str(write_projected_token(tmp_path, pki, SETTINGS))
    settings.MEMORY_API_SUBJECT_RULE = "hmac-sha256"
    settings.MEMORY_API_PSEUDONYM_KEY_FILE = str(write_pseudonym_key(tmp_path, SETTINGS))
    settings.PORTAL_MEMORY_SOURCES = SOURCES.split(",")
    backend_for.cache_clear()
    return tmp_path


def own(subject: Subject) -> list[SourceTarget]:
    """The person's own targets: without the workspace's shared one, which is no one's."""
    return [t for t in backend().list_targets(subject) if not t.read_only]


def backend() -> MemoryApiBackend:
    found = registry.source("memory_api").backend
    assert found is not None
    return found(Actor(ALICE, CallerAuth(access_token="unused")))  # type: ignore[return-value]


# --- configuration ----------------------------------------------------------------------


def test_a_workspace_name_is_refused_at_start_up_saying_why(configured, settings) -> None:
    settings.MEMORY_API_WORKSPACE_UID = SETTINGS.workspace.name

    with pytest.raises(ImproperlyConfigured, match=r"UID \(a UUID\).*500"):
        registry.build(settings.PORTAL_MEMORY_SOURCES)


def test_the_source_is_off_without_a_base_url(configured, settings) -> None:
    settings.MEMORY_API_BASE_URL = ""

    assert "memory_api" not in {s.name for s in registry.sources()}


def test_the_keyed_pseudonym_is_hmac_sha256_of_the_oid(configured) -> None:
    rule = SubjectRule.configured("hmac-sha256", str(configured / "memory-api-pseudonym-key"))

    assert rule.virtual_user_id(ALICE_SUBJECT) == SETTINGS.virtual_user_id("alice@contoso.com")
    assert rule.virtual_user_id(ALICE_SUBJECT) != rule.virtual_user_id(BOB_SUBJECT)


def test_a_template_rule_fills_in_the_verified_identity() -> None:
    assert SubjectRule.configured("{oid}", "").virtual_user_id(ALICE_SUBJECT) == ALICE.oid
    assert (
        SubjectRule.configured("u:{upn}", "").virtual_user_id(Subject("Alice@Contoso.com", ""))
        == "u:alice@contoso.com"
    )


@pytest.mark.parametrize("rule", ["hmac-sha256", "{oid}"])
def test_a_request_without_the_oid_the_rule_needs_cannot_be_built(configured, rule) -> None:
    key = str(configured / "memory-api-pseudonym-key")

    with pytest.raises(SubjectUnavailable):
        SubjectRule.configured(rule, key).virtual_user_id(Subject("alice@contoso.com", ""))


@pytest.mark.parametrize("rule", ["plain", "{name}"])
def test_a_rule_naming_nobody_is_refused(rule) -> None:
    with pytest.raises(ImproperlyConfigured):
        SubjectRule.configured(rule, "")


def test_the_token_file_is_read_again_when_it_rotates(configured, tmp_path: Path) -> None:
    path = tmp_path / "rotating-token"
    outsider = service_account_token(ensure_pki(tmp_path), SETTINGS, SETTINGS.accounts["outsider"])
    path.write_text(outsider)
    token = TokenFile(str(path))
    assert token() == outsider

    path.with_suffix(".new").write_text("rotated")
    os.replace(path.with_suffix(".new"), path)  # as the kubelet swaps it

    assert token() == "rotated"


def test_a_refused_token_is_a_setup_error_not_the_persons(configured, settings, caplog) -> None:
    outsider = service_account_token(
        ensure_pki(configured), SETTINGS, SETTINGS.accounts["outsider"]
    )
    Path(settings.MEMORY_API_TOKEN_FILE).write_text(outsider)

    with pytest.raises(MemoryApiSetupError) as caught:
        backend().list_targets(ALICE_SUBJECT)

    assert "Nothing about you is wrong" in caught.value.message
    assert "not allowed" in caught.value.operator_detail
    assert "not allow-listed for this memory-api" in caplog.text
    assert outsider not in caplog.text and "foreign workspace" not in caplog.text
    assert NAMESPACE_ONLY not in caplog.text


def test_a_foreign_workspace_is_a_setup_error_logged_apart(configured, settings, caplog) -> None:
    settings.MEMORY_API_WORKSPACE_UID = SETTINGS.other_workspace.uid
    backend_for.cache_clear()

    with pytest.raises(MemoryApiSetupError) as caught:
        backend().list_targets(ALICE_SUBJECT)

    assert "Nothing about you is wrong" in caught.value.message
    assert "foreign workspace: MEMORY_API_WORKSPACE_UID" in caplog.text
    assert "not allow-listed" not in caplog.text
    assert Path(settings.MEMORY_API_TOKEN_FILE).read_text() not in caplog.text
    assert NAMESPACE_ONLY not in caplog.text


def test_an_account_trusted_by_namespace_only_is_a_setup_error_saying_what_to_change(
    configured, settings, caplog
) -> None:
    """Seed 001: naming a user without a proof, trusted only by namespace, is 403; the
    portal never sends a proof, so its account must be exact-listed."""
    runtime = service_account_token(ensure_pki(configured), SETTINGS, SETTINGS.accounts["runtime"])
    Path(settings.MEMORY_API_TOKEN_FILE).write_text(runtime)

    with pytest.raises(MemoryApiSetupError) as caught:
        backend().list_targets(ALICE_SUBJECT)

    assert "Nothing about you is wrong" in caught.value.message
    assert caught.value.status == 403
    assert NAMESPACE_ONLY in caplog.text
    assert "add its subject (system:serviceaccount:" in caplog.text
    assert "not allow-listed" not in caplog.text and "foreign workspace" not in caplog.text
    assert runtime not in caplog.text


def test_an_unreadable_token_file_is_logged_for_operators(tmp_path: Path, caplog) -> None:
    missing = tmp_path / "no-token-here"

    with pytest.raises(MemoryApiSetupError) as caught:
        TokenFile(str(missing))()

    assert "operators have been told" in caught.value.message
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1
    assert f"token file {missing} cannot be read" in warnings[0].getMessage()


def test_graph_refusing_the_lookup_is_logged_for_operators(idp, pki, caplog) -> None:
    directory = Directory(idp.url, lambda: "not-a-graph-token", verify=str(pki.ca_cert))

    with pytest.raises(MemoryApiSetupError) as caught:
        _object_id(directory, "alice@contoso.com")  # the adapter's lookup

    assert caught.value.status == 401
    # Said to support, who acts by UPN: not the person's "nothing about you is wrong".
    assert caught.value.message.startswith("Microsoft Graph refused the portal's lookup")
    assert "about you" not in caught.value.message
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1
    assert "Microsoft Graph refused the portal's lookup: 401" in warnings[0].getMessage()
    assert "not-a-graph-token" not in caplog.text


# --- the adapter ------------------------------------------------------------------------


def test_targets_are_the_persons_memories_per_agent(configured) -> None:
    targets = own(ALICE_SUBJECT)

    assert [t.agent for t in targets] == ["benefits-assistant", "it-helpdesk"]
    assert [t.agent for t in own(BOB_SUBJECT)] == [
        "benefits-assistant",
        "it-helpdesk",
    ]


def test_a_page_holds_the_agents_memories_and_marks_a_conflict(configured) -> None:
    helpdesk = backend().list_targets(ALICE_SUBJECT)[1]

    page = backend().read_page(ALICE_SUBJECT, helpdesk)

    assert {i.text for i in page.items} >= {
        "Laptop: ThinkPad X1 Carbon, Windows 11, asset tag CT-48213."
    }
    assert any("2 versions held" in i.description for i in page.items)


def test_correcting_supersedes_and_changes_the_version(configured) -> None:
    benefits = backend().list_targets(ALICE_SUBJECT)[0]
    item = backend().read_page(ALICE_SUBJECT, benefits).items[0]

    edited = backend().replace_item(ALICE_SUBJECT, benefits, item.key, "Prefers Teams.")

    assert edited.text == "Prefers Teams."
    assert edited.version != item.version
    assert "(superseded" in backend().export(ALICE_SUBJECT, benefits)


def test_delete_is_soft_and_the_export_still_shows_it(configured) -> None:
    helpdesk = backend().list_targets(ALICE_SUBJECT)[1]
    item = backend().read_page(ALICE_SUBJECT, helpdesk).items[0]

    backend().delete_item(ALICE_SUBJECT, helpdesk, item.key)

    assert item.key not in {i.key for i in backend().read_page(ALICE_SUBJECT, helpdesk).items}
    assert "still held by the service" in backend().export(ALICE_SUBJECT, helpdesk)


def test_undo_writes_a_deleted_memory_again_as_a_new_one(configured) -> None:
    helpdesk = backend().list_targets(ALICE_SUBJECT)[1]
    item = next(
        i for i in backend().read_page(ALICE_SUBJECT, helpdesk).items if "laptop" in i.description
    )
    deleted = backend().delete_item(ALICE_SUBJECT, helpdesk, item.key)

    restored = backend().restore_item(ALICE_SUBJECT, helpdesk, deleted)

    assert restored.key != item.key
    assert restored.text == item.text and restored.description == item.description
    now = {i.key: i for i in backend().read_page(ALICE_SUBJECT, helpdesk).items}
    assert item.key not in now and now[restored.key].text == item.text
    user = backend().user(ALICE_SUBJECT)
    kept = {m["id"]: m for m in backend().client.export(user, helpdesk.agent)["memories"]}
    assert kept[item.key]["deleted_at"]  # the deleted one stays soft-deleted
    assert kept[restored.key]["deleted_at"] is None
    assert (kept[restored.key]["agent"], kept[restored.key]["type"]) == (helpdesk.agent, "fact")
    assert kept[restored.key]["about"] == "laptop"
    assert restored.key not in {
        m["id"] for m in backend().client.export(backend().user(BOB_SUBJECT))["memories"]
    }


def test_a_memory_brought_back_stays_its_own_where_an_agent_wrote_that_about_again(
    configured,
) -> None:
    helpdesk = backend().list_targets(ALICE_SUBJECT)[1]
    item = next(
        i for i in backend().read_page(ALICE_SUBJECT, helpdesk).items if "laptop" in i.description
    )
    deleted = backend().delete_item(ALICE_SUBJECT, helpdesk, item.key)
    user = backend().user(ALICE_SUBJECT)
    # The agent learns about her laptop again, under the same `about`.
    agents = backend().client.create(
        user, helpdesk.agent, "Laptop: Surface 7", memory_type="fact", about="laptop"
    )

    restored = backend().restore_item(ALICE_SUBJECT, helpdesk, deleted)

    assert restored.key not in (item.key, agents["id"])  # a memory of its own, as told
    kept = {m["id"]: m for m in backend().client.export(user, helpdesk.agent)["memories"]}
    active = [o for o in kept[agents["id"]]["observations"] if o["status"] == "active"]
    assert [o["content"] for o in active] == ["Laptop: Surface 7"]  # the agent's untouched
    assert kept[restored.key]["observations"][0]["content"] == item.text


def test_a_memory_without_an_agent_comes_back_with_its_about_where_only_an_agent_has_it(
    configured,
) -> None:
    """M7 merges within one agent: another agent's live memory of the same `about` does
    not make the restore leave it out (the subject-wide export holds both)."""
    memory_api, user = backend(), backend().user(ALICE_SUBJECT)
    mine = memory_api.client.create(user, None, "Sits at desk 4.12.", "fact", about="desk")
    memory_api.client.create(user, "it-helpdesk", "Desk phone 4412.", "fact", about="desk")
    no_agent = memory_api.find_target(ALICE_SUBJECT, "-")
    deleted = memory_api.delete_item(ALICE_SUBJECT, no_agent, mine["id"])

    restored = memory_api.restore_item(ALICE_SUBJECT, no_agent, deleted)

    kept = {m["id"]: m for m in memory_api.client.export(user)["memories"]}
    assert restored.key != mine["id"]
    assert (kept[restored.key]["about"], kept[restored.key]["agent"]) == ("desk", None)


def test_search_finds_the_persons_memories_only(configured) -> None:
    found = backend().search(ALICE_SUBJECT, "laptop")

    assert [t.agent for t, _ in found] == ["it-helpdesk"]
    assert backend().search(BOB_SUBJECT, "laptop") == []


# --- the erasure steps --------------------------------------------------------------------


def carol_for(upn: str) -> Actor:
    identity = UserIdentity(name=upn, user_name=upn, user_id="", upn=upn)
    return Actor(CAROL, CallerAuth("unused", identity), upn, "Deletion request", "T-1")


@pytest.mark.django_db
def test_a_deletion_request_exports_erases_and_reads_back_none_left(configured) -> None:
    """Support acts by UPN: the object id the pseudonym needs comes from Graph."""
    carol = carol_for("alice@contoso.com")
    steps = registry.source("memory_api").steps
    assert steps is not None

    files = steps.export_all(carol)
    erasure = steps.erase_all(carol, {f.target: f.versions for f in files})

    assert [o.result for o in erasure.outcomes] == ["erased", "erased"]
    assert sum(o.erased for o in erasure.outcomes) == 4
    assert own(ALICE_SUBJECT) == []
    assert len(own(BOB_SUBJECT)) == 2
    # The workspace's shared memory is no one's: still there, and never counted above.
    assert [t.key for t in backend().list_targets(ALICE_SUBJECT)] == ["shared"]
    events = AuditEvent.objects.filter(source="memory_api", action="erase")
    assert events.count() == 2
    assert {e.subject_upn for e in events} == {"alice@contoso.com"}


def test_the_backend_erases_the_subject_agents_first_soft_deleted_too(configured) -> None:
    """The protocol's erase_subject (ERASE_SUBJECT), outside a deletion request: every
    memory kept about the person, a soft-deleted one too, bob's left alone."""
    memory_api = backend()
    assert isinstance(memory_api, MemoryBackend)
    helpdesk = next(t for t in own(ALICE_SUBJECT) if t.agent == "it-helpdesk")
    first = memory_api.read_page(ALICE_SUBJECT, helpdesk).items[0]
    memory_api.delete_item(ALICE_SUBJECT, helpdesk, first.key)  # soft: the service keeps it

    erasure = memory_api.erase_subject(ALICE_SUBJECT)

    assert {o.result for o in erasure.outcomes} == {"erased"}
    assert first.key in {o.key for o in erasure.outcomes}
    user = memory_api.user(ALICE_SUBJECT)
    assert memory_api.client.export(user)["memories"] == []
    assert len(own(BOB_SUBJECT)) == 2


@pytest.mark.django_db
def test_without_graph_support_cannot_reach_a_pseudonymised_person(configured, settings) -> None:
    settings.GRAPH_BASE_URL = ""
    steps = registry.source("memory_api").steps
    assert steps is not None

    with pytest.raises(SubjectUnavailable):
        steps.export_all(carol_for("alice@contoso.com"))


@pytest.mark.django_db
def test_a_graph_that_does_not_answer_is_worth_trying_again(configured, settings) -> None:
    settings.GRAPH_BASE_URL = f"https://127.0.0.1:{free_port()}"  # nothing listens
    steps = registry.source("memory_api").steps
    assert steps is not None

    with pytest.raises(MemoryApiUnavailable) as unanswered:
        steps.export_all(carol_for("alice@contoso.com"))

    assert "try again later" in unanswered.value.message


@pytest.mark.django_db
def test_a_upn_the_directory_does_not_know_is_refused(configured) -> None:
    steps = registry.source("memory_api").steps
    assert steps is not None

    with pytest.raises(SubjectUnavailable):
        steps.plan(carol_for("nobody@contoso.com"))


@pytest.mark.django_db
def test_an_agent_changed_since_the_export_is_not_erased(configured) -> None:
    alice = Actor(ALICE, CallerAuth(access_token="unused"))
    steps = registry.source("memory_api").steps
    assert steps is not None
    files = steps.export_all(alice)
    benefits = backend().list_targets(ALICE_SUBJECT)[0]
    item = backend().read_page(ALICE_SUBJECT, benefits).items[0]
    backend().replace_item(ALICE_SUBJECT, benefits, item.key, "Changed meanwhile.")

    erasure = steps.erase_all(alice, {f.target: f.versions for f in files})

    assert [o.result for o in erasure.outcomes] == ["changed", "erased"]
    assert [t.agent for t in own(ALICE_SUBJECT)] == ["benefits-assistant"]
