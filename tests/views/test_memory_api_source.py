"""The workspace memory-api through the registry and the generic source pages, against the
memory-api emulator (the source is configured by settings alone, as an operator would):
alice's dashboard section, her agent's page, search, a correction (PATCH) and a soft delete
that offers no Undo."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from devstack import memory_api as emulator_module
from devstack.memory_api.identity import load_settings, write_projected_token, write_pseudonym_key
from devstack.pki import ensure_pki
from memory_ui.models import AuditEvent
from memory_ui.sources import registry
from memory_ui.sources.memory_api import backend_for
from tests.pages import forms
from tests.views import conftest as views
from tests.views.helpers import body, page_text

SETTINGS = load_settings()
HELPDESK = "it-helpdesk"
LAPTOP = "0a1ce001-0000-4000-8000-000000000003"
LAPTOP_TEXT = "Laptop: ThinkPad X1 Carbon, Windows 11, asset tag CT-48213."


@pytest.fixture
def memory_api(settings, fake, tmp_path: Path) -> Iterator[None]:
    server = emulator_module.start(home=tmp_path)
    pki = ensure_pki(tmp_path)
    settings.MEMORY_API_BASE_URL = server.url
    settings.MEMORY_API_WORKSPACE_UID = SETTINGS.workspace.uid
    settings.MEMORY_API_TOKEN_FILE = str(write_projected_token(tmp_path, pki, SETTINGS))
    settings.MEMORY_API_SUBJECT_RULE = "hmac-sha256"
    settings.MEMORY_API_PSEUDONYM_KEY_FILE = str(write_pseudonym_key(tmp_path, SETTINGS))
    settings.PORTAL_MEMORY_SOURCES = ["memory_ui.sources.coreapi", "memory_ui.sources.memory_api"]
    backend_for.cache_clear()
    yield
    server.stop()
    backend_for.cache_clear()


@pytest.fixture
def alice(memory_api, monkeypatch: pytest.MonkeyPatch) -> Client:
    """Alice signed in with her directory object id (the demo data's pseudonyms are made
    from it), not the id the other view tests derive from her UPN."""
    derived = views.identity_for
    oid = "a11ce000-0000-4000-8000-000000000001"
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


def test_a_delete_offers_no_undo(alice: Client) -> None:
    deleted = alice.post(
        reverse("source_delete", args=["memory_api"]), {"target": HELPDESK, "item": LAPTOP}
    )

    assert deleted.status_code == 302
    page = body(alice.get(deleted["Location"]))
    assert LAPTOP_TEXT not in page and ">Undo</button>" not in page
