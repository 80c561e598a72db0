"""A history per memory beyond CoreAPI (issue 29, item 3), against the real devstack: alice,
signed in at the IdP, edits a file of her legacy travel store through the portal and
restores the earlier version, deletes one and brings it back from its store's page (the
legacy store emulator read back through its own API); she corrects a workspace memory-api
memory and restores the earlier version, deletes one and restores it from its History as a
new memory (the memory-api has no undelete: the portal writes it again, and the emulator
still holds the deleted one soft-deleted); and after carol's deletion request no
earlier version of alice's is left in the database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from django.test import Client
from django.urls import reverse

from devstack import memory_api as memory_api_module
from devstack.memory_api.identity import (
    load_settings,
    service_account_token,
    write_projected_token,
    write_pseudonym_key,
)
from devstack.pki import Pki, ensure_pki
from devstack.serve import RunningServer
from memory_ui.models import PriorVersion
from memory_ui.sources.legacy import operations as legacy_ops
from memory_ui.sources.memory_api import backend_for
from memory_ui.sources.memory_api.adapter import RESTORE_NOTE
from tests.conftest import TokenMinter
from tests.devstack.legacy_api import Api
from tests.integration.conftest import sign_in
from tests.integration.test_support import _clear, _export, _request
from tests.pages import Form, forms
from tests.views.helpers import page_text

pytestmark = pytest.mark.django_db

ALICE = "alice@contoso.com"
TRAVEL = "main.agents.travel_planner_memory"
PREFERENCES = "/memories/preferences.md"
PROFILE = "/memories/profile.md"
MEMORY_API = load_settings()
HELPDESK = "it-helpdesk"
LAPTOP = "0a1ce001-0000-4000-8000-000000000003"
LAPTOP_TEXT = "Laptop: ThinkPad X1 Carbon, Windows 11, asset tag CT-48213."
BENEFITS = "benefits-assistant"
CONTACT = "0a1ce001-0000-4000-8000-000000000001"


@pytest.fixture
def stores(settings, fresh_legacy: RunningServer) -> Iterator[RunningServer]:
    settings.LEGACY_STORES_BASE_URL = fresh_legacy.url
    settings.LEGACY_STORES_AGENTS = json.dumps({"travel-planner": TRAVEL})
    legacy_ops.reset_caches()
    yield fresh_legacy
    legacy_ops.reset_caches()


@pytest.fixture
def memory_api(settings, tmp_path: Path, idp: RunningServer) -> Iterator[RunningServer]:
    """The memory-api emulator of this test, set up as the devstack sets it."""
    home = tmp_path / "memory-api"
    server = memory_api_module.start(home=home)
    settings.MEMORY_API_BASE_URL = server.url
    settings.MEMORY_API_WORKSPACE_UID = MEMORY_API.workspace.uid
    settings.MEMORY_API_TOKEN_FILE = str(write_projected_token(home, ensure_pki(home), MEMORY_API))
    settings.MEMORY_API_SUBJECT_RULE = "hmac-sha256"
    settings.MEMORY_API_PSEUDONYM_KEY_FILE = str(write_pseudonym_key(home, MEMORY_API))
    settings.GRAPH_BASE_URL = idp.url
    backend_for.cache_clear()
    yield server
    server.stop()
    backend_for.cache_clear()


def all_kept_by_memory_api(server: RunningServer, home: Path) -> list[dict]:
    """Alice's memories as the memory-api keeps them (soft-deleted ones too), read as the
    portal through the emulator's export."""
    token = service_account_token(ensure_pki(home), MEMORY_API, MEMORY_API.accounts["portal"])
    response = requests.get(
        f"{server.url}/api/v1/memories/export",
        params={
            "workspace": MEMORY_API.workspace.uid,
            "virtual_user_id": MEMORY_API.virtual_user_id(ALICE),
        },
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    response.raise_for_status()
    return response.json()["memories"]


def kept_by_memory_api(server: RunningServer, home: Path, memory_id: str) -> dict:
    return next(m for m in all_kept_by_memory_api(server, home) if m["id"] == memory_id)


def page(source: str, name: str, target: str, item: str = "") -> str:
    url = f"{reverse(name, args=[source])}?target={target}"
    return url + (f"&item={item}" if item else "")


def restore_forms(client: Client, source: str, target: str, item: str) -> list[Form]:
    html = client.get(page(source, "source_history", target, item)).content.decode()
    action = reverse("source_history_restore", args=[source])
    return [f for f in forms(html) if f.action == action]


def edit(client: Client, source: str, target: str, item: str, text: str) -> None:
    html = client.get(page(source, "source_edit", target, item)).content.decode()
    form = next(f for f in forms(html) if f.action.endswith(f"/{source}/edit"))
    saved = client.post(form.action, {**form.fields, "text": text})
    assert saved.status_code == 302, page_text(saved)


def test_alice_restores_an_earlier_version_of_a_legacy_file_and_a_deleted_one(
    alice: Client, stores: RunningServer, coreapi_tokens: TokenMinter
) -> None:
    api = Api(stores.url, coreapi_tokens.legacy())
    original = api.get(TRAVEL, ALICE, PREFERENCES).json()["contents"]
    edit(alice, "legacy", TRAVEL, PREFERENCES, "- Prefers window seats.\n")
    assert "window" in api.get(TRAVEL, ALICE, PREFERENCES).json()["contents"]

    (form,) = restore_forms(alice, "legacy", TRAVEL, PREFERENCES)
    assert alice.post(form.action, form.fields).status_code == 302

    assert api.get(TRAVEL, ALICE, PREFERENCES).json()["contents"] == original

    profile = api.get(TRAVEL, ALICE, PROFILE).json()["contents"]
    deleted = alice.post(
        reverse("source_delete", args=["legacy"]), {"target": TRAVEL, "item": PROFILE}
    )
    assert deleted.status_code == 302
    assert api.get(TRAVEL, ALICE, PROFILE).status_code == 404
    store_page = page_text(alice.get(page("legacy", "source_target", TRAVEL)))
    assert "Deleted by you in the last 30 days" in store_page and PROFILE in store_page

    (form,) = restore_forms(alice, "legacy", TRAVEL, PROFILE)
    assert alice.post(form.action, form.fields).status_code == 302

    assert api.get(TRAVEL, ALICE, PROFILE).json()["contents"] == profile
    assert "Deleted by you" not in page_text(alice.get(page("legacy", "source_target", TRAVEL)))


def test_alice_restores_a_memory_api_correction_and_a_deleted_one_as_a_new_memory(
    alice: Client, memory_api: RunningServer, tmp_path: Path
) -> None:
    home = tmp_path / "memory-api"
    edit(alice, "memory_api", HELPDESK, LAPTOP, "Laptop: Surface Laptop 6.")
    assert kept_by_memory_api(memory_api, home, LAPTOP)["content"] == "Laptop: Surface Laptop 6."

    (form,) = restore_forms(alice, "memory_api", HELPDESK, LAPTOP)
    assert alice.post(form.action, form.fields).status_code == 302

    assert kept_by_memory_api(memory_api, home, LAPTOP)["content"] == LAPTOP_TEXT

    before = kept_by_memory_api(memory_api, home, CONTACT)
    held = {m["id"] for m in all_kept_by_memory_api(memory_api, home)}
    deleted = alice.post(
        reverse("source_delete", args=["memory_api"]), {"target": BENEFITS, "item": CONTACT}
    )
    assert deleted.status_code == 302
    assert kept_by_memory_api(memory_api, home, CONTACT)["deleted_at"]
    target_page = page_text(alice.get(page("memory_api", "source_target", BENEFITS)))
    assert "Deleted by you in the last 30 days" in target_page and CONTACT in target_page
    history = page_text(alice.get(page("memory_api", "source_history", BENEFITS, CONTACT)))
    assert "You · Deleted an entry" in history
    assert RESTORE_NOTE in history

    (form,) = restore_forms(alice, "memory_api", BENEFITS, CONTACT)
    restored = alice.post(form.action, form.fields)

    assert restored.status_code == 302
    (new,) = [m for m in all_kept_by_memory_api(memory_api, home) if m["id"] not in held]
    assert (new["content"], new["agent"], new["type"], new["about"]) == (
        before["content"],
        BENEFITS,
        before["type"],
        before["about"],
    )
    assert new["deleted_at"] is None
    assert kept_by_memory_api(memory_api, home, CONTACT)["deleted_at"]  # stays soft-deleted
    assert restored["Location"] == page("memory_api", "source_history", BENEFITS, new["id"])
    landed = page_text(alice.get(restored["Location"]))
    assert f"Restored {CONTACT} as {new['id']}" in landed and before["content"] in landed


@pytest.mark.changes_memory
def test_a_deletion_request_leaves_no_earlier_version_of_alices(
    alice: Client,
    stores: RunningServer,
    memory_api: RunningServer,
    pki: Pki,
) -> None:
    edit(alice, "legacy", TRAVEL, PREFERENCES, "- Prefers window seats.\n")
    edit(alice, "memory_api", HELPDESK, LAPTOP, "Laptop: Surface Laptop 6.")
    keys = set(PriorVersion.objects.filter(upn=ALICE).values_list("target_key", flat=True))
    assert {key.split(":")[0] for key in keys} == {"legacy", "memory_api"}

    carol = Client()  # a session of her own: the `carol` fixture would sign alice's client out
    sign_in(carol, "carol@contoso.com", str(pki.ca_cert))
    request_url = _request(carol, ALICE, ["all"])
    _export(carol, request_url)
    assert _clear(carol, request_url).status_code == 302

    assert not PriorVersion.objects.filter(upn=ALICE).exists()
