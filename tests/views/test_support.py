"""Support staff: look a user up, reveal, clear or export on their behalf, the audit trail.
Support calls carry the portal's app token and X-USER-IDENTITY; end users get 403."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest
from django.test import Client

from memory_ui import auth
from memory_ui.models import AuditEvent
from tests.fake_coreapi import FakeCoreAPI
from tests.views.conftest import SUPPORT_ROLE, signed_in
from tests.views.helpers import (
    FAILURES,
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
OVERVIEW = f"/support/users/{ALICE}/"
LOOK_UP_ALICE = "/support/?upn=alice%40contoso.com"
REFUSED_403 = "CoreAPI refused to act for this user."

SUPPORT_URLS = [
    ("get", "/support/"),
    ("get", f"/support/?upn={ALICE}"),
    ("post", "/support/"),
    ("get", "/support/audit"),
    ("get", "/support/audit?format=csv"),
    ("get", OVERVIEW),
    ("post", f"{OVERVIEW}reveal"),
    ("post", f"{OVERVIEW}clear"),
    ("post", f"{OVERVIEW}export"),
]


def refusal(message: str, portal_status: int) -> str:
    """What the overview says when CoreAPI refuses a support call."""
    return REFUSED_403 if portal_status == 403 else message


def look_up(client: Client, upn: str = ALICE):
    """As staff do it: the look-up form's POST, then the overview it leads to."""
    found = client.post("/support/", {"upn": upn})
    assert found.status_code == 302
    assert found["Location"] == f"/support/users/{upn}/"
    return client.get(found["Location"])


def looked_up(client: Client, upn: str = ALICE) -> Client:
    """`client` after the look-up form's POST for `upn`, without opening the overview (so
    no CoreAPI call and no audit event yet)."""
    assert client.post("/support/", {"upn": upn}).status_code == 302
    return client


def nonces(client: Client, upn: str = ALICE) -> dict[str, str]:
    """The single-use confirmations of the overview's export and clear forms."""
    export, clear = field_values(body(look_up(client, upn)), "nonce")
    return {"export": export, "clear": clear}


def on_behalf(nonce: str, **fields: object) -> dict[str, object]:
    return {
        "nonce": nonce,
        "reason": "Privacy request by email",
        "ticket": "PRIV-1234",
        "confirm_upn": ALICE,
        **fields,
    }


# --- who may ------------------------------------------------------------------------------


def test_support_urls_are_forbidden_to_end_users(alice: Client, fake: FakeCoreAPI, subtests):
    for method, url in SUPPORT_URLS:
        with subtests.test(method=method, url=url):
            data = {"reason": "x" * 10, "scope_key": "user", "upn": ALICE}
            response = getattr(alice, method)(url, data if method == "post" else None)
            assert refused(response, 403)
    assert fake.calls == []
    assert not AuditEvent.objects.exists()


@pytest.mark.parametrize(("method", "url"), SUPPORT_URLS[:3])
def test_support_urls_need_sign_in(client: Client, fake: FakeCoreAPI, method: str, url: str):
    response = getattr(client, method)(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/auth/login")


# --- look-up --------------------------------------------------------------------------------


def test_support_home(carol: Client, fake: FakeCoreAPI):
    response = carol.get("/support/", {"upn": ALICE})
    assert response.status_code == 200
    assert is_page(response)
    assert "Support: a user" in body(response)
    assert f'value="{ALICE}"' in body(response)  # prefilled, not looked up
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


def test_a_malformed_upn_in_the_url_is_400(carol: Client, fake: FakeCoreAPI):
    response = carol.get("/support/users/not-an-upn/")
    assert response.status_code == 400
    assert "Enter a user principal name" in page_text(response)
    assert fake.calls == []


def test_lookup_shows_what_exists_without_content(carol: Client, fake: FakeCoreAPI):
    response = look_up(carol)
    html = body(response)
    assert response.status_code == 200
    assert is_page(response)
    assert f"Memory of {ALICE}" in html
    for label in ("Your memory", "Benefits Assistant", "IT Helpdesk", "Travel Planner"):
        assert label in html
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
    response = carol.get(OVERVIEW)
    assert response.status_code == 302
    assert response["Location"] == LOOK_UP_ALICE
    assert fake.calls == [] and not AuditEvent.objects.exists()


@pytest.mark.parametrize("action", ["reveal", "export", "clear"])
def test_reveal_export_and_clear_need_a_look_up_in_this_session(
    carol: Client, fake: FakeCoreAPI, action: str
):
    """Even with confirmations from a look-up in another session of the same staff member."""
    elsewhere = signed_in(Client(), "carol@contoso.com", [SUPPORT_ROLE])
    confirmations = nonces(elsewhere)
    fake.calls.clear()
    response = carol.post(
        f"{OVERVIEW}{action}",
        {
            **on_behalf(confirmations.get(action, ""), scopes=["user", "agent:travel-planner"]),
            "scope_key": "user",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == LOOK_UP_ALICE
    assert fake.calls == []
    assert not AuditEvent.objects.exclude(action="lookup").exists()
    assert "Prefers concise answers" in fake.text() and "aisle seats" in fake.text("travel-planner")
    form = carol.get(response["Location"])
    assert f'value="{ALICE}"' in body(form)  # prefilled, not looked up
    assert f"Look {ALICE} up first; nothing was done." in page_text(form)
    assert fake.calls == []


def test_a_look_up_opens_only_that_user(carol: Client, fake: FakeCoreAPI):
    looked_up(carol, ALICE)
    response = carol.post(
        f"/support/users/{BOB}/reveal", {"scope_key": "user", "reason": "User asked"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/support/?upn=bob%40contoso.com"
    assert fake.calls == [] and not AuditEvent.objects.exists()


def test_an_upper_case_upn_is_looked_up_in_lower_case(carol: Client, fake: FakeCoreAPI):
    """Entra compares UPNs case-insensitively; the portal uses one form, lower case, for the
    overview's address, X-USER-IDENTITY, the audit trail and the confirmations."""
    found = carol.post("/support/", {"upn": "  ALICE@CONTOSO.COM "})
    assert found.status_code == 302
    assert found["Location"] == OVERVIEW
    page = carol.get(found["Location"])
    assert page.status_code == 200
    assert f"Memory of {ALICE}" in page_text(page)
    assert fake.calls and all(call.upn == ALICE for call in fake.calls)
    assert AuditEvent.objects.get(action="lookup").subject_upn == ALICE

    # Another spelling of the address leads to the same page; the confirmations hold for it.
    assert carol.get("/support/users/Alice@Contoso.COM/")["Location"] == OVERVIEW
    export = field_values(body(page), "nonce")[0]
    fake.calls.clear()
    response = carol.post(
        "/support/users/ALICE@CONTOSO.COM/export",
        on_behalf(export, confirm_upn="Alice@Contoso.com"),
    )
    assert response.status_code == 200
    assert "memory-alice_contoso.com-" in response["Content-Disposition"]
    b"".join(response.streaming_content)
    assert fake.called("export_memory")
    assert all(call.upn == ALICE for call in fake.calls)
    subjects = AuditEvent.objects.filter(action="export").values_list("subject_upn", flat=True)
    assert set(subjects) == {ALICE}


def test_an_upper_case_address_without_a_look_up_prefills_lower_case(
    carol: Client, fake: FakeCoreAPI
):
    response = carol.get("/support/users/ALICE@CONTOSO.COM/")
    assert response.status_code == 302
    assert response["Location"] == LOOK_UP_ALICE
    assert fake.calls == [] and not AuditEvent.objects.exists()


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
    looked_up(carol)
    response = carol.post(
        f"{OVERVIEW}reveal",
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
    looked_up(carol)
    response = carol.post(f"{OVERVIEW}reveal", {"scope_key": "user", "reason": "no"})
    assert response.status_code == 302 and response["Location"] == OVERVIEW
    assert not fake.called("get_memory") and not AuditEvent.objects.exists()
    shown = look_up(carol)
    assert "Give a reason (at least 5 characters) to reveal memory." in page_text(shown)


def test_reveal_of_a_memory_the_user_does_not_have_is_404(carol: Client, fake: FakeCoreAPI):
    looked_up(carol)
    response = carol.post(
        f"{OVERVIEW}reveal", {"scope_key": "agent:finance-insights", "reason": "Looking around"}
    )
    assert refused(response, 404)
    assert not fake.called("get_memory")


def test_reveal_when_coreapi_refuses(carol: Client, fake: FakeCoreAPI, subtests):
    looked_up(carol)
    for failure, method in each_failure(["list_agents", "get_memory"]):
        with subtests.test(failure.name, method=method):
            fail(fake, method, failure)
            response = carol.post(
                f"{OVERVIEW}reveal", {"scope_key": "user", "reason": "Asked by user"}
            )
            assert response.status_code == failure.portal_status
            assert refusal(failure.message, failure.portal_status) in page_text(response)
            assert "Prefers concise answers" not in body(response)
            event = AuditEvent.objects.filter(action="reveal").first()  # the newest
            assert event.outcome == "error" and event.reason == "Asked by user"


# --- clear on the user's behalf ----------------------------------------------------------------


def test_clear_one_memory_for_the_user(carol: Client, alice: Client, fake: FakeCoreAPI):
    nonce = nonces(carol)["clear"]
    fake.calls.clear()
    response = carol.post(
        f"{OVERVIEW}clear",
        on_behalf(nonce, confirm_upn="ALICE@contoso.com", scopes=["agent:travel-planner"]),
    )
    assert response.status_code == 200
    assert "Travel Planner: cleared" in page_text(response)
    assert fake.text("travel-planner") == ""
    assert "Prefers concise answers" in fake.text()
    (clear,) = fake.called("clear_memory")
    assert clear.user_identity and clear.upn == ALICE
    event = AuditEvent.objects.get(action="clear")
    assert (event.reason, event.ticket, event.agent_name, event.outcome) == (
        "Privacy request by email",
        "PRIV-1234",
        "travel-planner",
        "ok",
    )
    assert event.actor_is_support and event.bytes_after == 0

    activity = page_text(alice.get("/activity"))
    assert "Support: carol@contoso.com" in activity
    assert "Privacy request by email · PRIV-1234" in activity


def test_a_confirmation_works_once(carol: Client, fake: FakeCoreAPI):
    nonce = nonces(carol)["clear"]
    first = carol.post(f"{OVERVIEW}clear", on_behalf(nonce, scopes=["agent:travel-planner"]))
    assert first.status_code == 200
    replay = carol.post(f"{OVERVIEW}clear", on_behalf(nonce, scopes=["user"]))
    assert replay.status_code == 409
    assert "That confirmation was already used" in page_text(replay)
    assert 'value="Privacy request by email"' in body(replay)  # what was typed stays
    assert "Prefers concise answers" in fake.text()
    assert AuditEvent.objects.filter(action="clear").count() == 1


@pytest.mark.parametrize(
    ("upn", "action"), [(BOB, "export"), (ALICE, "clear")], ids=["other-user", "other-action"]
)
def test_a_confirmation_holds_only_for_its_user_and_action(
    carol: Client, fake: FakeCoreAPI, upn: str, action: str
):
    """A confirmation from alice's export form exports nothing else: not bob's memory, even
    though carol looked bob up too, and not a clear of alice's."""
    looked_up(carol, BOB)
    alice_export = nonces(carol)["export"]
    fake.calls.clear()
    fields = on_behalf(alice_export, confirm_upn=upn, scopes=["user"])
    response = carol.post(f"/support/users/{upn}/{action}", fields)
    assert response.status_code == 409
    assert "That confirmation was already used" in page_text(response)
    assert f"Memory of {upn}" in page_text(response)
    assert 'value="Privacy request by email"' in body(response)  # what was typed stays
    assert 'value="PRIV-1234"' in body(response)
    assert not fake.called("export_memory") and not fake.called("clear_memory")
    assert not AuditEvent.objects.filter(action__in=["export", "clear"]).exists()
    assert "Prefers concise answers" in fake.text()

    # Sent elsewhere, it is used up; the page's fresh confirmation for this user works.
    assert carol.post(f"{OVERVIEW}export", on_behalf(alice_export)).status_code == 409
    fresh = dict(zip(("export", "clear"), field_values(body(response), "nonce"), strict=True))
    retried = carol.post(f"/support/users/{upn}/{action}", {**fields, "nonce": fresh[action]})
    assert retried.status_code == 200
    assert {e.subject_upn for e in AuditEvent.objects.filter(action=action)} == {upn}


def test_the_retry_confirmation_only_clears(carol: Client, fake: FakeCoreAPI):
    """The results page's retry confirmation is for clearing that user's memory, nothing else."""
    fail(fake, "clear_memory", next(f for f in FAILURES if f.name == "unavailable"))
    result = carol.post(f"{OVERVIEW}clear", on_behalf(nonces(carol)["clear"], scopes=["user"]))
    retry_nonce = field_value(body(result), "nonce")
    fake.heal()
    fake.calls.clear()
    export = carol.post(f"{OVERVIEW}export", on_behalf(retry_nonce))
    assert export.status_code == 409
    assert not fake.called("export_memory")
    assert not AuditEvent.objects.filter(action="export").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reason": ""}, "This field is required."),
        ({"ticket": "PRIV 1"}, "Use letters, digits and . _ # / : - only."),
        ({"confirm_upn": "bob@contoso.com"}, f"Type {ALICE} exactly to confirm."),
        ({"scopes": []}, "Choose at least one memory to clear."),
    ],
    ids=["no-reason", "bad-ticket", "wrong-upn", "no-scope"],
)
def test_clear_needs_reason_ticket_typed_upn_and_a_memory(
    carol: Client, fake: FakeCoreAPI, change, message
):
    nonce = nonces(carol)["clear"]
    fields = {**on_behalf(nonce, scopes=["agent:travel-planner"]), **change}
    response = carol.post(f"{OVERVIEW}clear", fields)
    assert response.status_code == 400
    assert message in page_text(response)
    if fields["ticket"] == "PRIV-1234":
        assert 'value="PRIV-1234"' in body(response)  # what was typed stays
    assert fake.text("travel-planner") != ""
    assert not fake.called("clear_memory")


def test_a_failed_clear_is_reported_audited_and_retryable(
    carol: Client, fake: FakeCoreAPI, subtests
):
    fields = on_behalf(nonces(carol)["clear"], scopes=["user", "agent:it-helpdesk"])
    for failure, method in each_failure(["clear_memory", "get_memory"]):
        with subtests.test(failure.name, method=method):
            fail(fake, method, failure)
            result = carol.post(f"{OVERVIEW}clear", fields)
            html = body(result)
            assert result.status_code == 200  # the page reports each one
            assert f"Your memory: failed: {failure.message}" in page_text(result)
            assert f"IT Helpdesk: failed: {failure.message}" in page_text(result)
            errors = AuditEvent.objects.filter(action="clear", outcome="error")
            assert [e.error_status for e in errors[:2]] == [failure.coreapi_status] * 2
            assert fake.text() != ""
            # The next attempt is the page's own retry form, with a fresh confirmation.
            fields = {
                "nonce": field_value(html, "nonce"),
                "reason": field_value(html, "reason"),
                "ticket": field_value(html, "ticket"),
                "confirm_upn": field_value(html, "confirm_upn"),
                "scopes": field_values(html, "scopes"),
            }
            assert fields["scopes"] == ["user", "agent:it-helpdesk"]

    fake.heal()
    retried = carol.post(f"{OVERVIEW}clear", fields)
    assert retried.status_code == 200
    assert "Your memory: cleared" in page_text(retried)
    assert fake.text() == "" and fake.text("it-helpdesk") == ""


def test_on_behalf_actions_when_the_agents_cannot_be_listed(
    carol: Client, fake: FakeCoreAPI, subtests
):
    confirmations = nonces(carol)  # not used up: nothing gets that far
    for failure, action in each_failure(["clear", "export"]):
        with subtests.test(failure.name, action=action):
            fail(fake, "list_agents", failure)
            response = carol.post(
                f"{OVERVIEW}{action}", on_behalf(confirmations[action], scopes=["user"])
            )
            assert response.status_code == failure.portal_status
            assert refusal(failure.message, failure.portal_status) in page_text(response)
            assert not fake.called("clear_memory") and not fake.called("export_memory")


# --- export on the user's behalf -----------------------------------------------------------------


def test_export_everything_for_the_user(carol: Client, fake: FakeCoreAPI):
    nonce = nonces(carol)["export"]
    response = carol.post(f"{OVERVIEW}export", on_behalf(nonce, ticket="DSAR-7"))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert "memory-alice_contoso.com-" in response["Content-Disposition"]
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["upn"] == ALICE
    assert {f["agent_name"] for f in manifest["files"] if f["scope"] == "agent"} == {
        "benefits-assistant",
        "it-helpdesk",
        "travel-planner",
    }
    assert archive.read("agent-travel-planner.md") == fake.text("travel-planner").encode()
    exports = AuditEvent.objects.filter(action="export")
    assert {(e.reason, e.ticket, e.outcome) for e in exports} == {
        ("Privacy request by email", "DSAR-7", "ok")
    }
    assert exports.count() == 4
    assert all(c.upn == ALICE for c in fake.called("export_memory"))

    again = carol.post(f"{OVERVIEW}export", on_behalf(nonce, ticket="DSAR-7"))
    assert again.status_code == 409


def test_a_failed_export_for_the_user_is_a_refusal_page(carol: Client, fake: FakeCoreAPI, subtests):
    """Nothing half-done is downloaded: every document is fetched before the first byte."""
    for failure, method in each_failure(["export_memory", "get_memory"]):
        with subtests.test(failure.name, method=method):
            nonce = nonces(carol)["export"]  # a refusal page has no form to retry from
            fail(fake, method, failure, agent="travel-planner")
            response = carol.post(f"{OVERVIEW}export", on_behalf(nonce))
            assert response.status_code == failure.portal_status
            assert "Content-Disposition" not in response
            assert refusal(failure.message, failure.portal_status) in page_text(response)
            assert not response.streaming


# --- audit trail ------------------------------------------------------------------------------------


def test_audit_page_filters_and_exports_csv(carol: Client, fake: FakeCoreAPI):
    look_up(carol, ALICE)
    look_up(carol, "bob@contoso.com")
    carol.post(f"{OVERVIEW}reveal", {"scope_key": "user", "reason": "=HYPERLINK(evil)"})

    page = carol.get("/support/audit", {"subject": "bob@contoso.com", "action": "lookup"})
    html = body(page)
    assert page.status_code == 200 and is_page(page)
    assert "<td>bob@contoso.com</td>" in html
    assert "<td>alice@contoso.com</td>" not in html

    exported = carol.get("/support/audit", {"actor": "carol@contoso.com", "format": "csv"})
    assert exported.status_code == 200
    assert exported["Content-Type"] == "text/csv; charset=utf-8"
    assert exported["Content-Disposition"] == 'attachment; filename="memory-audit.csv"'
    rows = list(csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode())))
    assert {row["subject_upn"] for row in rows} == {ALICE, "bob@contoso.com"}
    assert {row["action"] for row in rows} == {"lookup", "reveal"}
    (reveal,) = [row for row in rows if row["action"] == "reveal"]
    assert reveal["reason"] == "'=HYPERLINK(evil)"  # never a spreadsheet formula


def test_audit_page_with_bad_dates(carol: Client):
    response = carol.get("/support/audit", {"date_from": "yesterday"})
    assert response.status_code == 200
    assert "Check the dates" in page_text(response)
    assert "Nothing recorded yet." in page_text(response)
