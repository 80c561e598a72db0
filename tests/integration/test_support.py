"""Support staff against the real devstack: app-only token + X-USER-IDENTITY, audited."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field

import jwt
import pytest
import requests
from django.test import Client
from django.urls import resolve, reverse
from werkzeug.wrappers import Request, Response

from devstack.serve import RunningServer, start_in_thread
from memory_ui.models import AuditEvent
from memory_ui.sources.coreapi import CallerAuth, agent_object_id
from memory_ui.sources.coreapi import client as coreapi_client
from memory_ui.sources.coreapi.client import CoreAPIClient
from tests.pages import cells, forms

pytestmark = pytest.mark.django_db


def look_up(client: Client, upn: str):
    """Look a user up the way staff do: the look-up form's POST, then the overview."""
    return client.post("/support/", {"upn": upn}, follow=True)


def overview_of(page) -> str:
    """The overview's address a look-up led to (an opaque id of the session, not the UPN)."""
    subject = page.wsgi_request.resolver_match.kwargs["subject"]
    return reverse("support_user", args=[subject])


# Any id will do where the role check answers first.
SOMEONE = "/support/users/some-opaque-id/"
SUPPORT_URLS = [
    ("get", "/support/"),
    ("get", "/support/?subject=some-opaque-id"),
    ("post", "/support/"),
    ("get", "/support/audit"),
    ("post", "/support/audit"),
    ("get", "/support/audit?format=csv"),
    ("get", SOMEONE),
    ("post", f"{SOMEONE}reveal"),
    ("post", f"{SOMEONE}requests"),
    ("get", f"{SOMEONE}requests/someid/"),
    ("post", f"{SOMEONE}requests/someid/export"),
    ("post", f"{SOMEONE}requests/someid/clear"),
    ("get", f"{SOMEONE}requests/someid/result"),
]


@dataclass
class Recorder:
    """Forwards to the emulator and keeps what the portal sent (headers only)."""

    target: str
    seen: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, environ, start_response):
        request = Request(environ)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        claims = jwt.decode(token, options={"verify_signature": False}) if token else {}
        with self.lock:
            self.seen.append(
                {
                    "path": request.path,
                    "identity": request.headers.get("X-USER-IDENTITY", ""),
                    "token_kind": "app" if "scp" not in claims else "delegated",
                    "token_upn": claims.get("upn", ""),
                }
            )
        upstream = requests.request(
            request.method,
            self.target + request.full_path,
            headers={k: v for k, v in request.headers.items() if k.lower() != "host"},
            data=request.get_data(),
            timeout=10,
        )
        excluded = {"content-encoding", "transfer-encoding", "connection", "content-length"}
        headers = [(k, v) for k, v in upstream.headers.items() if k.lower() not in excluded]
        return Response(upstream.content, upstream.status_code, headers)(environ, start_response)


@pytest.fixture
def recorder(fresh_coreapi: RunningServer) -> Iterator[Recorder]:
    recording = Recorder(fresh_coreapi.url)
    server = start_in_thread(recording)
    recording.url = server.url  # type: ignore[attr-defined]
    yield recording
    server.stop()


@pytest.fixture
def portal_coreapi(recorder: Recorder) -> RunningServer:
    """The portal talks to a fresh emulator through the recorder (these tests clear memory)."""
    return type("Proxy", (), {"url": recorder.url})()  # type: ignore[attr-defined]


@pytest.mark.parametrize(("method", "url"), SUPPORT_URLS)
def test_support_urls_are_forbidden_to_end_users(alice: Client, method: str, url: str):
    response = getattr(alice, method)(
        url, {"reason": "x" * 10, "scope_key": "user"} if method == "post" else None
    )
    assert response.status_code == 403
    assert "This page is for support staff" in response.content.decode()


def test_support_urls_need_sign_in(client: Client, portal):
    for method, url in SUPPORT_URLS:
        response = getattr(client, method)(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/auth/login")


def test_forged_role_in_a_form_is_ignored(alice: Client):
    response = alice.post(
        f"{SOMEONE}requests",
        {"role": "Memory.Support", "roles": "Memory.Support", "reason": "forged", "ticket": "T-1"},
    )
    assert response.status_code == 403


def test_support_nav_only_for_support_staff(alice: Client):
    assert 'href="/support/"' not in alice.get("/").content.decode()


def test_lookup_shows_what_exists_without_content(carol: Client, recorder: Recorder):
    assert 'href="/support/"' in carol.get("/").content.decode()
    found = carol.post("/support/", {"upn": "alice@contoso.com"})
    assert found.status_code == 302
    page = carol.get(found["Location"])
    html = page.content.decode()
    assert page.status_code == 200
    for label in ("Shared with every agent", "Benefits Assistant", "IT Helpdesk", "Travel Planner"):
        assert label in html
    assert "PPO Plus" not in html  # content stays hidden
    assert "aisle seats" not in html
    lookup = AuditEvent.objects.get(action="lookup")
    assert (lookup.actor_upn, lookup.subject_upn, lookup.outcome) == (
        "carol@contoso.com",
        "alice@contoso.com",
        "ok",
    )
    support_calls = [c for c in recorder.seen if c["token_kind"] == "app"]
    assert support_calls
    for call in support_calls:
        assert json.loads(call["identity"])["upn"] == "alice@contoso.com"
        assert set(json.loads(call["identity"])) == {
            "name",
            "user_name",
            "user_id",
            "upn",
            "group_ids",
        }


def test_end_user_calls_never_send_x_user_identity(alice: Client, recorder: Recorder):
    alice.get("/cards/user", HTTP_HX_REQUEST="true")
    alice.get("/memory/agents/travel-planner")
    assert recorder.seen
    for call in recorder.seen:
        assert call["identity"] == ""
        assert call["token_kind"] == "delegated"
        assert call["token_upn"] == "alice@contoso.com"


@pytest.mark.parametrize(
    "upn", ["not-an-upn", "alice@", "a b@contoso.com", "x" * 300 + "@contoso.com"]
)
def test_malformed_upn_is_refused_clearly(carol: Client, upn: str):
    response = carol.post("/support/", {"upn": upn})
    assert response.status_code == 400
    assert 'class="field-error"' in response.content.decode()


def test_upn_with_no_memory(carol: Client):
    page = look_up(carol, "nobody@contoso.com")
    assert page.status_code == 200
    assert "Shared with every agent" in page.content.decode()
    assert "<td>No</td>" in page.content.decode()


def test_an_upper_case_upn_is_looked_up_in_lower_case(carol: Client, recorder: Recorder):
    """Entra compares UPNs case-insensitively; CoreAPI's substitution pattern (here
    `...@contoso\\.com`) compares text. The portal looks the user up as the lower-case UPN,
    so the emulator substitutes it and the audit trail names one subject."""
    found = carol.post("/support/", {"upn": "  ALICE@CONTOSO.COM "})
    assert found.status_code == 302
    assert resolve(found["Location"]).url_name == "support_user"
    assert "contoso" not in found["Location"].casefold()
    page = carol.get(found["Location"])
    html = page.content.decode()
    assert page.status_code == 200, html
    assert "Memory of alice@contoso.com" in html
    assert "<td>Yes</td>" in html  # alice's own documents, found case-insensitively
    support_calls = [c for c in recorder.seen if c["token_kind"] == "app"]
    assert support_calls
    assert {json.loads(c["identity"])["upn"] for c in support_calls} == {"alice@contoso.com"}
    lookup = AuditEvent.objects.get(action="lookup")
    assert (lookup.subject_upn, lookup.outcome) == ("alice@contoso.com", "ok")


def test_coreapi_refusing_the_substitution_is_explained_and_audited(carol: Client):
    """The emulator, like CoreAPI, only substitutes UPNs matching the configured pattern."""
    page = look_up(carol, "mallory@fabrikam.com")
    assert page.status_code == 403
    assert "CoreAPI refused to act for this user" in page.content.decode()
    event = AuditEvent.objects.get(action="lookup", subject_upn="mallory@fabrikam.com")
    assert event.outcome == "error"
    assert event.error_status == 403


def test_reveal_needs_a_reason_and_is_audited(carol: Client):
    alice = overview_of(look_up(carol, "alice@contoso.com"))
    refused = carol.post(f"{alice}reveal", {"scope_key": "agent:travel-planner"})
    assert refused.status_code == 302
    assert not AuditEvent.objects.filter(action="reveal").exists()
    shown = carol.post(
        f"{alice}reveal",
        {"scope_key": "agent:travel-planner", "reason": "User asked what is stored"},
    )
    assert shown.status_code == 200
    assert "aisle seats" in shown.content.decode()
    event = AuditEvent.objects.get(action="reveal")
    assert (event.agent_name, event.reason) == ("travel-planner", "User asked what is stored")
    assert event.bytes_before and len(event.sha256_before) == 64


def test_reveal_of_an_agent_the_user_cannot_read_is_404(carol: Client):
    bob = overview_of(look_up(carol, "bob@contoso.com"))
    response = carol.post(
        f"{bob}reveal",
        {"scope_key": "agent:travel-planner", "reason": "Looking around"},
    )
    assert response.status_code == 404


def _start(carol: Client, upn: str, scopes: list[str], **fields: str):
    """Look `upn` up and post the overview's "Handle a deletion request" form."""
    page = look_up(carol, upn)
    form = next(f for f in forms(page.content.decode()) if f.action.endswith("/requests"))
    data = {**form.fields, "reason": "Privacy request by email", "ticket": "PRIV-1234"}
    return carol.post(form.action, {**data, "scopes": scopes, **fields})


def _request(carol: Client, upn: str, scopes: list[str]) -> str:
    started = _start(carol, upn, scopes)
    assert started.status_code == 302, started.content.decode()
    return started["Location"]


def _export(carol: Client, request_url: str) -> zipfile.ZipFile:
    response = carol.post(f"{request_url}export")
    assert response.status_code == 200, response.content.decode()
    assert response["Content-Type"] == "application/zip"
    return zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


def _clear(carol: Client, request_url: str, typed: str = "alice@contoso.com"):
    page = carol.get(request_url).content.decode()
    form = next(f for f in forms(page) if f.action.endswith("/clear"))
    return carol.post(form.action, {**form.fields, "confirm_upn": typed})


def _alice_memory(portal_coreapi, coreapi_tokens, demo, agent: str | None) -> str:
    client = CoreAPIClient(portal_coreapi.url, demo.instance_id)
    auth = CallerAuth(coreapi_tokens.delegated("alice@contoso.com"))
    object_id = agent_object_id(demo.instance_id, agent) if agent else None
    return client.get_memory(auth, "agent" if agent else "user", object_id).content_markdown


def test_a_request_needs_reason_ticket_and_memories(
    carol: Client, portal_coreapi, coreapi_tokens, demo
):
    for change in ({"reason": ""}, {"ticket": "PRIV 1"}):
        response = _start(carol, "alice@contoso.com", ["all"], **change)
        assert response.status_code == 400
    no_memory = _start(carol, "alice@contoso.com", [])
    assert no_memory.status_code == 400
    html = no_memory.content.decode()
    assert "Choose the memories to delete, or all of them." in html
    assert 'value="PRIV-1234"' in html  # what was typed stays
    assert "aisle seats" in _alice_memory(portal_coreapi, coreapi_tokens, demo, "travel-planner")
    assert not AuditEvent.objects.filter(action__in=["export", "clear"]).exists()


def test_carol_exports_then_clears_one_memory_and_alice_sees_why(
    carol: Client, portal_coreapi, coreapi_tokens, demo, pki, recorder: Recorder
):
    request_url = _request(carol, "alice@contoso.com", ["agent:travel-planner"])
    before = _alice_memory(portal_coreapi, coreapi_tokens, demo, "travel-planner")

    refused = _clear(carol, request_url)  # not exported yet
    assert refused.status_code == 409
    assert "download the export first" in refused.content.decode()

    archive = _export(carol, request_url)
    assert archive.read("agent-travel-planner.md").decode() == before
    recorder.seen.clear()
    wrong_upn = _clear(carol, request_url, typed="bob@contoso.com")
    assert wrong_upn.status_code == 400
    cleared = _clear(carol, request_url, typed="ALICE@contoso.com")
    assert cleared.status_code == 302
    result = carol.get(cleared["Location"]).content.decode()
    assert "PRIV-1234" in result and "Privacy request by email" in result
    assert hashlib.sha256(before.encode()).hexdigest() in result
    assert hashlib.sha256(b"").hexdigest() in result
    subject = resolve(request_url).kwargs["subject"]
    assert f"/support/audit?subject={subject}&amp;ticket=PRIV-1234" in result
    assert _alice_memory(portal_coreapi, coreapi_tokens, demo, "travel-planner") == ""
    assert "Prefers concise answers" in _alice_memory(portal_coreapi, coreapi_tokens, demo, None)
    clear_calls = [c for c in recorder.seen if c["path"].endswith("/memory/clear")]
    assert len(clear_calls) == 1
    assert json.loads(clear_calls[0]["identity"])["upn"] == "alice@contoso.com"
    event = AuditEvent.objects.get(action="clear")
    assert (event.reason, event.ticket, event.agent_name, event.outcome) == (
        "Privacy request by email",
        "PRIV-1234",
        "travel-planner",
        "ok",
    )
    assert event.actor_is_support
    assert event.sha256_before == hashlib.sha256(before.encode()).hexdigest()
    assert event.bytes_after == 0

    page = carol.get(request_url).content.decode()
    replay = next(f for f in forms(page) if f.action.endswith("/clear"))
    first = carol.post(replay.action, {**replay.fields, "confirm_upn": "alice@contoso.com"})
    again = carol.post(replay.action, {**replay.fields, "confirm_upn": "alice@contoso.com"})
    assert first.status_code == 302  # nothing left to clear: it is empty already
    assert again.status_code == 409
    assert "That confirmation was already used" in again.content.decode()
    assert AuditEvent.objects.filter(action="lookup").count() == 1  # one visit, one look-up

    from tests.integration.conftest import sign_in

    alice = Client()
    sign_in(alice, "alice@contoso.com", str(pki.ca_cert))
    activity = alice.get("/activity").content.decode()
    assert "Support: carol@contoso.com" in activity
    assert "Privacy request by email" in activity
    assert "PRIV-1234" in activity
    assert "Cleared" in activity
    assert "Travel Planner" in activity and "travel-planner" not in cells(activity)


def test_an_agent_append_after_the_export_is_never_cleared(
    carol: Client, portal_coreapi, coreapi_tokens, demo
):
    """The emulator offers If-Match, and the portal also compares versions: an append that
    lands after the export stays, and the result page says so."""
    request_url = _request(carol, "alice@contoso.com", ["user", "agent:travel-planner"])
    _export(carol, request_url)
    client = CoreAPIClient(portal_coreapi.url, demo.instance_id)
    auth = CallerAuth(coreapi_tokens.delegated("alice@contoso.com"))
    travel = agent_object_id(demo.instance_id, "travel-planner")
    client.append_memory(auth, "agent", "- Prefers trains in Europe.", agent_object_id=travel)
    result = carol.get(_clear(carol, request_url)["Location"]).content.decode()
    assert "It changed since the export" in result
    assert _alice_memory(portal_coreapi, coreapi_tokens, demo, None) == ""
    assert "Prefers trains in Europe." in _alice_memory(
        portal_coreapi, coreapi_tokens, demo, "travel-planner"
    )


def test_activity_can_hide_the_staff_member(carol: Client, settings, pki):
    look_up(carol, "alice@contoso.com")
    settings.PORTAL_SHOW_SUPPORT_ACTOR = False
    from tests.integration.conftest import sign_in

    alice = Client()
    sign_in(alice, "alice@contoso.com", str(pki.ca_cert))
    activity = alice.get("/activity").content.decode()
    assert "Support staff" in activity
    assert "carol@contoso.com" not in activity


def test_failed_clear_is_reported_audited_and_retryable(carol: Client, fresh_coreapi, settings):
    from devstack.coreapi.app import emulator

    settings.COREAPI_GET_RETRIES = 0
    coreapi_client.get_client.cache_clear()
    request_url = _request(carol, "alice@contoso.com", ["user", "agent:it-helpdesk"])
    _export(carol, request_url)
    faults = emulator(fresh_coreapi).faults
    faults.path_regex = "memory/clear"
    faults.error_rate = 1.0
    try:
        cleared = _clear(carol, request_url)
    finally:
        faults.error_rate = 0.0
    html = carol.get(cleared["Location"]).content.decode()
    assert "failed: CoreAPI is unavailable" in html
    assert AuditEvent.objects.filter(action="clear", outcome="error").count() == 2
    retry = next(f for f in forms(html) if "nonce" in f.fields)
    retried = carol.post(retry.action, {**retry.fields, "scopes": ["user", "agent:it-helpdesk"]})
    assert retried.status_code == 302
    assert "Retry the failed ones" not in carol.get(retried["Location"]).content.decode()
    assert AuditEvent.objects.filter(action="clear", outcome="ok").count() == 2


def test_audit_page_filters_and_exports_csv(carol: Client):
    look_up(carol, "alice@contoso.com")
    look_up(carol, "bob@contoso.com")
    # The filter form is a POST; the page it leads to names people by the session's ids.
    page = carol.post("/support/audit", {"subject": "bob@contoso.com", "action": "lookup"})
    assert page.status_code == 302 and "contoso" not in page["Location"]
    html = carol.get(page["Location"]).content.decode()
    assert "bob@contoso.com" in html
    assert "alice@contoso.com" not in cells(html)
    by_carol = carol.post("/support/audit", {"actor": "carol@contoso.com"})["Location"]
    exported = carol.get(f"{by_carol}&format=csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode())))
    assert {row["subject_upn"] for row in rows} == {"alice@contoso.com", "bob@contoso.com"}
    assert all(row["action"] == "lookup" for row in rows)
    bad_dates = carol.get("/support/audit", {"date_from": "yesterday"})
    assert bad_dates.status_code == 200
    assert "Check the dates" in bad_dates.content.decode()


def test_audit_events_are_append_only(carol: Client):
    look_up(carol, "alice@contoso.com")
    event = AuditEvent.objects.get()
    event.reason = "changed"
    with pytest.raises(TypeError):
        event.save()
    with pytest.raises(TypeError):
        event.delete()
    with pytest.raises(TypeError):
        AuditEvent.objects.all().delete()
    with pytest.raises(TypeError):
        AuditEvent.objects.update(reason="x")


def test_carol_exports_everything_for_alice(carol: Client, recorder: Recorder):
    request_url = _request(carol, "alice@contoso.com", ["all"])
    response = carol.post(f"{request_url}export")
    assert response.status_code == 200
    assert "memory-alice_contoso.com-PRIV-1234-" in response["Content-Disposition"]
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["upn"] == "alice@contoso.com"
    agents = {f["agent_name"] for f in manifest["files"] if f["scope"] == "agent"}
    assert agents == {"benefits-assistant", "it-helpdesk", "travel-planner"}
    for entry in manifest["files"]:
        assert hashlib.sha256(archive.read(entry["path"])).hexdigest() == entry["sha256"]
    exports = AuditEvent.objects.filter(action="export")
    assert exports.count() == 4
    assert {(e.reason, e.ticket, e.outcome) for e in exports} == {
        ("Privacy request by email", "PRIV-1234", "ok")
    }
    assert all(
        json.loads(c["identity"])["upn"] == "alice@contoso.com"
        for c in recorder.seen
        if c["token_kind"] == "app"
    )
    assert _export(carol, request_url)  # downloading again works, and is audited again
    assert AuditEvent.objects.filter(action="export").count() == 8


def test_message_survives_an_htmx_redirect(carol: Client):
    """A redirect answering htmx becomes HX-Redirect; its message waits for the next page."""
    alice = overview_of(look_up(carol, "alice@contoso.com"))
    response = carol.post(f"{alice}reveal", {"scope_key": "user"}, HTTP_HX_REQUEST="true")
    assert response["HX-Redirect"] == alice
    assert b"toast" not in response.content
    page = carol.get(response["HX-Redirect"]).content.decode()
    assert "Give a reason (at least 5 characters) to reveal memory." in page


def test_overview_opens_only_through_the_look_up_form(carol: Client, recorder: Recorder):
    """A link from elsewhere neither looks anyone up nor writes audit events."""
    recorder.seen.clear()
    # An id the audit trail's filter made for alice: known to the session, not looked up.
    filtered = carol.post("/support/audit", {"subject": "alice@contoso.com"})["Location"]
    subject = filtered.split("subject=", 1)[1]
    response = carol.get(reverse("support_user", args=[subject]))
    assert response.status_code == 302
    assert response["Location"] == f"/support/?subject={subject}"
    form_page = carol.get(response["Location"]).content.decode()
    assert 'value="alice@contoso.com"' in form_page
    # An id the session does not know leads back to the look-up, saying so.
    unknown = carol.get("/support/users/not-this-sessions-id/")
    assert unknown.status_code == 302 and unknown["Location"] == "/support/"
    assert "not looked up in this session any more" in carol.get("/support/").content.decode()
    assert not AuditEvent.objects.exists()
    assert recorder.seen == []


def test_admin_shows_the_audit_read_only_to_support_staff(carol: Client):
    look_up(carol, "alice@contoso.com")
    listing = carol.get("/admin/memory_ui/auditevent/")
    assert listing.status_code == 200
    assert "alice@contoso.com" in listing.content.decode()
    event = AuditEvent.objects.get()
    assert carol.get(f"/admin/memory_ui/auditevent/{event.pk}/change/").status_code == 200
    assert carol.get("/admin/memory_ui/auditevent/add/").status_code == 403
    deleted = carol.post(f"/admin/memory_ui/auditevent/{event.pk}/delete/", {"post": "yes"})
    assert deleted.status_code == 403
    assert AuditEvent.objects.filter(pk=event.pk).exists()


def test_admin_refuses_end_users_without_a_redirect_loop(alice: Client, client: Client):
    response = alice.get("/admin/", follow=True)
    assert response.status_code == 403
    assert "This page is for support staff" in response.content.decode()
    client.logout()
    anonymous = client.get("/admin/")
    assert anonymous.status_code == 302
