"""Support staff: look a user up, reveal one memory, handle a deletion request (reason and
ticket once, export, then clear what the export holds, a result page), the audit trail.
Support calls carry the portal's app token and X-USER-IDENTITY; end users get 403."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import re
import zipfile
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.urls import resolve, reverse

from memory_ui import auth
from memory_ui.models import AuditEvent
from memory_ui.web.stores.support import PEOPLE_KEPT, SESSION_PEOPLE
from tests.fake_coreapi import FakeCoreAPI
from tests.pages import cells, forms
from tests.views.conftest import SUPPORT_ROLE, signed_in
from tests.views.helpers import (
    body,
    each_failure,
    fail,
    field_value,
    field_values,
    is_page,
    page_text,
    refused,
)

ALICE = "alice@contoso.com"
BOB = "bob@contoso.com"
# Support pages carry an opaque id of the staff member's session, never the UPN: any id
# will do where the role check answers first.
SOMEONE = reverse("support_user", args=["some-opaque-id"])
REFUSED_403 = "CoreAPI refused to act for this user."

REQUEST = f"{SOMEONE}requests/someid/"
SUPPORT_URLS = [
    ("get", "/support/"),
    ("get", "/support/?subject=some-opaque-id"),
    ("post", "/support/"),
    ("get", "/support/audit"),
    ("get", "/support/audit?format=csv"),
    ("post", "/support/audit"),
    ("get", SOMEONE),
    ("post", f"{SOMEONE}reveal"),
    ("post", f"{SOMEONE}requests"),
    ("get", REQUEST),
    ("post", f"{REQUEST}export"),
    ("post", f"{REQUEST}clear"),
    ("get", f"{REQUEST}result"),
]
REASON = "Privacy request by email"


def refusal(message: str, portal_status: int) -> str:
    """What the overview says when CoreAPI refuses a support call."""
    return REFUSED_403 if portal_status == 403 else message


def look_up(client: Client, upn: str = ALICE):
    """As staff do it: the look-up form's POST, then the overview it leads to."""
    return client.get(overview(looked_up(client, upn)))


def looked_up(client: Client, upn: str = ALICE) -> str:
    """The look-up form's POST for `upn`, without opening the overview (so no CoreAPI call
    and no audit event yet): the opaque id its redirect names."""
    found = client.post("/support/", {"upn": upn})
    assert found.status_code == 302
    match = resolve(found["Location"])
    assert match.url_name == "support_user"
    return match.kwargs["subject"]


def subject_of(response) -> str:
    """The opaque id of the support page that answered `response`."""
    return response.wsgi_request.resolver_match.kwargs["subject"]


def overview(subject: str) -> str:
    return reverse("support_user", args=[subject])


def filtered_subject(client: Client, upn: str) -> str:
    """An id of this session for `upn` without a look-up: the audit trail's filter's."""
    filtered = client.post("/support/audit", {"subject": upn})
    assert filtered.status_code == 302
    return parse_qs(urlsplit(filtered["Location"]).query)["subject"][0]


def request_fields(nonce: str, **fields: object) -> dict[str, object]:
    return {"nonce": nonce, "reason": REASON, "ticket": "PRIV-1234", "scopes": ["all"], **fields}


def start(client: Client, upn: str = ALICE, **fields: object) -> str:
    """Look `upn` up and start a deletion request from the overview: its page's address."""
    page = look_up(client, upn)
    nonce = field_value(body(page), "nonce")
    started = client.post(f"{overview(subject_of(page))}requests", request_fields(nonce, **fields))
    assert started.status_code == 302, page_text(started)
    assert resolve(started["Location"]).kwargs["subject"] == subject_of(page)
    return started["Location"]


def export(client: Client, request_url: str) -> zipfile.ZipFile:
    response = client.post(f"{request_url}export")
    assert response.status_code == 200, page_text(response)
    assert response["Content-Type"] == "application/zip"
    return zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


def clear(client: Client, request_url: str, upn: str = ALICE, **fields: object):
    """The request page's clear form, sent with the UPN typed again."""
    nonce = field_value(body(client.get(request_url)), "nonce")
    return client.post(f"{request_url}clear", {"nonce": nonce, "confirm_upn": upn, **fields})


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# --- who may ------------------------------------------------------------------------------


def test_support_urls_are_forbidden_to_end_users(alice: Client, fake: FakeCoreAPI, subtests):
    for method, url in SUPPORT_URLS:
        with subtests.test(method=method, url=url):
            data = {"reason": "x" * 10, "scope_key": "user", "upn": ALICE}
            response = getattr(alice, method)(url, data if method == "post" else None)
            assert refused(response, 403)
    assert fake.calls == []
    assert not AuditEvent.objects.exists()


def test_support_posts_need_the_csrf_token(fake: FakeCoreAPI):
    """Every support form posts with the CSRF token; without it, nothing happens."""
    strict = signed_in(Client(enforce_csrf_checks=True), "carol@contoso.com", [SUPPORT_ROLE])
    for url in [url for method, url in SUPPORT_URLS if method == "post"]:
        assert strict.post(url, {"upn": ALICE, "subject": ALICE}).status_code == 403, url
    assert fake.calls == [] and not AuditEvent.objects.exists()
    assert "support_lookups" not in strict.session and SESSION_PEOPLE not in strict.session
    for page in ("/support/", "/support/audit"):
        posted = [f for f in forms(body(strict.get(page))) if f.action == page]
        assert posted and all("csrfmiddlewaretoken" in f.fields for f in posted), page


@pytest.mark.parametrize(("method", "url"), SUPPORT_URLS[:3])
def test_support_urls_need_sign_in(client: Client, fake: FakeCoreAPI, method: str, url: str):
    response = getattr(client, method)(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/auth/login")


# --- look-up --------------------------------------------------------------------------------


def test_support_home(carol: Client, fake: FakeCoreAPI):
    response = carol.get("/support/", {"subject": filtered_subject(carol, ALICE)})
    assert response.status_code == 200
    assert is_page(response)
    assert "Support: a user" in body(response)
    assert f'value="{ALICE}"' in body(response)  # prefilled, not looked up
    # A UPN in the address fills nothing in: addresses never carry one.
    assert f'value="{ALICE}"' not in body(carol.get("/support/", {"upn": ALICE}))
    assert fake.calls == [] and not AuditEvent.objects.exists()


@pytest.mark.parametrize(
    ("upn", "message"),
    [
        ("not-an-upn", "Enter a user principal name such as alice@contoso.com."),
        ("alice@", "Enter a user principal name such as alice@contoso.com."),
        ("a b@contoso.com", "Enter a user principal name such as alice@contoso.com."),
        ("x" * 300 + "@contoso.com", "Ensure this value has at most 254 characters"),
    ],
    ids=["no-at", "no-domain", "space", "too-long"],
)
def test_a_malformed_upn_is_refused(carol: Client, fake: FakeCoreAPI, upn: str, message: str):
    response = carol.post("/support/", {"upn": upn})
    assert response.status_code == 400
    assert f'<small id="upn-error" class="field-error">{message}' in body(response)
    assert fake.calls == [] and not AuditEvent.objects.exists()


def test_an_id_this_session_does_not_know_leads_back_to_the_look_up(
    carol: Client, fake: FakeCoreAPI
):
    response = carol.get("/support/users/not-an-id-of-this-session/")
    assert response.status_code == 302 and response["Location"] == "/support/"
    form = page_text(carol.get(response["Location"]))
    assert "That user is not looked up in this session any more. Look them up again." in form
    assert fake.calls == [] and not AuditEvent.objects.exists()


def test_a_upn_is_not_an_address(carol: Client, fake: FakeCoreAPI):
    looked_up(carol)
    assert carol.get(f"/support/users/{ALICE}/").status_code == 404
    assert fake.calls == [] and not AuditEvent.objects.exists()


def test_an_old_upn_address_leads_staff_to_the_look_up(
    carol: Client, alice: Client, fake: FakeCoreAPI, caplog: pytest.LogCaptureFixture
):
    """Bookmarks from when addresses carried the UPN: still 404, but staff learn why and
    get the look-up; nobody else learns the route exists; the UPN is not echoed."""
    caplog.set_level(logging.DEBUG)
    old = [f"/support/users/{ALICE}/", f"/support/users/{ALICE}/reveal", "/support/users/a%40b/"]
    for url in old:
        response = carol.get(url)
        assert response.status_code == 404 and is_page(response)
        text = page_text(response)
        assert "Support pages no longer carry the person's address" in text
        assert 'href="/support/"' in body(response)
        assert "alice" not in body(response).lower() and "a@b" not in body(response)
    # Only Django's own "Not Found: <path>" names the address.
    assert not [
        r for r in caplog.records if "alice" in r.getMessage() and r.name != "django.request"
    ]
    ordinary = page_text(carol.get("/support/users/x/y/z"))
    assert "There is nothing here, or it is not yours to see." in ordinary
    for client in (alice, Client()):
        response = client.get(f"/support/users/{ALICE}/")
        assert response.status_code == 404
        assert page_text(response) == page_text(client.get("/no-such-page/"))
        assert "no longer carry" not in page_text(response)
    posted = carol.post(f"/support/users/{ALICE}/reveal")  # an old form: nothing to do
    assert posted.status_code == 404 and page_text(posted) == ordinary
    assert fake.calls == [] and not AuditEvent.objects.exists()


def test_another_staff_members_session_cannot_use_the_id(carol: Client, fake: FakeCoreAPI):
    request_url = start(carol)
    carols = overview(resolve(request_url).kwargs["subject"])
    dave = signed_in(Client(), "dave@contoso.com", [SUPPORT_ROLE])
    assert overview(looked_up(dave)) != carols  # dave looked alice up too: his own id
    fake.calls.clear()
    for response in (dave.get(carols), dave.get(request_url)):
        assert response.status_code == 302 and response["Location"] == "/support/"
    refused_post = dave.post(f"{request_url}export")
    assert refused_post.status_code == 302 and refused_post["Location"] == "/support/"
    assert "; nothing was done. Look them up again." in page_text(dave.get("/support/"))
    assert fake.calls == [] and not AuditEvent.objects.filter(action="export").exists()


def test_an_id_does_not_outlive_the_sign_out(carol: Client, fake: FakeCoreAPI):
    """Signed out and in again, the same staff member's old addresses open nothing."""
    request_url = start(carol)
    subject = resolve(request_url).kwargs["subject"]
    assert carol.post("/auth/logout").status_code == 302
    signed_in(carol, "carol@contoso.com", [SUPPORT_ROLE])
    fake.calls.clear()
    for response in (carol.get(overview(subject)), carol.get(request_url)):
        assert response.status_code == 302 and response["Location"] == "/support/"
    assert carol.post(f"{request_url}export")["Location"] == "/support/"
    assert fake.calls == [] and not AuditEvent.objects.filter(action="export").exists()
    assert looked_up(carol) != subject  # a new look-up, a new id


def test_filtering_the_audit_trail_keeps_a_looked_up_users_pages_open(
    carol: Client, fake: FakeCoreAPI
):
    """The trail's filters make ids too; however many, they do not push out the id of a
    user whose look-up stands (their open request's page would say nothing was done)."""
    request_url = start(carol)
    for n in range(45):
        filtered_subject(carol, f"someone{n}@contoso.com")
    assert carol.get(request_url).status_code == 200
    assert filtered_subject(carol, ALICE) == resolve(request_url).kwargs["subject"]
    assert len(carol.session[SESSION_PEOPLE]) == 2 * PEOPLE_KEPT  # still bounded


def test_lookup_shows_what_exists_without_content(carol: Client, fake: FakeCoreAPI):
    response = look_up(carol)
    html = body(response)
    assert response.status_code == 200
    assert is_page(response)
    assert f"Memory of {ALICE}" in html
    for label in ("Shared with every agent", "Benefits Assistant", "IT Helpdesk", "Travel Planner"):
        assert label in html
    assert "travel-planner" not in page_text(response)  # display names only
    assert "<td>Yes</td>" in html
    assert "PPO Plus" not in html and "aisle seats" not in html
    assert fake.calls
    assert all(call.user_identity and call.upn == ALICE for call in fake.calls)
    lookup = AuditEvent.objects.get(action="lookup")
    assert (lookup.actor_upn, lookup.subject_upn, lookup.outcome) == (
        "carol@contoso.com",
        ALICE,
        "ok",
    )


def test_a_user_without_memory(carol: Client, fake: FakeCoreAPI):
    for agent in (None, "benefits-assistant", "it-helpdesk", "travel-planner"):
        fake.put("", agent)
    html = body(look_up(carol, "nobody@contoso.com"))
    assert "<td>No</td>" in html and "<td>Yes</td>" not in html


def test_the_overview_opens_only_through_the_look_up_form(carol: Client, fake: FakeCoreAPI):
    subject = filtered_subject(carol, ALICE)  # an id for alice, but no look-up
    response = carol.get(overview(subject))
    assert response.status_code == 302
    assert response["Location"] == f"/support/?subject={subject}"
    assert fake.calls == [] and not AuditEvent.objects.exists()


def test_a_look_up_is_audited_once_per_visit(carol: Client, fake: FakeCoreAPI):
    """Coming back to the overview (from a request, with Back, a reload) records nothing
    more; the next look-up through the form does."""
    subject = subject_of(look_up(carol))
    assert carol.get(overview(subject)).status_code == 200
    assert carol.get(overview(subject)).status_code == 200
    assert AuditEvent.objects.filter(action="lookup").count() == 1
    look_up(carol)
    assert AuditEvent.objects.filter(action="lookup").count() == 2


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "reveal"),
        ("post", "requests"),
        ("get", "requests/{id}/"),
        ("post", "requests/{id}/export"),
        ("post", "requests/{id}/clear"),
        ("get", "requests/{id}/result"),
    ],
)
def test_every_step_needs_a_look_up_in_this_session(
    carol: Client, fake: FakeCoreAPI, method: str, path: str
):
    """Even with a request and confirmations from another session of the same staff member,
    whether this session knows the user's id (from the audit trail's filter) or not."""
    elsewhere = signed_in(Client(), "carol@contoso.com", [SUPPORT_ROLE])
    request_url = start(elsewhere)
    request_id = request_url.rstrip("/").rsplit("/", 1)[1]
    nonce = field_value(body(elsewhere.get(request_url)), "nonce")
    fake.calls.clear()
    fields = {**request_fields(nonce), "scope_key": "user", "confirm_upn": ALICE}
    theirs = overview(resolve(request_url).kwargs["subject"])
    response = getattr(carol, method)(f"{theirs}{path.format(id=request_id)}", fields)
    assert response.status_code == 302 and response["Location"] == "/support/"
    done = "; nothing was done" if method == "post" else ""
    assert f"not looked up in this session any more{done}." in page_text(carol.get("/support/"))
    subject = filtered_subject(carol, ALICE)
    response = getattr(carol, method)(f"{overview(subject)}{path.format(id=request_id)}", fields)
    assert response.status_code == 302
    assert response["Location"] == f"/support/?subject={subject}"
    # The notice names the person: it waits in the session, not in a cookie of the browser.
    assert "messages" not in response.cookies
    assert fake.calls == []
    assert not AuditEvent.objects.exclude(action="lookup").exists()
    assert "Prefers concise answers" in fake.text() and "aisle seats" in fake.text("travel-planner")
    form = carol.get(response["Location"])
    assert f'value="{ALICE}"' in body(form)  # prefilled, not looked up
    if method == "post":
        assert f"Look {ALICE} up first; nothing was done." in page_text(form)
    assert fake.calls == []


def test_a_request_opens_only_in_the_session_that_started_it(carol: Client, fake: FakeCoreAPI):
    elsewhere = signed_in(Client(), "carol@contoso.com", [SUPPORT_ROLE])
    request_id = resolve(start(elsewhere)).kwargs["request_id"]
    subject = subject_of(look_up(carol))
    request_url = reverse("support_request", args=[subject, request_id])
    fake.calls.clear()
    for response in (carol.get(request_url), carol.post(f"{request_url}export")):
        assert response.status_code == 302 and response["Location"] == overview(subject)
    assert "That deletion request is not open in this session" in page_text(
        carol.get(overview(subject))
    )
    assert not fake.called("export_memory")
    assert not AuditEvent.objects.filter(action="export").exists()


def test_a_request_holds_only_for_its_user(carol: Client, fake: FakeCoreAPI):
    request_url = start(carol)
    bob = looked_up(carol, BOB)
    bobs = reverse("support_request", args=[bob, resolve(request_url).kwargs["request_id"]])
    fake.calls.clear()
    response = carol.post(f"{bobs}export")
    assert response.status_code == 302 and response["Location"] == overview(bob)
    assert not fake.called("export_memory")


def test_a_look_up_opens_only_that_user(carol: Client, fake: FakeCoreAPI):
    looked_up(carol, ALICE)
    bob = filtered_subject(carol, BOB)
    response = carol.post(f"{overview(bob)}reveal", {"scope_key": "user", "reason": "User asked"})
    assert response.status_code == 302
    assert response["Location"] == f"/support/?subject={bob}"
    assert fake.calls == [] and not AuditEvent.objects.exists()


def test_an_upper_case_upn_is_looked_up_in_lower_case(carol: Client, fake: FakeCoreAPI):
    """Entra compares UPNs case-insensitively; the portal uses one form, lower case, for the
    overview's address, X-USER-IDENTITY, the audit trail and the confirmations."""
    found = carol.post("/support/", {"upn": "  ALICE@CONTOSO.COM "})
    assert found.status_code == 302
    subject = resolve(found["Location"]).kwargs["subject"]
    page = carol.get(found["Location"])
    assert page.status_code == 200
    assert f"Memory of {ALICE}" in page_text(page)
    assert fake.calls and all(call.upn == ALICE for call in fake.calls)
    assert AuditEvent.objects.get(action="lookup").subject_upn == ALICE

    # Another spelling of the UPN is the same user, with the same id; the confirmations hold.
    assert looked_up(carol, "Alice@Contoso.COM") == subject
    nonce = field_value(body(page), "nonce")
    fake.calls.clear()
    started = carol.post(f"{overview(subject)}requests", request_fields(nonce))
    assert started.status_code == 302
    assert started["Location"].startswith(f"{overview(subject)}requests/")
    request_url = started["Location"]
    export(carol, request_url)
    cleared = clear(carol, request_url, upn="ALICE@contoso.com")
    assert cleared.status_code == 302, page_text(cleared)
    assert fake.called("export_memory") and fake.called("clear_memory")
    assert all(call.upn == ALICE for call in fake.calls)
    subjects = AuditEvent.objects.exclude(action="lookup").values_list("subject_upn", flat=True)
    assert set(subjects) == {ALICE}


def test_lookup_when_coreapi_refuses(carol: Client, fake: FakeCoreAPI, subtests):
    for (failure,) in each_failure():
        with subtests.test(failure.name):
            fail(fake, "list_agents", failure)
            response = look_up(carol)
            assert response.status_code == failure.portal_status
            assert refusal(failure.message, failure.portal_status) in page_text(response)
            assert "Look up someone else" in body(response)
            event = AuditEvent.objects.filter(action="lookup").first()  # the newest
            assert event.outcome == "error"
            assert event.error_status == failure.coreapi_status


def test_lookup_when_one_memory_cannot_be_read(carol: Client, fake: FakeCoreAPI, subtests):
    for (failure,) in each_failure():
        with subtests.test(failure.name):
            fail(fake, "get_memory", failure, agent="travel-planner")
            response = look_up(carol)
            assert response.status_code == 200  # the others are shown
            html = body(response)
            assert f'<td colspan="4" class="field-error">{failure.message}</td>' in html
            assert "<td>Yes</td>" in html


def test_lookup_when_the_portal_has_no_app_token(
    carol: Client, fake: FakeCoreAPI, monkeypatch: pytest.MonkeyPatch
):
    def no_token() -> str:
        raise auth.SignInFailed("The portal could not get its own CoreAPI token; try again.")

    monkeypatch.setattr("memory_ui.auth.app_token", no_token)
    response = look_up(carol)
    assert response.status_code == 503
    assert "The portal could not get its own CoreAPI token; try again." in page_text(response)
    assert fake.calls == []


# --- reveal -------------------------------------------------------------------------------------


def test_reveal_shows_the_memory_and_is_audited(carol: Client, fake: FakeCoreAPI):
    subject = looked_up(carol)
    response = carol.post(
        f"{overview(subject)}reveal",
        {"scope_key": "agent:travel-planner", "reason": "User asked what is stored"},
    )
    assert response.status_code == 200
    assert "Travel Planner · alice@contoso.com" in page_text(response)
    assert "aisle seats" in body(response)
    (read,) = fake.called("get_memory")
    assert (read.scope, read.agent_object_id, read.upn) == (
        "agent",
        fake.object_id("travel-planner"),
        ALICE,
    )
    event = AuditEvent.objects.get(action="reveal")
    assert (event.agent_name, event.reason) == ("travel-planner", "User asked what is stored")
    assert event.bytes_before == len(fake.text("travel-planner").encode())


def test_reveal_needs_a_reason(carol: Client, fake: FakeCoreAPI):
    subject = looked_up(carol)
    response = carol.post(f"{overview(subject)}reveal", {"scope_key": "user", "reason": "no"})
    assert response.status_code == 302 and response["Location"] == overview(subject)
    assert not fake.called("get_memory") and not AuditEvent.objects.exists()
    shown = look_up(carol)
    assert "Give a reason (at least 5 characters) to reveal memory." in page_text(shown)


def test_reveal_of_a_memory_the_user_does_not_have_is_404(carol: Client, fake: FakeCoreAPI):
    subject = looked_up(carol)
    response = carol.post(
        f"{overview(subject)}reveal",
        {"scope_key": "agent:finance-insights", "reason": "Looking around"},
    )
    assert refused(response, 404)
    assert not fake.called("get_memory")


def test_reveal_when_coreapi_refuses(carol: Client, fake: FakeCoreAPI, subtests):
    subject = looked_up(carol)
    for failure, method in each_failure(["list_agents", "get_memory"]):
        with subtests.test(failure.name, method=method):
            fail(fake, method, failure)
            response = carol.post(
                f"{overview(subject)}reveal", {"scope_key": "user", "reason": "Asked by user"}
            )
            assert response.status_code == failure.portal_status
            assert refusal(failure.message, failure.portal_status) in page_text(response)
            assert "Prefers concise answers" not in body(response)
            event = AuditEvent.objects.filter(action="reveal").first()  # the newest
            assert event.outcome == "error" and event.reason == "Asked by user"


# --- a deletion request -------------------------------------------------------------------


def test_the_deletion_request_starts_with_a_button_that_says_what_it_starts(
    carol: Client, fake: FakeCoreAPI
):
    html = body(look_up(carol))
    assert '<button type="submit">Start the deletion request</button>' in html
    assert "Start: reason and ticket" not in html  # read as a label, not an action


def test_a_deletion_request_exports_then_clears_every_memory(
    carol: Client, alice: Client, fake: FakeCoreAPI
):
    before = {agent: fake.text(agent) for agent in (None, "it-helpdesk", "travel-planner")}
    request_url = start(carol)
    page = carol.get(request_url)
    assert page.status_code == 200
    text = page_text(page)
    assert "Deletion request PRIV-1234 · alice@contoso.com" in text
    assert REASON in text and "All memories (4)" in text
    assert sha256(before["travel-planner"]) in body(page)  # what will go, by hash
    assert "aisle seats" not in body(page)  # never the content

    archive = export(carol, request_url)
    assert sorted(archive.namelist()) == [
        "agent-benefits-assistant.md",
        "agent-it-helpdesk.md",
        "agent-travel-planner.md",
        "manifest.json",
        "user.md",
    ]
    assert archive.read("agent-travel-planner.md") == before["travel-planner"].encode()
    assert json.loads(archive.read("manifest.json"))["upn"] == ALICE
    exports = AuditEvent.objects.filter(action="export")
    assert {(e.reason, e.ticket, e.outcome) for e in exports} == {(REASON, "PRIV-1234", "ok")}
    assert exports.count() == 4
    assert "Exported" in page_text(carol.get(request_url))

    cleared = clear(carol, request_url)
    assert cleared.status_code == 302
    assert cleared["Location"] == f"{request_url}result"
    assert all(fake.text(agent) == "" for agent in before)
    assert all(call.user_identity and call.upn == ALICE for call in fake.called("clear_memory"))
    clears = AuditEvent.objects.filter(action="clear")
    assert {(e.reason, e.ticket, e.outcome, e.bytes_after) for e in clears} == {
        (REASON, "PRIV-1234", "ok", 0)
    }
    assert clears.get(agent_name="travel-planner").sha256_before == sha256(before["travel-planner"])

    result = carol.get(cleared["Location"])
    html, text = body(result), page_text(result)
    assert result.status_code == 200
    assert "PRIV-1234" in text and REASON in text
    assert "Shared with every agent cleared" in text and "Travel Planner cleared" in text
    assert sha256(before["travel-planner"]) in html and sha256("") in html
    assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT', html)  # when it was cleared
    subject = resolve(request_url).kwargs["subject"]
    assert f'href="/support/audit?subject={subject}&amp;ticket=PRIV-1234"' in html
    audit = carol.get("/support/audit", {"subject": subject, "ticket": "PRIV-1234"})
    assert cells(body(audit)).count("Cleared") == 4 and cells(body(audit)).count("Exported") == 4

    # Reloading the result, or going back, clears nothing more and looks nobody up again.
    fake.calls.clear()
    assert carol.get(cleared["Location"]).status_code == 200
    assert carol.get(overview(subject)).status_code == 200
    assert not fake.called("clear_memory")
    assert AuditEvent.objects.filter(action="lookup").count() == 1

    activity = page_text(alice.get("/activity"))
    assert "Support: carol@contoso.com" in activity
    assert f"{REASON} · PRIV-1234" in activity
    assert "Cleared CoreAPI Travel Planner" in activity


def test_a_request_for_some_memories_exports_and_clears_only_those(
    carol: Client, fake: FakeCoreAPI
):
    request_url = start(carol, scopes=["agent:travel-planner"])
    assert "1 chosen" in page_text(carol.get(request_url))
    archive = export(carol, request_url)
    assert sorted(archive.namelist()) == ["agent-travel-planner.md", "manifest.json"]
    assert clear(carol, request_url).status_code == 302
    assert fake.text("travel-planner") == ""
    assert "Prefers concise answers" in fake.text() and fake.text("it-helpdesk") != ""
    assert [c.agent_object_id for c in fake.called("clear_memory")] == [
        fake.object_id("travel-planner")
    ]


def test_the_request_form_starts_with_nothing_chosen(carol: Client, fake: FakeCoreAPI):
    page = look_up(carol)
    html = body(page)
    boxes = re.findall(r'<input type="checkbox" name="scopes"[^>]*>', html)
    assert len(boxes) == 5  # "All memories" and the four memories
    assert not [box for box in boxes if "checked" in box]
    assert "Tick “All memories”, or only the memories the user asked about." in page_text(page)
    nonce = field_value(html, "nonce")
    requests_url = f"{overview(subject_of(page))}requests"
    refused = carol.post(requests_url, request_fields(nonce, scopes=[]))
    assert refused.status_code == 400
    assert "Tick “All memories” or the ones the user asked about." in page_text(refused)


def test_the_memory_checkboxes_render_through_the_form_renderer(carol: Client, fake: FakeCoreAPI):
    """Like every other field (templates/forms/field.html): each box labelled by its id,
    the error tied to the group and each box marked invalid, the ticks kept."""
    page = look_up(carol)
    html, requests_url = body(page), f"{overview(subject_of(page))}requests"
    boxes = re.findall(r'<input type="checkbox" name="scopes"[^>]*>', html)
    ids = [re.search(r'id="([^"]+)"', box).group(1) for box in boxes]
    assert ids == [f"request-scopes_{n}" for n in range(5)]
    assert all(f'<label for="{box_id}">' in html for box_id in ids)
    assert '<fieldset aria-describedby="request-scopes-help"><legend>Memories</legend>' in html
    nonce = field_value(html, "nonce")
    refused = body(carol.post(requests_url, request_fields(nonce, scopes=["user"], ticket="")))
    assert 'value="user" id="request-scopes_1" checked' in refused
    none = body(carol.post(requests_url, request_fields(nonce, scopes=[])))
    assert 'aria-describedby="request-scopes-help request-scopes-error"' in none
    assert len(re.findall(r'name="scopes" value="[^"]+" aria-invalid="true"', none)) == 5


def test_the_request_page_says_how_the_memories_were_chosen(carol: Client, fake: FakeCoreAPI):
    everything = page_text(carol.get(start(carol)))
    assert "All memories (4): “All memories” was chosen" in everything
    some = page_text(carol.get(start(carol, scopes=["user", "agent:it-helpdesk"])))
    assert "Only the ticked ones: 2 chosen" in some


def test_the_export_tells_the_page_its_download_began(carol: Client, fake: FakeCoreAPI):
    """The request page's export form sends a one-off token (static/js/portal.js); the
    answer carries it back in a cookie, and the page read again shows the export."""
    request_url = start(carol, scopes=["agent:travel-planner"])
    assert "not yet" in page_text(carol.get(request_url))
    response = carol.post(f"{request_url}export", {"download_token": "abc123def456"})
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert response.cookies["download_ready"].value == "abc123def456"
    b"".join(response.streaming_content)
    page = page_text(carol.get(request_url))
    assert "yes, as it is now" in page and "Exported just now." in page
    forged = carol.post(f"{request_url}export", {"download_token": "<script>"})
    assert "download_ready" not in forged.cookies


def test_all_memories_wins_over_single_ticks(carol: Client, fake: FakeCoreAPI):
    request_url = start(carol, scopes=["all", "user"])
    assert "All memories (4)" in page_text(carol.get(request_url))


def test_the_clear_waits_for_the_export(carol: Client, fake: FakeCoreAPI):
    request_url = start(carol)
    response = clear(carol, request_url)
    assert response.status_code == 409
    assert "Nothing was cleared: download the export first." in page_text(response)
    assert not fake.called("clear_memory")
    assert "Prefers concise answers" in fake.text()


@pytest.mark.parametrize("conditional", [False, True], ids=["plain", "if-match"])
def test_a_memory_that_changed_since_the_export_is_not_cleared(
    carol: Client, fake: FakeCoreAPI, conditional: bool
):
    fake.conditional = conditional
    request_url = start(carol, scopes=["user", "agent:travel-planner"])
    export(carol, request_url)
    fake.put(fake.text("travel-planner") + "\n- Added after the export.\n", "travel-planner")
    assert "changed since the export" in page_text(carol.get(request_url))

    result = carol.get(clear(carol, request_url)["Location"])
    text = page_text(result)
    assert "Shared with every agent cleared" in text
    assert "Travel Planner not cleared: It changed since the export" in text
    assert fake.text() == "" and "Added after the export." in fake.text("travel-planner")

    # Exported again, it goes.
    assert "Export again, then clear what changed" in text
    export(carol, request_url)
    result = carol.get(clear(carol, request_url)["Location"])
    assert "Travel Planner cleared" in page_text(result)
    assert fake.text("travel-planner") == ""


def test_a_clear_confirmation_works_once(carol: Client, fake: FakeCoreAPI):
    request_url = start(carol, scopes=["agent:travel-planner"])
    export(carol, request_url)
    nonce = field_value(body(carol.get(request_url)), "nonce")
    first = carol.post(f"{request_url}clear", {"nonce": nonce, "confirm_upn": ALICE})
    assert first.status_code == 302
    replay = carol.post(f"{request_url}clear", {"nonce": nonce, "confirm_upn": ALICE})
    assert replay.status_code == 409
    assert "That confirmation was already used" in page_text(replay)
    assert AuditEvent.objects.filter(action="clear").count() == 1


def test_a_confirmation_holds_only_for_its_user_and_action(carol: Client, fake: FakeCoreAPI):
    """The overview's confirmation starts a request for alice only; one request's clear
    confirmation clears nothing of another request."""
    overview_nonce = field_value(body(look_up(carol)), "nonce")
    bob = looked_up(carol, BOB)
    for_bob = carol.post(f"{overview(bob)}requests", request_fields(overview_nonce))
    assert for_bob.status_code == 409
    assert "That confirmation was already used" in page_text(for_bob)
    assert f"Memory of {BOB}" in page_text(for_bob)
    assert f'value="{REASON}"' in body(for_bob)  # what was typed stays

    first, second = start(carol, scopes=["user"]), start(carol, scopes=["agent:it-helpdesk"])
    export(carol, first)
    export(carol, second)
    first_nonce = field_value(body(carol.get(first)), "nonce")
    crossed = carol.post(f"{second}clear", {"nonce": first_nonce, "confirm_upn": ALICE})
    assert crossed.status_code == 409
    assert not fake.called("clear_memory")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reason": ""}, "This field is required."),
        ({"ticket": "PRIV 1"}, "Use letters, digits and . _ # / : - only."),
        ({"scopes": []}, "Choose the memories to delete, or all of them."),
        ({"scopes": ["agent:finance-insights"]}, "Select a valid choice."),
    ],
    ids=["no-reason", "bad-ticket", "no-memory", "not-hers"],
)
def test_a_request_needs_reason_ticket_and_memories(
    carol: Client, fake: FakeCoreAPI, change, message
):
    page = look_up(carol)
    fields = {**request_fields(field_value(body(page), "nonce")), **change}
    response = carol.post(f"{overview(subject_of(page))}requests", fields)
    assert response.status_code == 400
    assert message in page_text(response)
    if fields["ticket"] == "PRIV-1234":
        assert 'value="PRIV-1234"' in body(response)  # what was typed stays
    assert not fake.called("export_memory") and not fake.called("clear_memory")


def test_the_clear_needs_the_upn_typed_again(carol: Client, fake: FakeCoreAPI):
    request_url = start(carol)
    export(carol, request_url)
    response = clear(carol, request_url, upn=BOB)
    assert response.status_code == 400
    assert f"Type {ALICE} exactly to confirm." in page_text(response)
    assert not fake.called("clear_memory")


def test_a_failed_clear_is_reported_audited_and_retryable(
    carol: Client, fake: FakeCoreAPI, subtests
):
    request_url = start(carol, scopes=["user", "agent:it-helpdesk"])
    export(carol, request_url)
    for (failure,) in each_failure():
        with subtests.test(failure.name):
            fail(fake, "clear_memory", failure)
            cleared = clear(carol, request_url)
            assert cleared.status_code == 302
            result = carol.get(cleared["Location"])
            html, text = body(result), page_text(result)
            assert f"Shared with every agent failed: {failure.message}" in text
            assert f"IT Helpdesk failed: {failure.message}" in text
            errors = AuditEvent.objects.filter(action="clear", outcome="error")
            assert [e.error_status for e in errors[:2]] == [failure.coreapi_status] * 2
            assert fake.text() != ""
            assert field_values(html, "scopes") == ["user", "agent:it-helpdesk"]

    fake.heal()
    retry = {name: field_values(html, name) for name in ("nonce", "confirm_upn", "scopes")}
    retried = carol.post(f"{request_url}clear", retry)
    assert retried.status_code == 302
    text = page_text(carol.get(retried["Location"]))
    assert "Shared with every agent cleared" in text and "IT Helpdesk cleared" in text
    assert "Retry the failed ones" not in text
    assert fake.text() == "" and fake.text("it-helpdesk") == ""


def test_a_failed_export_hands_nothing_over(carol: Client, fake: FakeCoreAPI, subtests):
    """Nothing half-done is downloaded, and the clear still waits for an export."""
    request_url = start(carol)
    for failure, method in each_failure(["export_memory", "get_memory"]):
        with subtests.test(failure.name, method=method):
            fail(fake, method, failure, agent="travel-planner")
            response = carol.post(f"{request_url}export")
            assert response.status_code == failure.portal_status
            assert "Content-Disposition" not in response and not response.streaming
            assert f"Nothing was exported: {failure.message}" in page_text(response)
    fake.heal()
    assert clear(carol, request_url).status_code == 409
    assert not fake.called("clear_memory")


def test_request_steps_when_the_agents_cannot_be_listed(carol: Client, fake: FakeCoreAPI, subtests):
    request_url = start(carol)
    for failure, step in each_failure(["", "export", "clear"]):
        with subtests.test(failure.name, step=step):
            fail(fake, "list_agents", failure)
            fields = {"nonce": "x" * 22, "confirm_upn": ALICE}
            response = (
                carol.post(f"{request_url}{step}", fields) if step else carol.get(request_url)
            )
            assert response.status_code == failure.portal_status
            assert refusal(failure.message, failure.portal_status) in page_text(response)
            assert not fake.called("clear_memory") and not fake.called("export_memory")


# --- audit trail ------------------------------------------------------------------------------------


def test_audit_page_filters_and_exports_csv(carol: Client, fake: FakeCoreAPI):
    alice = subject_of(look_up(carol, ALICE))
    look_up(carol, "bob@contoso.com")
    carol.post(
        f"{overview(alice)}reveal",
        {"scope_key": "agent:travel-planner", "reason": "=HYPERLINK(evil)"},
    )

    # The filter form is a POST: the page it leads to names people by this session's ids.
    filtered = carol.post("/support/audit", {"subject": "bob@contoso.com", "action": "lookup"})
    assert filtered.status_code == 302 and "contoso" not in filtered["Location"]
    page = carol.get(filtered["Location"])
    html = body(page)
    assert page.status_code == 200 and is_page(page)
    assert "bob@contoso.com" in cells(html)
    assert "alice@contoso.com" not in cells(html)
    everything = page_text(carol.get("/support/audit"))
    assert "Travel Planner" in everything and "travel-planner" not in everything

    by_carol = carol.post("/support/audit", {"actor": "carol@contoso.com"})["Location"]
    assert "contoso" not in by_carol
    exported = carol.get(f"{by_carol}&format=csv")
    assert exported.status_code == 200
    assert exported["Content-Type"] == "text/csv; charset=utf-8"
    assert exported["Content-Disposition"] == 'attachment; filename="memory-audit.csv"'
    rows = list(csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode())))
    assert {row["subject_upn"] for row in rows} == {ALICE, "bob@contoso.com"}
    assert {row["action"] for row in rows} == {"lookup", "reveal"}
    (reveal,) = [row for row in rows if row["action"] == "reveal"]
    assert reveal["reason"] == "'=HYPERLINK(evil)"  # never a spreadsheet formula
    assert (reveal["agent_name"], reveal["memory"]) == ("travel-planner", "Travel Planner")


def test_audit_page_with_bad_dates(carol: Client):
    response = carol.get("/support/audit", {"date_from": "yesterday"})
    assert response.status_code == 200
    assert "Check the dates" in page_text(response)
    assert "Nothing recorded yet." in page_text(response)
    typed = carol.post("/support/audit", {"subject": ALICE, "date_from": "yesterday"})
    assert typed.status_code == 400
    assert "Check the dates" in page_text(typed) and f'value="{ALICE}"' in body(typed)


def test_an_audit_filter_from_another_session_is_refused_with_a_way_on(carol: Client):
    dave = signed_in(Client(), "dave@contoso.com", [SUPPORT_ROLE])
    theirs = dave.post("/support/audit", {"subject": ALICE})["Location"]
    response = carol.get(theirs)
    assert response.status_code == 302 and response["Location"] == "/support/audit"
    page = page_text(carol.get(response["Location"]))
    assert "That filter is not open in this session any more: filter again." in page
