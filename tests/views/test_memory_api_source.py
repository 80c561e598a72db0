"""The workspace memory-api through the registry and the generic source pages, against the
memory-api emulator (the source is configured by settings alone, as an operator would):
alice's dashboard section, her agent's page, search, a correction (PATCH) with the earlier
version kept as history and a version check, her conflict resolved, a soft delete that says
so and whose Undo writes it again as a new memory, the workspace's shared rows read only, and support's deletion request
with its read-back, also where the read-back finds memories left."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest
import requests
from django.test import Client
from django.urls import reverse

from devstack import memory_api as emulator_module
from devstack.memory_api.identity import (
    load_settings,
    service_account_token,
    subject_proof,
    write_projected_token,
    write_pseudonym_key,
)
from devstack.pki import ensure_pki
from memory_ui.directory import Directory
from memory_ui.models import AuditEvent
from memory_ui.sources import registry
from memory_ui.sources.memory_api import backend_for
from memory_ui.sources.memory_api.adapter import (
    CORE,
    DELETE_NOTE,
    EDIT_NOTE,
    OTHERS_HELD,
    RESTORE_NOTE,
    SHARED_READ_ONLY,
)
from tests.pages import form_with_button, forms, submitted, table_rows
from tests.views import conftest as views
from tests.views.helpers import body, page_text

SETTINGS = load_settings()
HELPDESK = "it-helpdesk"
BENEFITS = "benefits-assistant"
BENEFITS_MEMORIES = ("0a1ce001-0000-4000-8000-000000000001", "0a1ce001-0000-4000-8000-000000000002")
LAPTOP = "0a1ce001-0000-4000-8000-000000000003"
LAPTOP_TEXT = "Laptop: ThinkPad X1 Carbon, Windows 11, asset tag CT-48213."
VPN = "0a1ce001-0000-4000-8000-000000000004"
VPN_OLD, VPN_NEW = (
    "Uses the Contoso VPN client 5.2 (IKEv2).",
    "Uses the Contoso VPN client 6.0 (WireGuard).",
)
ALICE_OID = "a11ce000-0000-4000-8000-000000000001"
TITLE = "Workspace memory"


@pytest.fixture
def memory_api(settings, fake, tmp_path: Path) -> Iterator[str]:
    server = emulator_module.start(home=tmp_path)
    pki = ensure_pki(tmp_path)
    settings.MEMORY_API_BASE_URL = server.url
    settings.MEMORY_API_WORKSPACE_UID = SETTINGS.workspace.uid
    settings.MEMORY_API_TOKEN_FILE = str(write_projected_token(tmp_path, pki, SETTINGS))
    settings.MEMORY_API_SUBJECT_RULE = "hmac-sha256"
    settings.MEMORY_API_PSEUDONYM_KEY_FILE = str(write_pseudonym_key(tmp_path, SETTINGS))
    settings.PORTAL_MEMORY_SOURCES = ["memory_ui.sources.coreapi", "memory_ui.sources.memory_api"]
    backend_for.cache_clear()
    yield server.url
    server.stop()
    backend_for.cache_clear()


@pytest.fixture
def alice(memory_api, monkeypatch: pytest.MonkeyPatch) -> Client:
    """Alice signed in with her directory object id (the demo data's pseudonyms are made
    from it), not the id the other view tests derive from her UPN."""
    derived = views.identity_for
    oid = ALICE_OID
    monkeypatch.setattr(
        views, "identity_for", lambda upn, roles=(): replace(derived(upn, roles), oid=oid)
    )
    return views.signed_in(Client(), "alice@contoso.com")


def url(page: str, **query: str) -> str:
    query = {"target": HELPDESK, **query}
    return f"{reverse(page, args=['memory_api'])}?" + "&".join(f"{k}={v}" for k, v in query.items())


def test_it_is_registered_and_alice_sees_her_agents_memories(alice: Client) -> None:
    assert [s.name for s in registry.sources()] == ["coreapi", "memory_api"]
    section = alice.get(
        reverse("source_section", args=["memory_api"]), headers={"HX-Request": "true"}
    )

    assert section.status_code == 200
    text = page_text(section)
    assert "IT Helpdesk Kept by the workspace's memory service." in text
    assert "Benefits Assistant Kept by the workspace's memory service." in text
    assert LAPTOP_TEXT in page_text(alice.get(url("source_target")))


def test_search_finds_her_workspace_memory(alice: Client) -> None:
    found = page_text(alice.get(reverse("search"), {"q": "laptop"}))
    assert "Workspace memory" in found and "IT Helpdesk" in found and "ThinkPad" in found


def test_a_correction_supersedes_and_is_audited(alice: Client) -> None:
    editor = alice.get(url("source_edit", item=LAPTOP))
    form = next(f for f in forms(body(editor)) if f.action.endswith("/memory_api/edit"))

    saved = alice.post(form.action, {**form.fields, "text": "Laptop: Surface Laptop 6."})

    assert saved.status_code == 302, saved.content
    assert "Laptop: Surface Laptop 6." in page_text(alice.get(url("source_target")))
    assert AuditEvent.objects.filter(source="memory_api", action=AuditEvent.Action.EDIT).exists()


def test_a_deletes_undo_writes_it_again_as_a_new_memory_and_says_so(alice: Client) -> None:
    deleted = alice.post(
        reverse("source_delete", args=["memory_api"]), {"target": HELPDESK, "item": LAPTOP}
    )

    assert deleted.status_code == 302
    page = body(alice.get(deleted["Location"]))
    assert LAPTOP_TEXT not in page and ">Undo</button>" in page
    assert RESTORE_NOTE in page_text(alice.get(deleted["Location"]))
    undo = next(f for f in forms(page) if f.action.endswith("/memory_api/undo"))

    undone = alice.post(undo.action, undo.fields, follow=True)

    text = page_text(undone)
    assert f"Restored {LAPTOP} as " in text and RESTORE_NOTE in text and LAPTOP_TEXT in text
    new = text.split(f"Restored {LAPTOP} as ")[1].split(":")[0]
    assert LAPTOP_TEXT in page_text(alice.get(url("source_item", item=new)))
    assert alice.get(url("source_item", item=LAPTOP)).status_code == 404  # still deleted


def test_a_rows_delete_sends_the_pages_one_delete_form_naming_its_memory(alice: Client) -> None:
    page = body(alice.get(url("source_target")))
    # One form holds the CSRF token and the target for every row (not one form per row).
    form = form_with_button(page, "item", LAPTOP)
    assert form.action.endswith("/memory_api/delete") and form.fields["target"] == HELPDESK
    assert len([f for f in forms(page) if f.action.endswith("/memory_api/delete")]) == 1

    deleted = alice.post(form.action, submitted(form, ("item", LAPTOP)))

    assert deleted.status_code == 302
    assert LAPTOP_TEXT not in body(alice.get(deleted["Location"]))


def test_a_correction_says_the_earlier_version_stays_and_shows_it_as_history(
    alice: Client,
) -> None:
    editor = alice.get(url("source_edit", item=LAPTOP))
    assert EDIT_NOTE in page_text(editor)
    form = next(f for f in forms(body(editor)) if f.action.endswith("/memory_api/edit"))
    alice.post(form.action, {**form.fields, "text": "Laptop: Surface Laptop 6."})

    item = page_text(alice.get(url("source_item", item=LAPTOP)))

    assert "Earlier versions Workspace memory keeps" in item
    assert LAPTOP_TEXT in item and "Laptop: Surface Laptop 6." in item


def test_a_correction_over_a_change_made_meanwhile_is_refused_and_shows_it(
    alice: Client, memory_api: str, tmp_path: Path
) -> None:
    editor = alice.get(url("source_edit", item=LAPTOP))
    form = next(f for f in forms(body(editor)) if f.action.endswith("/memory_api/edit"))
    _as_runtime(memory_api, tmp_path, "alice@contoso.com", "laptop", "Laptop: MacBook Air.")

    refused = alice.post(form.action, {**form.fields, "text": "Laptop: Surface Laptop 6."})

    assert refused.status_code == 409
    assert "As it is now" in page_text(refused) and "Laptop: Surface Laptop 6." in body(refused)


def test_her_conflict_shows_both_versions_and_she_keeps_one(alice: Client) -> None:
    page = alice.get(url("source_item", item=VPN))
    text = page_text(page)
    assert "Two versions of this are held" in text and VPN_OLD in text and VPN_NEW in text
    keep = [f for f in forms(body(page)) if f.action.endswith("/memory_api/resolve")]
    assert [f.fields["keep"] for f in keep] == ["0", "1"]

    kept = alice.post(keep[1].action, keep[1].fields)

    assert kept.status_code == 302
    after = page_text(alice.get(url("source_item", item=VPN)))
    assert "versions of this are held" not in after
    assert VPN_NEW in after and "Earlier versions" in after
    assert AuditEvent.objects.filter(source="memory_api", action=AuditEvent.Action.EDIT).exists()
    # Her page shows the choice she made: a second post from the old page changes nothing.
    assert alice.post(keep[0].action, keep[0].fields).status_code == 302
    assert f"{VPN_NEW}" in page_text(alice.get(url("source_item", item=VPN)))


def test_delete_says_it_is_a_soft_delete(alice: Client) -> None:
    item = page_text(alice.get(url("source_item", item=LAPTOP)))
    assert DELETE_NOTE in item


def test_the_rows_delete_says_once_it_is_a_soft_delete_and_so_does_the_undo_notice(
    alice: Client,
) -> None:
    listed = body(alice.get(url("source_target")))
    assert listed.count('form="item-delete" name="item"') == 2  # laptop and VPN rows
    assert listed.count(DELETE_NOTE) == 1  # beside the list, not per row

    deleted = alice.post(
        reverse("source_delete", args=["memory_api"]), {"target": HELPDESK, "item": LAPTOP}
    )

    page = body(alice.get(deleted["Location"]))
    notice = page.split('class="change-notice undo-notice"')[1].split("</div>")[0]
    assert f"Deleted {LAPTOP}." in notice and DELETE_NOTE in notice


def test_the_workspaces_shared_memory_is_shown_read_only(alice: Client) -> None:
    section = page_text(
        alice.get(reverse("source_section", args=["memory_api"]), headers={"HX-Request": "true"})
    )
    assert "Shared across the workspace" in section
    shared = alice.get(url("source_target", target="shared"))
    text = page_text(shared)
    assert "vpn.contoso.com" in text and SHARED_READ_ONLY in text
    assert "/memory_api/delete" not in body(shared) and "/memory_api/edit" not in body(shared)

    refused = alice.post(
        reverse("source_delete", args=["memory_api"]),
        {"target": "shared", "item": "0a9e0001-0000-4000-8000-000000000001"},
    )
    assert refused.status_code == 403
    shared_item = {"target": "shared", "item": "0a9e0001-0000-4000-8000-000000000001"}
    resolve = reverse("source_resolve", args=["memory_api"])
    assert alice.post(resolve, {**shared_item, "version": "v", "keep": "0"}).status_code == 403


def test_on_enterprise_the_shared_memory_holds_the_institutional_too(alice: Client) -> None:
    shared = page_text(alice.get(url("source_target", target="shared")))
    assert "Economy class for flights" in shared and CORE not in shared


def test_on_core_enterprise_memory_is_one_sentence_never_a_refusal(
    alice: Client, settings, tmp_path: Path
) -> None:
    core = emulator_module.start(home=tmp_path, edition="core")
    settings.MEMORY_API_BASE_URL = core.url
    backend_for.cache_clear()
    try:
        section = page_text(
            alice.get(
                reverse("source_section", args=["memory_api"]), headers={"HX-Request": "true"}
            )
        )
        shared = alice.get(url("source_target", target="shared"))
    finally:
        core.stop()

    assert CORE in section
    assert shared.status_code == 200
    text = page_text(shared)
    assert CORE in text and "vpn.contoso.com" in text
    assert "Economy class for flights" not in text
    assert "enterprise_required" not in text and "forbidden" not in text.lower()


# --- support's deletion request ---------------------------------------------------------


@pytest.fixture
def carol(memory_api, carol: Client, monkeypatch: pytest.MonkeyPatch) -> Client:
    """Carol, whose look-up of alice's object id Graph would answer (the integration tests
    run it against the devstack IdP)."""
    known = {
        "alice@contoso.com": ALICE_OID,
        "bob@contoso.com": "b0b00000-0000-4000-8000-000000000002",
    }
    monkeypatch.setattr(Directory, "object_id", lambda self, upn: known[upn])
    return carol


def _as_runtime(
    base_url: str, home: Path, upn: str, about: str, content: str, agent: str | None = HELPDESK
) -> None:
    """An agent writing through the memory-api as the workspace's runtime, with the
    person's conversation proof: what a live agent does while the portal works. Without
    `agent`, a memory no agent is named on (`scope.agent` is optional)."""
    pki, user = ensure_pki(home), SETTINGS.virtual_user_id(upn)
    scope = {"virtual_user_id": user} | ({"agent": agent} if agent else {})
    response = requests.post(
        f"{base_url}/api/v1/memories",
        json={
            "workspace_id": SETTINGS.workspace.uid,
            "scope": scope,
            "type": "fact",
            "about": about,
            "content": content,
        },
        headers={
            "Authorization": f"Bearer {service_account_token(pki, SETTINGS, SETTINGS.accounts['runtime'])}",
            "X-Omnia-Subject-Proof": subject_proof(pki, SETTINGS, user),
        },
        timeout=10,
    )
    assert response.status_code in (200, 201), response.text


def _memory_api_rows(html: str) -> list[list[str]]:
    return [row for row in table_rows(html) if row and row[0] == TITLE]


def _kept(home: Path, upn: str) -> list[tuple[str, str | None, bool]]:
    """What the emulator's database keeps of the person in this workspace, soft-deleted
    rows included: (id, agent, deleted)."""
    with closing(sqlite3.connect(home / "memory-api.sqlite3")) as db:
        rows = db.execute(
            "SELECT id, agent, deleted_at IS NOT NULL FROM memories"
            " WHERE workspace_id = ? AND virtual_user_id = ? ORDER BY id",
            (SETTINGS.workspace.uid, SETTINGS.virtual_user_id(upn)),
        ).fetchall()
    return [(key, agent, bool(deleted)) for key, agent, deleted in rows]


def test_support_deletion_request_lists_it_then_erases_with_a_read_back(carol: Client) -> None:
    from tests.views.test_support import clear, export, start

    request_url = start(carol)
    before = _memory_api_rows(body(carol.get(request_url)))
    assert [row[1:3] for row in before] == [
        ["What benefits-assistant remembers", "to erase"],
        ["What it-helpdesk remembers", "to erase"],
    ]
    archive = export(carol, request_url)
    assert [n for n in archive.namelist() if n.startswith("memory_api/")] == [
        "memory_api/benefits-assistant.md",
        "memory_api/it-helpdesk.md",
    ]

    after = _memory_api_rows(body(carol.get(clear(carol, request_url)["Location"])))

    assert [row[1:3] for row in after] == [
        ["What benefits-assistant remembers", "erased"],
        ["What it-helpdesk remembers", "erased"],
    ]
    assert all("0 left when read back" in row[-1] for row in after)


def test_supports_overview_counts_her_memories_not_the_workspaces_shared_ones(
    carol: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shared rows are not kept about alice: support's overview names them without a
    count (and without reading them past the listing), as her export and erasure leave
    them out."""
    from memory_ui.sources.memory_api.client import MemoryApiClient
    from tests.views.test_support import look_up

    reads = []
    memories = MemoryApiClient.memories

    def recorded(self, user, agent, cursor=None, shared=False):
        reads.append(shared)
        return memories(self, user, agent, cursor, shared=shared)

    monkeypatch.setattr(MemoryApiClient, "memories", recorded)
    page = body(look_up(carol))

    rows = {row[0]: row[1:] for row in table_rows(page)}
    assert rows["What it-helpdesk remembers"][0].isdigit()
    assert rows["What benefits-assistant remembers"][0].isdigit()
    assert rows["Shared across the workspace"] == [
        "Shared with others, not kept about alice@contoso.com alone: "
        "not counted, exported or erased here."
    ]
    assert reads.count(True) == 1  # the listing of her agents only, not the shared rows
    # What she deleted is still kept by the service: the counts say they leave it out.
    assert "counted here is what it lists, not what alice@contoso.com deleted" in page_text(
        look_up(carol)
    )


def test_a_read_back_that_finds_memories_left_says_partly(
    carol: Client, memory_api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent writes about alice between the erasure and its read-back: the row says
    what was left, never "erased" (fails if the read-back is not made)."""
    from memory_ui.sources.memory_api.client import MemoryApiClient
    from tests.views.test_support import clear, export, start

    erase = MemoryApiClient.erase

    def erase_then_an_agent_writes(self, user: str, agent: str | None = None) -> int:
        erased = erase(self, user, agent)
        if agent == HELPDESK:
            _as_runtime(memory_api, tmp_path, "alice@contoso.com", "monitor", "Uses two monitors.")
        return erased

    monkeypatch.setattr(MemoryApiClient, "erase", erase_then_an_agent_writes)
    request_url = start(carol)
    export(carol, request_url)

    after = _memory_api_rows(body(carol.get(clear(carol, request_url)["Location"])))

    assert [row[1:3] for row in after] == [
        ["What benefits-assistant remembers", "erased"],
        ["What it-helpdesk remembers", "partly"],
    ]
    assert "1 left when read back" in after[1][-1]


def test_an_agent_named_in_the_url_only_narrows_her_own_memories(alice: Client) -> None:
    """The target is not looked up with a call (the page's one call is its list): another
    agent's name shows none of hers, and never anyone else's."""
    page = page_text(alice.get(url("source_target", target="travel-planner")))
    assert "ThinkPad" not in page and "step-by-step" not in page and "HMO" not in page


def test_an_agent_whose_memories_she_all_deleted_is_still_erased(
    alice: Client, carol: Client, tmp_path: Path
) -> None:
    """Her pages list live memories only, but the service keeps the soft-deleted rows
    (M16): the request finds the agent in the export, erases it and reads it back (fails
    if the targets come from the listing)."""
    from tests.views.test_support import clear, export, start

    bobs = _kept(tmp_path, "bob@contoso.com")
    for key in BENEFITS_MEMORIES:
        deleted = alice.post(
            reverse("source_delete", args=["memory_api"]), {"target": BENEFITS, "item": key}
        )
        assert deleted.status_code == 302
    section = alice.get(
        reverse("source_section", args=["memory_api"]), headers={"HX-Request": "true"}
    )
    assert "Benefits Assistant" not in page_text(section)  # her pages: live memories only
    assert [k for k, agent, gone in _kept(tmp_path, "alice@contoso.com") if gone] == list(
        BENEFITS_MEMORIES
    )

    request_url = start(carol)
    before = _memory_api_rows(body(carol.get(request_url)))
    assert [row[1:3] for row in before] == [
        [f"What {BENEFITS} remembers", "to erase"],
        [f"What {HELPDESK} remembers", "to erase"],
    ]
    archive = export(carol, request_url)
    benefits = archive.read(f"memory_api/{BENEFITS}.md").decode()
    assert benefits.count("(still held by the service)") == 2

    after = _memory_api_rows(body(carol.get(clear(carol, request_url)["Location"])))

    assert [row[1:3] for row in after] == [
        [f"What {BENEFITS} remembers", "erased"],
        [f"What {HELPDESK} remembers", "erased"],
    ]
    assert "2 erased; 0 left when read back" in after[0][-1]
    assert _kept(tmp_path, "alice@contoso.com") == []  # the soft-deleted rows too
    assert _kept(tmp_path, "bob@contoso.com") == bobs != []


def test_a_memory_without_an_agent_is_erased_last_and_the_agents_are_not_changed(
    carol: Client, memory_api: str, tmp_path: Path
) -> None:
    """Without an agent the DSAR route and the export cover the whole subject: that target
    is erased after the agents' (fails where it runs first and they read as "changed"),
    its export holds its own memory only, and its read-back is the whole subject's."""
    from tests.views.test_support import clear, export, start

    _as_runtime(memory_api, tmp_path, "alice@contoso.com", "desk", "Sits at desk 4.12.", None)
    bobs = _kept(tmp_path, "bob@contoso.com")
    request_url = start(carol)
    before = _memory_api_rows(body(carol.get(request_url)))
    assert [row[1:3] for row in before] == [
        [f"What {BENEFITS} remembers", "to erase"],
        [f"What {HELPDESK} remembers", "to erase"],
        ["Remembered without an agent", "to erase"],
    ]
    archive = export(carol, request_url)
    unnamed = archive.read("memory_api/-.md").decode()
    assert "Sits at desk 4.12." in unnamed and "ThinkPad" not in unnamed

    after = _memory_api_rows(body(carol.get(clear(carol, request_url)["Location"])))

    assert [row[1:3] for row in after] == [
        [f"What {BENEFITS} remembers", "erased"],
        [f"What {HELPDESK} remembers", "erased"],
        ["Remembered without an agent", "erased"],
    ]
    assert "1 erased; 0 left when read back" in after[2][-1]
    assert _kept(tmp_path, "alice@contoso.com") == []
    assert _kept(tmp_path, "bob@contoso.com") == bobs != []


def test_clearing_the_memories_without_an_agent_waits_for_the_agents(
    alice: Client, memory_api: str, tmp_path: Path
) -> None:
    """The DSAR route cannot name "no agent": clearing that target would erase every
    agent's memories, so it is refused with one sentence while an agent's are held, and
    done once none is (fails where it silently clears every agent)."""
    _as_runtime(memory_api, tmp_path, "alice@contoso.com", "desk", "Sits at desk 4.12.", None)
    clear_url = reverse("source_clear", args=["memory_api"])

    refused = alice.post(clear_url, {"target": "-", "phrase": "clear"})

    assert refused.status_code == 409
    assert OTHERS_HELD in page_text(refused)
    # Named, so an agent no longer listed (every memory of hers deleted) can be found.
    assert f"from {BENEFITS}, {HELPDESK} (deleted ones count" in page_text(refused)
    assert len(_kept(tmp_path, "alice@contoso.com")) == 5
    for agent in (BENEFITS, HELPDESK):
        assert alice.post(clear_url, {"target": agent, "phrase": "clear"}).status_code == 200
    assert [agent for _, agent, _ in _kept(tmp_path, "alice@contoso.com")] == [None]

    cleared = alice.post(clear_url, {"target": "-", "phrase": "clear"})

    assert cleared.status_code == 200
    assert _kept(tmp_path, "alice@contoso.com") == []
    assert len(_kept(tmp_path, "bob@contoso.com")) == 2


def test_the_memories_without_an_agent_are_kept_while_an_agents_are(
    carol: Client, memory_api: str, tmp_path: Path
) -> None:
    """An agent writes after the export: its target is kept as "changed", so the memories
    without an agent, whose erasure is subject-wide, are not erased either (fails where
    that erasure takes the kept agent's memories with it)."""
    from tests.views.test_support import clear, export, start

    _as_runtime(memory_api, tmp_path, "alice@contoso.com", "desk", "Sits at desk 4.12.", None)
    request_url = start(carol)
    export(carol, request_url)
    _as_runtime(memory_api, tmp_path, "alice@contoso.com", "plan", "Chose the HMO.", BENEFITS)

    after = _memory_api_rows(body(carol.get(clear(carol, request_url)["Location"])))

    assert [row[1:3] for row in after] == [
        [f"What {BENEFITS} remembers", "changed since the export"],
        [f"What {HELPDESK} remembers", "erased"],
        ["Remembered without an agent", "not possible"],
    ]
    assert "3 of an agent's are still held" in after[2][-1]
    kept = _kept(tmp_path, "alice@contoso.com")
    assert sorted(agent or "" for _, agent, _ in kept) == ["", BENEFITS, BENEFITS, BENEFITS]
