"""Changing memory through the portal against the real devstack: delete with Undo, edit
with preview and conflicts, append, clear and clear everything. Every test here changes
memory, so each runs on an emulator of its own (`fresh_coreapi`); changes "behind the
portal's back" (an agent writing meanwhile) go straight to CoreAPI with alice's token."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from devstack.coreapi.app import emulator
from devstack.coreapi.faults import Faults
from memory_ui import auth
from memory_ui.documents import parse_document, remove_entry
from memory_ui.models import AuditEvent
from memory_ui.sources.coreapi import CallerAuth, agent_object_id
from memory_ui.sources.coreapi import client as coreapi_client
from memory_ui.sources.coreapi.client import CoreAPIClient
from tests.integration.conftest import sign_in
from tests.pages import Form, forms, page_html, submitted

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def portal_coreapi(fresh_coreapi):
    return fresh_coreapi


@dataclass
class Agent:
    """CoreAPI as an agent acting for alice reaches it: not through the portal."""

    client: CoreAPIClient
    auth: CallerAuth
    instance_id: str

    def _where(self, agent: str | None) -> tuple[str, str | None]:
        return ("agent", agent_object_id(self.instance_id, agent)) if agent else ("user", None)

    def text(self, agent: str | None = None) -> str:
        scope, object_id = self._where(agent)
        return self.client.get_memory(self.auth, scope, object_id).content_markdown

    def append(self, text: str, agent: str | None = None, reason: str | None = None) -> None:
        scope, object_id = self._where(agent)
        self.client.append_memory(self.auth, scope, text, agent_object_id=object_id, reason=reason)

    def replace(self, text: str, agent: str | None = None) -> None:
        scope, object_id = self._where(agent)
        self.client.import_memory(self.auth, scope, text, mode="replace", agent_object_id=object_id)


@pytest.fixture
def agent(fresh_coreapi, coreapi_tokens, settings) -> Iterator[Agent]:
    client = CoreAPIClient(fresh_coreapi.url, settings.COREAPI_INSTANCE_ID)
    yield Agent(
        client,
        CallerAuth(coreapi_tokens.delegated("alice@contoso.com")),
        settings.COREAPI_INSTANCE_ID,
    )
    client.close()


@pytest.fixture
def faults(fresh_coreapi, settings) -> Iterator[Faults]:
    settings.COREAPI_GET_RETRIES = 0
    coreapi_client.get_client.cache_clear()
    app = emulator(fresh_coreapi)
    app.faults = Faults()
    yield app.faults
    app.faults = Faults()


def _form(html: str, action: str, **fields: str) -> Form:
    """The form posting to `action` that sends `fields`, with the button that sends them."""
    for form in forms(html):
        if form.action != action:
            continue
        for button in [None, *form.buttons]:
            data = submitted(form, button)
            if all(data.get(k) == v for k, v in fields.items()):
                return Form(form.action, form.method, data, form.buttons)
    raise AssertionError(f"No form posting to {action} with {fields}")


def _entry_delete(page: str, index: str) -> Form:
    """The memory page's one delete form as the Delete in an entry's Actions menu sends it:
    with the index portal.js gives it for the entry whose Actions opened the menu (as a
    browser without JavaScript does it: test_delete_entry_without_js_removes_exactly_that_entry)."""
    assert f'/{index}" class="entry-actions"' in page, "no Actions for that entry"
    form = _form(page, "/memory/entries/delete")
    return Form(form.action, form.method, {**form.fields, "index": index}, form.buttons)


def _textarea(html: str, name: str) -> str:
    match = re.search(rf'<textarea[^>]*name="{name}"[^>]*>\n(.*?)</textarea>', html, re.S)
    assert match, f"no textarea {name}"
    return match[1]


def _unescape(text: str) -> str:
    import html

    return html.unescape(text)


def _events(action: str, outcome: str = "ok") -> int:
    return AuditEvent.objects.filter(action=action, outcome=outcome).count()


# --- delete an entry, Undo ------------------------------------------------------------


def test_delete_entry_without_js_removes_exactly_that_entry(alice: Client, agent: Agent):
    before = agent.text()
    # The entry's Actions link is its own page, with a Delete form for it.
    page = alice.get("/memory/user").content.decode()
    actions = re.search(r'href="(/memory/user/1)" class="entry-actions"', page)
    assert actions, "no Actions for that entry"
    entry_page = alice.get(actions[1], follow=True).content.decode()
    form = _form(entry_page, "/memory/entries/delete", index="1")
    assert form.fields["scope"] == "user" and "agent" not in form.fields

    response = alice.post(form.action, form.fields)

    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert location.path == "/memory/user"
    after = agent.text()
    assert after == remove_entry(before, 1)
    entries = parse_document(before).entries
    assert entries[0].source in after and entries[2].source.rstrip() in after
    assert "Writes in British English" not in after
    assert _events("delete-entry") == 1

    shown = alice.get(response["Location"]).content.decode()
    assert shown.count('class="change-notice undo-notice"') == 1 and "toast-success" not in shown
    undo = _form(shown, "/memory/undo", token=parse_qs(location.query)["undo"][0])
    assert undo.fields["scope"] == "user"


def test_delete_entry_with_htmx_swaps_the_list_and_undo_restores_byte_for_byte(
    alice: Client, agent: Agent
):
    before = agent.text("benefits-assistant")
    page = alice.get("/memory/agents/benefits-assistant").content.decode()
    form = _entry_delete(page, "0")
    assert form.fields["agent"] == "benefits-assistant"

    response = alice.post(form.action, form.fields, **HTMX)

    html = page_html(response)
    assert html.lstrip().startswith('<section id="memory-content"')
    assert "PPO Plus" not in agent.text("benefits-assistant")
    assert "401(k)" in html and "PPO Plus" not in html
    assert html.count('class="change-notice undo-notice"') == 1 and "toast-success" not in html
    undo = _form(html, "/memory/undo")

    restored = alice.post(undo.action, undo.fields, **HTMX)

    assert restored.status_code == 200
    assert agent.text("benefits-assistant") == before
    assert "PPO Plus" in restored.content.decode()
    assert _events("delete-entry") == 1 and _events("undo") == 1
    # An Undo is used once.
    again = alice.post(undo.action, undo.fields)
    assert again.status_code == 410
    assert agent.text("benefits-assistant") == before


def test_undo_without_js_redirects_back(alice: Client, agent: Agent):
    before = agent.text("travel-planner")
    page = alice.get("/memory/agents/travel-planner").content.decode()
    deleted = alice.post("/memory/entries/delete", _entry_delete(page, "1").fields)
    shown = alice.get(deleted["Location"]).content.decode()

    response = alice.post("/memory/undo", _form(shown, "/memory/undo").fields)

    assert response.status_code == 302 and response["Location"] == "/memory/agents/travel-planner"
    assert agent.text("travel-planner") == before
    assert "Restored what you deleted." in alice.get(response["Location"]).content.decode()


def test_undo_after_a_concurrent_change_loses_nothing(alice: Client, agent: Agent):
    page = alice.get("/memory/user").content.decode()
    deleted = alice.post("/memory/entries/delete", _entry_delete(page, "1").fields, **HTMX)
    undo = _form(deleted.content.decode(), "/memory/undo")
    # A real overlap (an entry rewritten; an append alone is merged: test_merging.py).
    agent.replace(agent.text().replace("Prefers concise answers", "Prefers short answers"))
    agent.append("- Likes window seats.", reason="Meanwhile")
    meanwhile = agent.text()

    response = alice.post(undo.action, undo.fields, **HTMX)

    html = response.content.decode()
    assert response.status_code == 409
    assert agent.text() == meanwhile  # the agent's note kept, nothing restored over it
    assert "Likes window seats." in html
    assert "Add it back as a new note" in html
    removed = _unescape(_textarea(html, "content"))
    assert "Writes in British English" in removed
    readd = _form(html, "/memory/append")

    added = alice.post(readd.action, {**readd.fields, "content": removed}, **HTMX)

    assert added.status_code == 200
    final = agent.text()
    assert final.startswith(meanwhile.rstrip())
    assert re.search(r"## Added \S+Z — Restored after deleting it\n\n- Writes in British", final)


def test_delete_from_a_stale_page_is_a_conflict(alice: Client, agent: Agent):
    page = alice.get("/memory/user").content.decode()
    # A real overlap (an entry rewritten; an append alone is merged: test_merging.py).
    agent.replace(agent.text().replace("dates as 2 October 2026", "dates as 2 Oct 2026"))
    agent.append("- Has a dog called Biscuit.")
    meanwhile = agent.text()

    for headers in ({}, HTMX):
        response = alice.post(
            "/memory/entries/delete",
            _entry_delete(page, "0").fields,
            **headers,
        )
        assert response.status_code == 409
        assert "Biscuit" in response.content.decode()  # the current document is shown
        assert "changed since you opened it" in response.content.decode()
    assert agent.text() == meanwhile
    assert _events("delete-entry") == 0


@pytest.mark.parametrize(
    ("field", "value"), [("version", "not-a-version"), ("index", "99"), ("index", "-1")]
)
def test_bad_version_or_index_is_refused(alice: Client, agent: Agent, field: str, value: str):
    before = agent.text()
    page = alice.get("/memory/user").content.decode()
    form = _entry_delete(page, "0")

    response = alice.post(form.action, {**form.fields, field: value})

    assert response.status_code == 400
    assert "Nothing was deleted" in response.content.decode()
    assert agent.text() == before


def test_delete_one_list_item_of_an_unstructured_document(alice: Client, agent: Agent):
    agent.replace("# Notes\n\n- one\n- two\n  - two and a half\n- three\n", "it-helpdesk")
    page = alice.get("/memory/agents/it-helpdesk").content.decode()
    assert "Delete single items" in page
    item_forms = [f for f in forms(page) if f.action == "/memory/items/delete"]
    assert len(item_forms) == 4  # nested items too
    two = item_forms[1]
    assert (two.fields["start"], two.fields["end"]) == ("3", "5")

    # A range that is not exactly a list item is refused.
    forged = alice.post(two.action, {**two.fields, "start": "0", "end": "1"})
    assert forged.status_code == 400

    response = alice.post(two.action, two.fields, **HTMX)

    assert response.status_code == 200
    assert agent.text("it-helpdesk") == "# Notes\n\n- one\n- three\n"
    undo = _form(response.content.decode(), "/memory/undo")
    alice.post(undo.action, undo.fields)
    assert agent.text("it-helpdesk") == "# Notes\n\n- one\n- two\n  - two and a half\n- three\n"


# --- edit ----------------------------------------------------------------------------


def test_preview_renders_the_draft_safely(alice: Client):
    draft = "<script>alert(1)</script>\n\n**bold** [x](javascript:alert(1))"
    response = alice.post("/memory/edit/preview", {"content": draft}, **HTMX)
    html = page_html(response)
    assert html.lstrip().startswith('<section id="edit-preview"')
    assert "<script" not in html
    assert "href" not in html  # a javascript: link stays text
    assert "&lt;script&gt;" in html and "<strong>bold</strong>" in html
    assert "hx-disable" in html

    too_big = alice.post("/memory/edit/preview", {"content": "x" * (2 * 1024 * 1024 + 1)}, **HTMX)
    assert too_big.status_code == 400
    assert "the limit is 2,097,152 bytes" in too_big.content.decode()


def test_preview_needs_sign_in_and_csrf(client: Client, alice: Client):
    strict = Client(enforce_csrf_checks=True)
    strict.cookies = alice.cookies
    assert strict.post("/memory/edit/preview", {"content": "x"}).status_code == 403
    anonymous = Client()
    response = anonymous.post("/memory/edit/preview", {"content": "x"})
    assert response.status_code == 302 and response["Location"].startswith("/auth/login")


def _edit_fields(html: str) -> dict[str, str]:
    return _form(html, "/memory/edit").fields


def test_edit_and_save(alice: Client, agent: Agent):
    page = alice.get("/memory/edit", {"scope": "agent", "agent": "travel-planner"})
    html = page_html(page)
    original = agent.text("travel-planner")
    assert _unescape(_textarea(html, "content")) == original
    assert 'hx-trigger="input changed delay:400ms"' in html
    fields = _edit_fields(html)
    assert fields["base"] == original

    edited = original.replace("aisle seats", "window seats").replace("\n", "\r\n")
    response = alice.post("/memory/edit", {**fields, "content": edited, "action": "save"})

    assert response.status_code == 302
    assert response["Location"] == "/memory/agents/travel-planner"
    assert agent.text("travel-planner") == original.replace("aisle seats", "window seats")
    assert _events("edit") == 1


def test_edit_save_with_htmx_redirects_and_empty_text_clears(alice: Client, agent: Agent):
    fields = _edit_fields(alice.get("/memory/edit", {"scope": "user"}).content.decode())
    response = alice.post("/memory/edit", {**fields, "content": "", "action": "save"}, **HTMX)
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/memory/user"
    assert agent.text() == ""
    # The message waits for the page htmx goes to.
    assert "Saved: your shared memory is now empty." in alice.get("/memory/user").content.decode()


def test_no_js_preview_keeps_the_draft(alice: Client, agent: Agent):
    fields = _edit_fields(alice.get("/memory/edit", {"scope": "user"}).content.decode())
    response = alice.post(
        "/memory/edit", {**fields, "content": "# Draft\n\n*mine*", "action": "preview"}
    )
    html = page_html(response)
    assert _unescape(_textarea(html, "content")) == "# Draft\n\n*mine*"
    assert "<em>mine</em>" in html
    assert "# Draft" not in agent.text()


def _conflict(alice: Client, agent: Agent) -> tuple[dict[str, str], str, str]:
    """alice edits her memory while something else rewrites an entry she saw and an agent
    appends (a real overlap: appends alone are merged); returns the edit fields, her draft
    and the conflict page."""
    html = alice.get("/memory/edit", {"scope": "user"}).content.decode()
    fields = _edit_fields(html)
    draft = fields["base"].replace("Prefers concise answers", "Prefers detailed answers")
    agent.replace(agent.text().replace("dates as 2 October 2026", "dates as 2 Oct 2026"))
    agent.append("- Allergic to peanuts.", reason="Lunch order")
    response = alice.post("/memory/edit", {**fields, "content": draft, "action": "save"})
    assert response.status_code == 409
    return fields, draft, response.content.decode()


def test_edit_conflict_shows_both_versions_and_keeps_the_draft(alice: Client, agent: Agent):
    meanwhile_before = agent.text()
    fields, draft, html = _conflict(alice, agent)
    assert "This memory changed while you were editing" in html
    assert _unescape(_textarea(html, "content")) == draft
    assert 'class="diff-added"' in html and 'class="diff-removed"' in html
    assert "Allergic to peanuts." in html  # theirs, in the diff
    assert 'value="reapply"' in html and 'value="overwrite"' in html
    stored = agent.text()
    assert "Allergic to peanuts." in stored and "Prefers concise answers" in stored
    assert stored != meanwhile_before

    # The same conflict as an htmx fragment.
    again = alice.post("/memory/edit", {**fields, "content": draft, "action": "save"}, **HTMX)
    assert again.status_code == 409
    assert again.content.decode().lstrip().startswith('<section id="editor"')


def test_reapply_my_changes_onto_the_new_version(alice: Client, agent: Agent):
    _, draft, html = _conflict(alice, agent)
    conflict_fields = _edit_fields(html)

    response = alice.post(
        "/memory/edit", {**conflict_fields, "content": draft, "action": "reapply"}
    )

    html = page_html(response)
    merged = _unescape(_textarea(html, "content"))
    assert "Prefers detailed answers" in merged and "Allergic to peanuts." in merged
    assert "re-applied onto the new version" in html
    fields = _edit_fields(html)
    assert "current_version" not in fields
    saved = alice.post("/memory/edit", {**fields, "content": merged, "action": "save"})
    assert saved.status_code == 302
    assert agent.text() == merged


def test_overwrite_deliberately_and_only_what_was_shown(alice: Client, agent: Agent):
    _, draft, html = _conflict(alice, agent)
    conflict_fields = _edit_fields(html)

    # Yet another change after the conflict page was shown: overwriting still refuses.
    agent.append("- Another note.")
    second = alice.post(
        "/memory/edit", {**conflict_fields, "content": draft, "action": "overwrite"}
    )
    assert second.status_code == 409
    assert "Another note." in agent.text()

    response = alice.post(
        "/memory/edit",
        {**_edit_fields(second.content.decode()), "content": draft, "action": "overwrite"},
    )
    assert response.status_code == 302
    assert agent.text() == draft


def test_coreapi_failure_during_save_keeps_the_draft(alice: Client, agent: Agent, faults: Faults):
    fields = _edit_fields(alice.get("/memory/edit", {"scope": "user"}).content.decode())
    faults.path_regex = "memory/import"
    faults.error_rate = 1.0
    draft = fields["base"] + "\n- A line I typed.\n"

    for headers in ({}, HTMX):
        response = alice.post(
            "/memory/edit", {**fields, "content": draft, "action": "save"}, **headers
        )
        html = response.content.decode()
        assert response.status_code == 503
        assert "Nothing was saved. CoreAPI is unavailable, try again." in html
        assert _unescape(_textarea(html, "content")) == draft
    assert "A line I typed." not in agent.text()
    assert _events("edit", "error") == 2


def test_unlisted_agents_keep_the_draft(alice: Client, agent: Agent, faults: Faults):
    target = {"scope": "agent", "agent": "travel-planner"}
    fields = _edit_fields(alice.get("/memory/edit", target).content.decode())
    faults.path_regex = "completions/agents"
    faults.error_rate = 1.0
    cache.clear()  # the agent list is reused briefly; make the portal ask again

    response = alice.post("/memory/edit", {**fields, "content": "- Mine.\n", "action": "save"})

    assert response.status_code == 503
    assert _textarea(response.content.decode(), "content") == "- Mine.\n"
    assert "Mine." not in agent.text("travel-planner")


def test_too_large_draft_is_refused_and_kept(alice: Client, agent: Agent):
    fields = _edit_fields(alice.get("/memory/edit", {"scope": "user"}).content.decode())
    draft = "é" * 600_000  # 1.2 MB of UTF-8, 3.6 MB as CoreAPI's JSON body (\u00e9)
    response = alice.post("/memory/edit", {**fields, "content": draft, "action": "save"})
    assert response.status_code == 413  # refused before it is sent: CoreAPI takes 2 MiB
    assert "larger than CoreAPI accepts in one write" in response.content.decode()
    assert _textarea(response.content.decode(), "content") == draft
    assert "é" not in agent.text()


# --- append --------------------------------------------------------------------------


def test_append_a_note_with_a_reason(alice: Client, agent: Agent):
    panel = alice.get("/memory/append", {"scope": "agent", "agent": "it-helpdesk"}, **HTMX)
    assert panel.status_code == 200
    assert panel.content.decode().lstrip().startswith('<section id="change-panel"')

    response = alice.post(
        "/memory/append",
        {
            "scope": "agent",
            "agent": "it-helpdesk",
            "content": "- Uses a **Dvorak** keyboard.",
            "reason": "Told the helpdesk",
        },
        **HTMX,
    )

    html = page_html(response)
    assert html.lstrip().startswith('<section id="memory-content"')
    assert '<div id="change-panel" class="change-panel" hx-swap-oob="true"></div>' in html
    assert "<strong>Dvorak</strong>" in html and "Told the helpdesk" in html
    stored = agent.text("it-helpdesk")
    assert re.search(
        r"\n\n## Added \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ — Told the helpdesk\n\n"
        r"- Uses a \*\*Dvorak\*\* keyboard\.\n$",
        stored,
    )
    assert _events("append") == 1


def test_append_without_js(alice: Client, agent: Agent):
    page = alice.get("/memory/append", {"scope": "user"})
    assert page.status_code == 200 and "<h2" in page.content.decode()
    response = alice.post("/memory/append", {"scope": "user", "content": "Plain note."})
    assert response.status_code == 302 and response["Location"] == "/memory/user"
    assert agent.text().endswith("\n\nPlain note.\n")


def test_empty_note_is_refused_with_the_reason_kept(alice: Client, agent: Agent):
    before = agent.text()
    response = alice.post(
        "/memory/append", {"scope": "user", "content": "  \n", "reason": "My reason"}, **HTMX
    )
    assert response.status_code == 400
    assert response["HX-Retarget"] == "#change-panel"
    assert 'value="My reason"' in response.content.decode()
    assert agent.text() == before


def test_failed_append_keeps_what_was_typed_and_is_audited(
    alice: Client, agent: Agent, faults: Faults
):
    faults.path_regex = "memory/append"
    faults.throttle_rate = 1.0
    faults.retry_after_seconds = 9
    response = alice.post(
        "/memory/append", {"scope": "user", "content": "- Keep me.", "reason": "Why"}, **HTMX
    )
    html = response.content.decode()
    assert response.status_code == 429
    assert "try again in 9 s" in html
    assert "- Keep me." in html and 'value="Why"' in html
    assert _events("append", "error") == 1


# --- clear ---------------------------------------------------------------------------


def test_clear_needs_confirmation(alice: Client, agent: Agent):
    before = agent.text("benefits-assistant")
    target = {"scope": "agent", "agent": "benefits-assistant"}

    page = alice.get("/memory/clear", target)
    html = page_html(page)
    assert "Entries</dt><dd>2</dd>" in html and "Last update" in html
    assert _form(html, "/memory/clear").buttons == [("confirm", "true")]
    for data in (target, {**target, "confirm": "false"}):
        refused = alice.post("/memory/clear", data)
        assert refused.status_code == 400
        assert "Nothing was cleared" in refused.content.decode()
    assert agent.text("benefits-assistant") == before

    response = alice.post("/memory/clear", {**target, "confirm": "true"}, **HTMX)

    assert response.status_code == 200
    assert "memoryCleared" in response["HX-Trigger"]
    assert "This agent remembers nothing about you yet." in response.content.decode()
    assert agent.text("benefits-assistant") == ""
    assert _events("clear") == 1


def test_clear_offers_a_download_first(alice: Client):
    export = reverse("export_agent", args=["benefits-assistant"])
    html = alice.get("/memory/clear", {"scope": "agent", "agent": "benefits-assistant"})
    assert f'<a href="{export}" download>Download a copy first</a>' in html.content.decode()


def test_clearing_drops_the_copies_kept_for_undo(alice: Client, agent: Agent):
    page = alice.get("/memory/user").content.decode()
    deleted = alice.post("/memory/entries/delete", _entry_delete(page, "0").fields, **HTMX)
    undo = _form(deleted.content.decode(), "/memory/undo")
    alice.post("/memory/clear", {"scope": "user", "confirm": "true"})

    response = alice.post(undo.action, undo.fields)

    assert response.status_code == 410
    assert agent.text() == ""


def test_clear_without_js_redirects(alice: Client, agent: Agent):
    response = alice.post("/memory/clear", {"scope": "user", "confirm": "true"})
    assert response.status_code == 302 and response["Location"] == "/memory/user"
    assert agent.text() == ""


def test_clear_everything_needs_the_phrase(alice: Client, agent: Agent):
    before = agent.text()
    page = alice.get("/memory/clear-everything").content.decode()
    for label in ("Your memory", "Benefits Assistant", "IT Helpdesk", "Travel Planner"):
        assert label in page

    wrong = alice.post("/memory/clear-everything", {"phrase": "clear everythin"})

    assert wrong.status_code == 400
    assert 'value="clear everythin"' in wrong.content.decode()
    assert agent.text() == before and agent.text("travel-planner") != ""
    assert _events("clear") == 0

    right = alice.post("/memory/clear-everything", {"phrase": " Clear  everything "}, **HTMX)

    html = page_html(right)
    assert html.lstrip().startswith('<section id="clear-everything"')
    assert html.count("cleared") >= 4
    assert "memoryCleared" in right["HX-Trigger"]
    for name in (None, "benefits-assistant", "it-helpdesk", "travel-planner"):
        assert agent.text(name) == ""
    assert _events("clear") == 4


def test_clear_everything_reports_a_partial_failure_and_retries_it(
    alice: Client, agent: Agent, faults: Faults
):
    faults.path_regex = "agents/travel-planner"
    faults.error_rate = 1.0

    response = alice.post("/memory/clear-everything", {"phrase": "clear everything"})

    html = response.content.decode()
    assert response.status_code == 503
    assert re.search(r"Travel Planner</strong>: failed\. CoreAPI is unavailable", html)
    assert re.search(r"IT Helpdesk</strong>: cleared", html)
    assert agent.text("it-helpdesk") == ""
    faults.error_rate = 0.0
    assert agent.text("travel-planner") != ""
    retry = _form(html, "/memory/clear-everything")
    assert retry.fields == {
        "csrfmiddlewaretoken": retry.fields["csrfmiddlewaretoken"],
        "phrase": "clear everything",
        "scopes": "agent:travel-planner",
    }

    again = alice.post(retry.action, retry.fields)

    assert again.status_code == 200
    assert re.findall(r"<strong>(.*?)</strong>: cleared", again.content.decode()) == [
        "Travel Planner"
    ]
    assert agent.text("travel-planner") == ""
    assert _events("clear", "error") == 1 and _events("clear") == 4


# --- who may change what -------------------------------------------------------------


def test_bob_cannot_touch_alices_agents(bob: Client, agent: Agent):
    before = agent.text("travel-planner")
    target = {"scope": "agent", "agent": "travel-planner"}
    assert bob.get("/memory/edit", target).status_code == 404
    assert bob.get("/memory/clear", target).status_code == 404
    assert bob.get("/memory/append", target, **HTMX).status_code == 404
    for url, data in [
        ("/memory/edit", {"content": "x", "version": "|" + "0" * 64}),
        ("/memory/append", {"content": "x"}),
        ("/memory/clear", {"confirm": "true"}),
        ("/memory/entries/delete", {"version": "|" + "0" * 64, "index": "0"}),
        ("/memory/items/delete", {"version": "|" + "0" * 64, "start": "0", "end": "1"}),
        ("/memory/undo", {"token": "a" * 22}),
    ]:
        assert bob.post(url, {**target, **data}).status_code == 404, url
    assert (
        bob.post(
            "/memory/clear-everything",
            {"phrase": "clear everything", "scopes": "agent:travel-planner"},
        ).status_code
        == 400
    )
    assert agent.text("travel-planner") == before
    assert AuditEvent.objects.count() == 0


@pytest.mark.parametrize(
    "target",
    [{"scope": "combined"}, {"scope": "user", "agent": "travel-planner"}, {"scope": "agent"}],
)
def test_forged_scopes_change_nothing(alice: Client, agent: Agent, target: dict[str, str]):
    before = agent.text()
    response = alice.post("/memory/clear", {**target, "confirm": "true"})
    assert response.status_code in (400, 404)
    assert agent.text() == before


def test_every_change_needs_csrf(alice: Client, agent: Agent):
    before = agent.text()
    strict = Client(enforce_csrf_checks=True)
    strict.cookies = alice.cookies
    for url, data in [
        ("/memory/append", {"scope": "user", "content": "x"}),
        ("/memory/clear", {"scope": "user", "confirm": "true"}),
        ("/memory/clear-everything", {"phrase": "clear everything"}),
        ("/memory/edit", {"scope": "user", "content": "x"}),
        ("/memory/entries/delete", {"scope": "user"}),
        ("/memory/undo", {"scope": "user"}),
    ]:
        assert strict.post(url, data).status_code == 403, url
    assert agent.text() == before


def test_changes_need_sign_in(client: Client, portal):
    for url in ("/memory/edit?scope=user", "/memory/clear-everything", "/memory/append?scope=user"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/auth/login")
    assert client.post("/memory/clear", {"scope": "user", "confirm": "true"}).status_code == 302


def test_memory_page_offers_changes_but_not_on_the_combined_view(alice: Client):
    page = alice.get("/memory/agents/travel-planner").content.decode()
    assert 'href="/memory/edit?scope=agent&amp;agent=travel-planner"' in page
    # Add a note and Clear are GET forms naming the memory, opened in place by htmx.
    for action in ("/memory/append", "/memory/clear"):
        assert f'action="{action}" hx-get="{action}"' in page
    assert '<input type="hidden" name="agent" value="travel-planner">' in page
    assert page.count('action="/memory/entries/delete"') == 1
    # One Actions per entry; their menu's one Delete submits the form.
    assert page.count('class="entry-actions"') == 2
    assert len(_form(page, "/memory/entries/delete").buttons) == 1
    combined = alice.get("/memory/agents/travel-planner/combined").content.decode()
    assert "/memory/edit" not in combined and "/memory/entries/delete" not in combined
    dashboard = alice.get("/").content.decode()
    assert 'href="/memory/clear-everything"' in dashboard


# --- sign-in expired while a form was being sent ---------------------------------------


def _expire_sign_in(client: Client) -> None:
    """The refresh token is gone (expired, or the IdP is down with an expired access token):
    msal can't get a token silently, so the portal must send the person to sign in."""
    session = client.session
    del session[auth.SESSION_CACHE]
    session.save()


def test_a_note_sent_after_sign_in_expired_is_kept_and_sent_again(alice: Client, agent: Agent, pki):
    before = agent.text()
    _expire_sign_in(alice)
    note = {"scope": "user", "content": "- Prefers tea\r\n- No sugar", "reason": "Said so"}
    sent = alice.post("/memory/append", note, HTTP_REFERER="http://testserver/memory/user")
    # Back to the page the form came from, never to the POST-only URL.
    assert sent.status_code == 302 and sent["Location"] == "/auth/login?next=%2Fmemory%2Fuser"
    assert agent.text() == before

    sign_in(alice, "alice@contoso.com", str(pki.ca_cert), next_url="/memory/user")
    page = alice.get("/memory/user").content.decode()
    assert "Your sign-in had expired, so this was not sent" in page
    assert "- Prefers tea\r\n- No sugar</textarea>" in page  # as the browser sent it
    kept = next(f for f in forms(page) if f.action == "/memory/append")
    assert kept.fields["scope"] == "user"
    assert ">\nSaid so</textarea>" in page
    # The browser sends the hidden fields and the two textareas as they are.
    typed = {"content": "- Prefers tea\r\n- No sugar", "reason": "Said so"}
    again = alice.post("/memory/append", {**kept.fields, **typed})
    assert again.status_code == 302
    assert agent.text().endswith("— Said so\n\n- Prefers tea\n- No sugar\n")
    # Shown once: the next visit is the plain page.
    assert "this was not sent" not in alice.get("/memory/user").content.decode()


def test_an_htmx_post_after_sign_in_expired_returns_to_its_page(alice: Client):
    _expire_sign_in(alice)
    sent = alice.post(
        "/memory/append",
        {"scope": "user", "content": "- x"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL="http://testserver/memory/agents/it-helpdesk",
    )
    assert sent["HX-Redirect"] == "/auth/login?next=%2Fmemory%2Fagents%2Fit-helpdesk"
    assert alice.session["pending_form"]["origin"] == "/memory/agents/it-helpdesk"


def test_a_note_sent_twice_without_javascript_is_added_once(alice: Client, agent: Agent):
    before = agent.text()
    page = alice.get("/memory/append", {"scope": "user"}).content.decode()
    form = next(f for f in forms(page) if f.action == "/memory/append")
    assert len(form.fields["submission"]) >= 16
    note = {**form.fields, "content": "- Likes rain", "reason": "Twice"}
    first, second = alice.post(form.action, note), alice.post(form.action, note)
    assert first.status_code == second.status_code == 302
    assert agent.text().count("- Likes rain") == 1
    assert agent.text().startswith(before.rstrip())
    assert (
        "That note was sent twice; it was added once." in alice.get("/memory/user").content.decode()
    )
    # A new rendering of the form is a new note.
    page = alice.get("/memory/append", {"scope": "user"}).content.decode()
    again = next(f for f in forms(page) if f.action == "/memory/append")
    assert again.fields["submission"] != form.fields["submission"]
    alice.post(again.action, {**again.fields, "content": "- Likes rain"})
    assert agent.text().count("- Likes rain") == 2


# --- edit one entry --------------------------------------------------------------------


def _entry_editor(client: Client, page_url: str, index: int) -> Form:
    """Follow the entry's Actions link (its own page, the editor) from its memory page, as a
    browser without JS would."""
    page = client.get(page_url).content.decode()
    link = re.search(rf'href="({page_url}/{index})" class="entry-actions"', page)
    assert link, "no Actions link for that entry"
    editor = client.get(link[1], follow=True).content.decode()
    form = _form(editor, "/memory/entries/edit", index=str(index))
    # The form parser reads inputs only; the text is in the textarea.
    return Form(
        form.action,
        form.method,
        {**form.fields, "content": _unescape(_textarea(editor, "content"))},
    )


def test_edit_one_entry_changes_only_its_lines(alice: Client, agent: Agent):
    before = agent.text("travel-planner")
    form = _entry_editor(alice, "/memory/agents/travel-planner", 1)
    assert form.fields["content"].startswith("- Trip to London")
    fields = {
        **form.fields,
        "content": "- Trip to Oslo, 2-4 February 2027.",
        "reason": "Trip moved",
    }

    response = alice.post(form.action, fields)

    assert response.status_code == 302
    assert response["Location"] == "/memory/agents/travel-planner?entry=1#entry-1"
    after = agent.text("travel-planner")
    old, new = parse_document(before).entries, parse_document(after).entries
    assert len(new) == len(old) and new[0].source == old[0].source
    assert (new[1].kind, new[1].timestamp, new[1].reason) == (
        "added",
        old[1].timestamp,
        "Trip moved",
    )
    assert new[1].body == "- Trip to Oslo, 2-4 February 2027."
    assert _events("edit") == 1
    shown = alice.get(response["Location"]).content.decode()
    assert "Saved the entry." in shown and "because: Trip moved" in shown


def test_edit_one_entry_changed_meanwhile_is_a_conflict(alice: Client, agent: Agent):
    form = _entry_editor(alice, "/memory/user", 1)
    agent.replace(agent.text().replace("dates as 2 October 2026", "dates as 2 Oct 2026"))
    agent.append("- Has a cat called Miso.")
    meanwhile = agent.text()
    fields = {**form.fields, "content": "- Writes in US English."}

    response = alice.post(form.action, fields, **HTMX)

    assert response.status_code == 409
    assert agent.text() == meanwhile
    html = response.content.decode()
    assert _unescape(_textarea(html, "content")) == "- Writes in US English."
    again = _form(html, "/memory/entries/edit", index="1")
    kept = {**again.fields, "content": _unescape(_textarea(html, "content"))}
    assert alice.post(again.action, kept).status_code == 302
    after = agent.text()
    assert "- Writes in US English." in after and "Miso" in after
    assert "British English" not in after
