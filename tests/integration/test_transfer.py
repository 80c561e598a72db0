"""Export and import against the real devstack: downloads equal CoreAPI's documents, an
"Export everything" zip restores every document byte for byte, imports preview first,
conflicts and bad uploads change nothing, and every step leaves an audit row."""

from __future__ import annotations

import html
import io
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from devstack.coreapi.app import emulator
from devstack.coreapi.faults import Faults
from memory_ui.sources.coreapi import CallerAuth, agent_object_id
from memory_ui.sources.coreapi import client as coreapi_client
from memory_ui.sources.coreapi.client import CoreAPIClient
from tests.integration.conftest import sign_in
from tests.pages import forms, page_html
from tests.transfers import (
    BAD_ARCHIVES,
    assert_download_token_comes_back_as_a_cookie,
    assert_markdown_download,
    audit,
    export_everything,
    manifest_files,
)

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
AGENTS = ("benefits-assistant", "it-helpdesk", "travel-planner")


@pytest.fixture
def portal_coreapi(fresh_coreapi):
    """These tests change memory: an emulator of their own."""
    return fresh_coreapi


@dataclass
class Api:
    """CoreAPI as alice, directly: to check what the portal did and to act behind its back."""

    client: CoreAPIClient
    auth: CallerAuth
    instance_id: str

    def _target(self, agent: str | None) -> tuple[str, str | None]:
        if agent is None:
            return "user", None
        return "agent", agent_object_id(self.instance_id, agent)

    def doc(self, agent: str | None = None) -> str:
        return self.client.get_memory(self.auth, *self._target(agent)).content_markdown

    def export(self, scope: str, agent: str | None = None) -> str:
        object_id = agent_object_id(self.instance_id, agent) if agent else None
        return self.client.export_memory(self.auth, scope, agent_object_id=object_id)

    def append(self, text: str, agent: str | None = None) -> None:
        scope, object_id = self._target(agent)
        self.client.append_memory(self.auth, scope, text, agent_object_id=object_id)

    def clear(self, agent: str | None = None) -> None:
        scope, object_id = self._target(agent)
        self.client.clear_memory(self.auth, scope, agent_object_id=object_id)

    def everything(self) -> dict[str | None, str]:
        return {agent: self.doc(agent) for agent in (None, *AGENTS)}


@pytest.fixture
def api(portal_coreapi, coreapi_tokens, demo) -> Iterator[Api]:
    client = CoreAPIClient(portal_coreapi.url, demo.instance_id)
    yield Api(client, CallerAuth(coreapi_tokens.delegated("alice@contoso.com")), demo.instance_id)
    client.close()


@pytest.fixture
def faults(portal_coreapi, settings) -> Iterator[Faults]:
    settings.COREAPI_GET_RETRIES = 0  # a failing GET fails at once
    coreapi_client.get_client.cache_clear()
    app = emulator(portal_coreapi)
    app.faults = Faults()
    yield app.faults
    app.faults = Faults()


def page_text(response) -> str:
    """What a person reads: tags dropped, entities decoded, line breaks collapsed."""
    text = html.unescape(re.sub(r"<[^>]+>", "", response.content.decode()))
    return re.sub(r"[ \t\r\n]+", " ", text)


def hidden_import(response) -> dict[str, str]:
    """The confirmation form of an import preview, as the browser would send it."""
    body = response.content.decode()
    text = re.search(r'<textarea name="text" hidden>\n(.*?)</textarea>', body, re.DOTALL)
    version = re.search(r'name="version" value="([^"]*)"', body)
    source = re.search(r'name="source" value="([^"]*)"', body)
    submission = re.search(r'name="submission" value="([^"]*)"', body)
    assert text and version and source and submission, body[:2000]
    return {
        "text": html.unescape(text[1]),
        "version": html.unescape(version[1]),
        "source": html.unescape(source[1]),
        "submission": submission[1],
    }


def md_file(text: str | bytes, name: str = "notes.md") -> SimpleUploadedFile:
    data = text.encode() if isinstance(text, str) else text
    return SimpleUploadedFile(name, data, content_type="text/markdown")


# --- export ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "scope", "agent", "filename"),
    [
        ("/memory/user/export", "user", None, "memory-user"),
        (
            "/memory/agents/travel-planner/export",
            "agent",
            "travel-planner",
            "memory-agent-travel-planner",
        ),
        (
            "/memory/agents/travel-planner/combined/export",
            "combined",
            "travel-planner",
            "memory-combined-travel-planner",
        ),
    ],
)
def test_markdown_exports_are_coreapis_documents(
    alice: Client, api: Api, url, scope, agent, filename
):
    response = alice.get(url)
    assert_markdown_download(response, filename)
    expected = api.export(scope, agent)
    assert expected.strip()
    assert response.content == expected.encode()
    (event,) = audit("export", scope=scope)
    assert event.outcome == "ok"
    assert event.agent_name == (agent or "")
    assert event.bytes_before == len(expected.encode())


def test_export_links_are_on_the_memory_pages_and_the_dashboard(alice: Client):
    user_page = alice.get("/memory/user").content.decode()
    assert 'href="/memory/user/export"' in user_page and 'href="/memory/user/import"' in user_page
    agent_page = alice.get("/memory/agents/it-helpdesk").content.decode()
    assert 'href="/memory/agents/it-helpdesk/export"' in agent_page
    assert 'href="/memory/agents/it-helpdesk/import"' in agent_page
    combined = alice.get("/memory/agents/it-helpdesk/combined").content.decode()
    assert 'href="/memory/agents/it-helpdesk/combined/export"' in combined
    dashboard = alice.get("/").content.decode()
    assert 'action="/export/everything"' in dashboard and 'href="/import"' in dashboard


@pytest.mark.parametrize(
    "url",
    [
        "/memory/agents/travel-planner/export",
        "/memory/agents/travel-planner/combined/export",
        "/memory/agents/travel-planner/import",
        "/memory/agents/finance-insights/export",
    ],
)
def test_bob_cannot_export_or_import_agents_he_cannot_read(bob: Client, url):
    assert bob.get(url).status_code == 404
    assert not audit("export")


def test_a_download_token_comes_back_as_a_cookie(alice: Client):
    assert_download_token_comes_back_as_a_cookie(alice)


def test_a_failed_export_is_an_error_page_and_audited(alice: Client, faults: Faults):
    faults.path_regex = r"memory/export"
    faults.error_rate = 1.0
    response = alice.get("/memory/agents/it-helpdesk/export")
    assert response.status_code == 503
    assert "Content-Disposition" not in response
    text = page_text(response)
    assert "CoreAPI is unavailable, try again." in text and "Nothing was downloaded." in text
    (event,) = audit("export")
    assert event.outcome == "error" and event.agent_name == "it-helpdesk"


def _export_everything(client: Client) -> tuple[bytes, zipfile.ZipFile]:
    data = export_everything(client)
    return data, zipfile.ZipFile(io.BytesIO(data))


def test_export_everything_holds_every_document_and_a_manifest(alice: Client, api: Api):
    api.clear("benefits-assistant")  # empty documents are exported too
    _, archive = _export_everything(alice)
    entries = manifest_files(archive, AGENTS)
    for agent, entry in entries.items():
        body = archive.read(entry["path"])
        assert body == api.export("agent" if agent else "user", agent).encode()
        assert entry["bytes"] == len(body)
        assert entry["updated_on"]
    assert entries["benefits-assistant"]["bytes"] == 0
    assert entries["travel-planner"]["agent_object_id"].endswith("/agents/travel-planner")
    assert sorted(e.agent_name for e in audit("export")) == ["", *AGENTS]


def test_export_everything_fails_whole_when_coreapi_fails(alice: Client, faults: Faults):
    faults.path_regex = r"memory/export.*travel-planner"
    faults.error_rate = 1.0
    response = alice.get("/export/everything")
    assert response.status_code == 503
    assert not response.streaming
    assert "Nothing was downloaded." in page_text(response)
    assert [e.outcome for e in audit("export", agent_name="travel-planner")] == ["error"]


# --- restoring "Export everything" --------------------------------------------------------


def _upload_archive(client: Client, data: bytes, name: str = "export.zip", **extra):
    return client.post(
        "/import/archive",
        {"archive": SimpleUploadedFile(name, data, content_type="application/zip")},
        **extra,
    )


def _plan(client: Client, preview_url: str) -> tuple[str, dict[str, str], str]:
    """The apply URL, the version of each memory shown, and the page."""
    page = client.get(preview_url)
    assert page.status_code == 200, page.content[:2000]
    body = page.content.decode()
    form = next(f for f in forms(body) if f.action.endswith("/apply"))
    versions = {
        k.removeprefix("version-"): v for k, v in form.fields.items() if k.startswith("version-")
    }
    return form.action, versions, page_text(page)


def test_export_everything_then_clear_then_restore_is_byte_for_byte(alice: Client, api: Api):
    api.append("Ünïcödé ✈️ and a trailing space \n\n\n", "it-helpdesk")
    api.clear("benefits-assistant")
    before = api.everything()
    data, _ = _export_everything(alice)
    for agent in (None, *AGENTS):
        api.clear(agent)
    api.append("- garbage that the restore must remove", "travel-planner")

    uploaded = _upload_archive(alice, data)
    assert uploaded.status_code == 302
    apply_url, versions, page = _plan(alice, uploaded["Location"])
    assert set(versions) == {"user", *(f"agent:{a}" for a in AGENTS)}
    assert "Travel Planner" in page and "agent-travel-planner.md" in page
    applied = alice.post(
        apply_url,
        {
            "mode": "replace",
            "confirm_replace": "yes",
            "scopes": list(versions),
            **{f"version-{key}": value for key, value in versions.items()},
        },
    )
    assert applied.status_code == 302
    assert api.everything() == before
    result = alice.get(applied["Location"])
    text = page_text(result)
    assert "What happened" in text and "failed." not in text
    assert text.count("done. Replaced") == 3 and "done. Cleared (empty in the archive)" in text
    assert len(audit("import", outcome="ok")) == 4


def test_restore_can_append_instead(alice: Client, api: Api):
    data, _ = _export_everything(alice)
    before, untouched = api.doc("it-helpdesk"), api.doc("travel-planner")
    apply_url, _, _ = _plan(alice, _upload_archive(alice, data)["Location"])
    applied = alice.post(apply_url, {"mode": "append", "scopes": ["agent:it-helpdesk"]})
    assert applied.status_code == 302
    after = api.doc("it-helpdesk")
    assert after.startswith(before.rstrip() + "\n\n## Imported ")
    assert after.endswith(before.strip() + "\n")
    assert api.doc("travel-planner") == untouched  # not chosen


def test_restore_reports_each_failure_and_retries_only_those(
    alice: Client, api: Api, faults: Faults
):
    data, _ = _export_everything(alice)
    api.append("- changed after the export", "it-helpdesk")
    api.append("- changed after the export", "travel-planner")
    apply_url, versions, _ = _plan(alice, _upload_archive(alice, data)["Location"])
    faults.path_regex = r"memory\?scope=agent.*travel-planner"
    faults.error_rate = 1.0
    applied = alice.post(
        apply_url,
        {
            "mode": "replace",
            "confirm_replace": "yes",
            "scopes": ["agent:it-helpdesk", "agent:travel-planner"],
            **{f"version-{key}": value for key, value in versions.items()},
        },
    )
    faults.error_rate = 0.0
    assert applied.status_code == 302
    assert "changed after" not in api.doc("it-helpdesk")
    assert "changed after" in api.doc("travel-planner")
    result = alice.get(applied["Location"])
    text = page_text(result)
    assert "IT Helpdesk: done. Replaced" in text
    assert "Travel Planner: failed. CoreAPI is unavailable, try again." in text
    retry = next(f for f in forms(result.content.decode()) if f.action.endswith("/apply"))
    checked = re.findall(r'name="scopes" value="([^"]+)"[^>]*checked', result.content.decode())
    assert checked == ["agent:travel-planner"]
    retried = alice.post(
        retry.action,
        {
            "mode": "replace",
            "confirm_replace": "yes",
            "scopes": checked,
            "version-agent:travel-planner": retry.fields["version-agent:travel-planner"],
        },
    )
    assert retried.status_code == 302
    assert "changed after" not in api.doc("travel-planner")
    assert audit("import", outcome="error", agent_name="travel-planner")


def test_restore_refuses_forged_or_unreadable_scopes(alice: Client, api: Api, pki):
    data, _ = _export_everything(alice)
    before = api.everything()
    apply_url, versions, _ = _plan(alice, _upload_archive(alice, data)["Location"])
    for scopes in (["agent:finance-insights"], ["combined"], ["user", "agent:nobody"]):
        forged = alice.post(
            apply_url,
            {"mode": "replace", "confirm_replace": "yes", "scopes": scopes, **versions},
        )
        assert forged.status_code == 400
        assert "Nothing was imported." in page_text(forged)
    bad_mode = alice.post(apply_url, {"mode": "overwrite", "scopes": ["user"]})
    assert bad_mode.status_code == 400
    no_confirm = alice.post(
        apply_url,
        {"mode": "replace", "scopes": ["user"], "version-user": versions["user"]},
    )
    assert no_confirm.status_code == 400
    assert api.everything() == before
    assert not audit("import")

    # bob restores alice's export: only what he can use is offered, the rest is skipped.
    bob_client = Client()
    sign_in(bob_client, "bob@contoso.com", str(pki.ca_cert))
    bob_url, bob_versions, page = _plan(bob_client, _upload_archive(bob_client, data)["Location"])
    assert set(bob_versions) == {"user", "agent:it-helpdesk"}
    assert "Skipped: you cannot use this agent" in page
    assert "This export was made for alice@contoso.com" in page
    refused = bob_client.post(bob_url, {"mode": "append", "scopes": ["agent:travel-planner"]})
    assert refused.status_code == 400
    # alice's staged upload is hers alone.
    assert bob_client.get(apply_url.removesuffix("/apply")).status_code == 404
    assert api.everything() == before


def test_a_replace_restore_does_not_overwrite_a_change_made_after_the_preview(
    alice: Client, api: Api
):
    data, _ = _export_everything(alice)
    apply_url, versions, _ = _plan(alice, _upload_archive(alice, data)["Location"])
    api.append("- added after the preview")
    applied = alice.post(
        apply_url,
        {
            "mode": "replace",
            "confirm_replace": "yes",
            "scopes": ["user"],
            **{"version-user": versions["user"]},
        },
    )
    assert "added after the preview" in api.doc()
    assert "Changed since your preview" in page_text(alice.get(applied["Location"]))


@pytest.mark.parametrize(("name", "data", "message"), BAD_ARCHIVES)
def test_bad_archives_are_refused_with_a_message(alice: Client, api: Api, name, data, message):
    before = api.everything()
    response = _upload_archive(alice, data, name, **HTMX)
    assert response.status_code == 400
    assert message in page_text(response)
    assert 'id="archive-upload"' in response.content.decode()
    assert api.everything() == before


def test_an_oversized_archive_is_refused_without_being_stored(alice: Client, settings):
    settings.PORTAL_UPLOAD_MAX_BYTES = 1000  # archives up to 10,000 bytes
    response = _upload_archive(alice, b"PK" + bytes(20_000))
    assert response.status_code == 413
    assert "The archive is too large; the limit is 9.8\xa0KB." in page_text(response)


def test_an_unknown_restore_token_is_not_found(alice: Client):
    response = alice.get("/import/archive/AAAAAAAAAAAAAAAAAAAAAA")
    assert response.status_code == 404
    assert "expired" in page_text(response)


# --- importing one document ---------------------------------------------------------------


def test_import_page_offers_file_and_paste(alice: Client):
    page = alice.get("/memory/agents/travel-planner/import")
    body = page_html(page)
    assert 'enctype="multipart/form-data"' in body
    assert 'action="/memory/agents/travel-planner/import/preview"' in body
    assert 'name="file"' in body and 'name="pasted"' in body
    home = alice.get("/import").content.decode()
    for agent in AGENTS:
        assert f'href="/memory/agents/{agent}/import"' in home


def test_upload_preview_then_append(alice: Client, api: Api):
    before = api.doc()
    text = "# From my notes\r\n\r\n- Likes <b>bold</b> tea 🍵\r\n"
    preview = alice.post("/memory/user/import/preview", {"file": md_file(text), "pasted": ""})
    assert preview.status_code == 200
    body = preview.content.decode()
    assert "<html" in body  # a plain post gets the whole page
    assert "<h1>From my notes</h1>" in body  # rendered...
    assert "<b>bold</b>" not in body  # ...and sanitized
    assert "hx-disable" in body
    assert 'class="diff-added"' in body
    assert api.doc() == before  # a preview changes nothing
    form = hidden_import(preview)
    assert form["text"] == "# From my notes\n\n- Likes <b>bold</b> tea 🍵\n"
    assert form["source"] == "notes.md"
    done = alice.post("/memory/user/import/confirm", {**form, "mode": "append"})
    assert done.status_code == 302 and done["Location"] == "/memory/user"
    after = api.doc()
    assert after.startswith(before.rstrip() + "\n\n## Imported ")
    assert after.endswith("\n\n# From my notes\n\n- Likes <b>bold</b> tea 🍵\n")
    assert "Imported notes.md into your shared memory" in page_text(alice.get("/memory/user"))
    (event,) = audit("import")
    assert event.outcome == "ok" and event.scope == "user"
    assert event.bytes_after == len(after.encode())


def test_an_import_confirmed_twice_is_imported_once(alice: Client, api: Api):
    preview = alice.post("/memory/user/import/preview", {"pasted": "- Imported once\n"})
    form = hidden_import(preview)
    assert len(form["submission"]) >= 16
    first = alice.post("/memory/user/import/confirm", {**form, "mode": "append"})
    second = alice.post("/memory/user/import/confirm", {**form, "mode": "append"})
    assert first.status_code == second.status_code == 302
    assert api.doc().count("- Imported once") == 1
    assert "it was imported once" in page_text(alice.get("/memory/user"))


def test_paste_preview_then_replace_with_htmx(alice: Client, api: Api):
    pasted = "- Only this now\r\n- And this"
    preview = alice.post("/memory/agents/it-helpdesk/import/preview", {"pasted": pasted}, **HTMX)
    body = page_html(preview)
    assert "<html" not in body and body.lstrip().startswith('<div id="import-flow"')
    assert "Vary" in preview and "HX-Request" in preview["Vary"]
    form = hidden_import(preview)
    assert form["source"] == "pasted text"
    unconfirmed = alice.post(
        "/memory/agents/it-helpdesk/import/confirm", {**form, "mode": "replace"}, **HTMX
    )
    assert unconfirmed.status_code == 400
    assert "tick “I understand”" in page_text(unconfirmed)
    assert "Remove-VpnConnection" in api.doc("it-helpdesk")
    done = alice.post(
        "/memory/agents/it-helpdesk/import/confirm",
        {**form, "mode": "replace", "confirm_replace": "yes"},
        **HTMX,
    )
    assert done.status_code == 200 and done["HX-Redirect"] == "/memory/agents/it-helpdesk"
    assert api.doc("it-helpdesk") == "- Only this now\n- And this"
    (event,) = audit("import")
    assert event.agent_name == "it-helpdesk" and event.outcome == "ok"


def test_replace_after_a_change_behind_the_previews_back_is_a_conflict(alice: Client, api: Api):
    preview = alice.post("/memory/user/import/preview", {"pasted": "- My own version\n"})
    form = hidden_import(preview)
    api.append("- Written by an agent meanwhile")
    conflict = alice.post(
        "/memory/user/import/confirm", {**form, "mode": "replace", "confirm_replace": "yes"}
    )
    assert conflict.status_code == 409
    text = page_text(conflict)
    assert "changed since the preview, so nothing was replaced" in text
    assert "Written by an agent meanwhile" in text  # the diff shows what would be lost
    kept = hidden_import(conflict)
    assert kept["text"] == "- My own version\n"  # the import is kept
    assert kept["version"] != form["version"]
    assert "Written by an agent meanwhile" in api.doc()
    assert not audit("import")  # nothing was sent to CoreAPI
    again = alice.post(
        "/memory/user/import/confirm", {**kept, "mode": "replace", "confirm_replace": "yes"}
    )
    assert again.status_code == 302
    assert api.doc() == "- My own version\n"
    assert [e.outcome for e in audit("import")] == ["ok"]


LATIN1 = "- Préfère le café à Zürich\n".encode("latin-1")


@pytest.mark.parametrize(
    ("data", "pasted", "status", "message"),
    [
        (md_file(b"\x89PNG\r\n\x1a\n" + bytes(64), "photo.md"), "", 400, "PNG image"),
        (md_file(LATIN1), "", 400, "save the file as UTF-8"),
        (md_file(b""), "", 400, "the text is empty"),
        (None, "   \r\n\t\r\n", 400, "only whitespace"),
        (md_file(b"- a\x00b\n"), "", 400, "NUL"),
        (None, "- a\x00b", 400, "NUL"),
        (md_file(b"- fact\n", "notes.pdf"), "", 400, "choose a .md, .markdown or .txt file"),
        (md_file(b"x" * 1001), "", 413, "The file is 1001\xa0bytes; the limit is 1000\xa0bytes."),
        (None, "é" * 501, 413, "The pasted text is 1002\xa0bytes"),
        (md_file(b"- a\n"), "- b", 400, "Import one at a time"),
        (None, "", 400, "Choose a markdown file or paste some markdown"),
    ],
)
def test_bad_uploads_are_refused_with_a_message_and_nothing_changes(
    alice: Client, api: Api, settings, data, pasted, status, message
):
    settings.PORTAL_UPLOAD_MAX_BYTES = 1000
    before = api.everything()
    fields = {"pasted": pasted, **({"file": data} if data else {})}
    response = alice.post("/memory/agents/travel-planner/import/preview", fields)
    assert response.status_code == status
    text = page_text(response)
    assert message in text
    if pasted:
        assert '<textarea id="import-pasted" name="pasted"' in response.content.decode()
        assert pasted.replace("\r\n", "\n").strip() in text.replace("\r\n", "\n")
    assert api.everything() == before
    assert not audit("import")


def test_a_file_bigger_than_any_upload_is_skipped_not_stored(alice: Client, settings):
    settings.PORTAL_UPLOAD_MAX_BYTES = 100  # anything over 1,000 bytes is never stored
    response = alice.post("/memory/user/import/preview", {"file": md_file(b"x" * 5000)})
    assert response.status_code == 413
    assert "The file is too large; the limit is 100\xa0bytes." in page_text(response)


def test_an_oversized_request_body_gets_a_friendly_400(alice: Client, api: Api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2000
    before = api.doc()
    response = alice.post("/memory/user/import/preview", {"pasted": "x" * 5000})
    assert response.status_code == 400
    assert "could not accept that request" in page_text(response)
    assert api.doc() == before


def test_a_confirmation_is_validated_again(alice: Client, api: Api):
    before = api.everything()
    for fields, status in [
        ({"text": "   ", "mode": "append", "source": "x"}, 400),
        ({"text": "- a\x00", "mode": "append", "source": "x"}, 400),
        ({"text": "- fine\n", "mode": "overwrite", "source": "x"}, 400),
        ({"text": "- fine\n", "mode": "replace", "confirm_replace": "yes", "version": "x"}, 400),
    ]:
        response = alice.post("/memory/user/import/confirm", fields)
        assert response.status_code == status, fields
    assert api.everything() == before
    assert not audit("import")


def test_bob_cannot_import_into_an_agent_he_cannot_read(bob: Client, api: Api):
    before = api.doc("travel-planner")
    preview = bob.post("/memory/agents/travel-planner/import/preview", {"pasted": "- mine"})
    confirm = bob.post(
        "/memory/agents/travel-planner/import/confirm", {"text": "- mine", "mode": "append"}
    )
    assert preview.status_code == 404 and confirm.status_code == 404
    assert api.doc("travel-planner") == before
    assert not audit("import")


def test_a_failed_import_keeps_the_text_and_is_audited(alice: Client, api: Api, faults: Faults):
    preview = alice.post("/memory/user/import/preview", {"pasted": "- keep me\n"})
    form = hidden_import(preview)
    faults.path_regex = r"memory/import"
    faults.error_rate = 1.0
    failed = alice.post("/memory/user/import/confirm", {**form, "mode": "append"})
    faults.error_rate = 0.0
    assert failed.status_code == 503
    assert "Nothing was imported. CoreAPI is unavailable, try again." in page_text(failed)
    assert hidden_import(failed)["text"] == "- keep me\n"
    (event,) = audit("import")
    assert event.outcome == "error" and event.error_status == 500
    assert "keep me" not in api.doc()


def test_when_the_agent_list_fails_the_typed_text_is_still_shown(alice: Client, faults: Faults):
    faults.path_regex = r"completions/agents"
    faults.error_rate = 1.0
    response = alice.post(
        "/memory/agents/travel-planner/import/preview", {"pasted": "- my <draft>"}, **HTMX
    )
    assert response.status_code == 503
    assert response["HX-Retarget"] == "#main" and response["HX-Reselect"] == "#main"
    body = response.content.decode()
    assert "- my &lt;draft&gt;</textarea>" in body
    assert "Nothing was imported." in page_text(response)
