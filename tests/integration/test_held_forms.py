"""A form sent after the session itself ended keeps what was typed through sign-in, for
the person it was rendered for only (memory_ui/web/held_forms.py), against the real
devstack sign-in."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client

from memory_ui.web.held_forms import HELD_COOKIE, OWNER_FIELD
from tests.integration.conftest import sign_in
from tests.integration.test_changes import Agent, agent, portal_coreapi  # noqa: F401 (fixtures)
from tests.pages import forms

pytestmark = pytest.mark.django_db

NOTE = "- Prefers tea\r\n- No sugar"


def _note_form(client: Client) -> dict[str, str]:
    page = client.get("/memory/append", {"scope": "user"}).content.decode()
    return next(f for f in forms(page) if f.action == "/memory/append").fields


def _end_session(client: Client, how: str) -> None:
    if how == "cookie expired":
        del client.cookies[settings.SESSION_COOKIE_NAME]
    else:  # cleared on the server
        Session.objects.all().delete()


@pytest.mark.parametrize("how", ["cookie expired", "cleared on the server"])
@pytest.mark.parametrize("htmx", [False, True], ids=["page", "htmx"])
def test_a_note_sent_after_the_session_ended_comes_back_after_sign_in(
    alice: Client,
    agent: Agent,  # noqa: F811
    pki,
    how: str,
    htmx: bool,
):
    before = agent.text()
    fields = _note_form(alice)
    assert fields[OWNER_FIELD]
    _end_session(alice, how)
    headers = (
        {"HTTP_HX_REQUEST": "true", "HTTP_HX_CURRENT_URL": "http://testserver/memory/user"}
        if htmx
        else {"HTTP_REFERER": "http://testserver/memory/user"}
    )

    sent = alice.post("/memory/append", {**fields, "content": NOTE, "reason": "Said so"}, **headers)

    login = "/auth/login?next=%2Fmemory%2Fuser"  # back to the page, not the POST-only URL
    assert (sent["HX-Redirect"] if htmx else sent["Location"]) == login
    assert alice.cookies[HELD_COOKIE]["httponly"]
    assert agent.text() == before
    sign_in(alice, "alice@contoso.com", str(pki.ca_cert), next_url="/memory/user")
    page = alice.get("/memory/user").content.decode()
    assert "Your session had ended. Nothing was sent; it is kept below." in page
    assert "- Prefers tea\r\n- No sugar</textarea>" in page
    kept = next(f for f in forms(page) if f.action == "/memory/append")
    again = alice.post("/memory/append", {**kept.fields, "content": NOTE, "reason": "Said so"})
    assert again.status_code == 302
    assert agent.text().endswith("— Said so\n\n- Prefers tea\n- No sugar\n")
    # Given back once: the next visit is the plain page.
    assert "Prefers tea\r\n" not in alice.get("/memory/user").content.decode()


def test_someone_else_signing_in_on_that_browser_never_sees_it(
    alice: Client,
    agent: Agent,  # noqa: F811
    pki,
):
    fields = _note_form(alice)
    _end_session(alice, "cookie expired")
    alice.post(
        "/memory/append",
        {**fields, "content": "- A private note"},
        HTTP_REFERER="http://testserver/memory/user",
    )
    assert alice.cookies[HELD_COOKIE].value  # held for whoever signs in next on it
    sign_in(alice, "bob@contoso.com", str(pki.ca_cert), next_url="/memory/user")
    assert "A private note" not in alice.get("/memory/user").content.decode()
    # Dropped then: alice signing in after bob does not get it either.
    sign_in(alice, "alice@contoso.com", str(pki.ca_cert), next_url="/memory/user")
    assert "A private note" not in alice.get("/memory/user").content.decode()


def test_a_post_without_a_valid_owner_hint_is_not_held(client: Client, portal):
    for hint in ("", "alice", "InZpY3RpbSI:forged"):
        sent = client.post("/memory/append", {"scope": "user", "content": "- x", OWNER_FIELD: hint})
        assert sent.status_code == 302
        assert HELD_COOKIE not in sent.cookies
