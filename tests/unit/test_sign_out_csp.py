"""CSP form-action allows the IdP's end-session origin (memory_ui.auth.sign_out_form_action):
the sign-out form's redirect to the IdP is checked against the policy of the page holding
the form, so every page carries it, following ENTRA_AUTHORITY as configured at the time."""

from __future__ import annotations

import pytest
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.utils.csp import CSP
from django.views.decorators.csp import csp_override

from memory_ui import auth

pytestmark = pytest.mark.usefixtures("static_from_finders")


def csp_directives(response: HttpResponse) -> dict[str, list[str]]:
    policy = response[CSP.HEADER_ENFORCE]
    return {
        name: values
        for name, *values in (part.split() for part in policy.split(";") if part.strip())
    }


@pytest.mark.parametrize(
    ("authority", "origin"),
    [
        ("https://login.microsoftonline.com/tenant-id", "https://login.microsoftonline.com"),
        ("https://127.0.0.1:8443/tenant/", "https://127.0.0.1:8443"),
        ("https://user@idp.example:9443/tenant?x=1", "https://idp.example:9443"),
        ("not a url", ""),
    ],
)
def test_end_session_origin(settings, authority, origin):
    settings.ENTRA_AUTHORITY = authority
    assert auth.end_session_origin() == origin


@pytest.mark.django_db
def test_every_page_may_post_to_the_portal_and_the_idp_only(settings, client: Client):
    settings.ENTRA_AUTHORITY = (
        "https://login.microsoftonline.com/3f1b8f5e-6a2c-4d8e-9b7a-5c4d3e2f1a0b"
    )
    response = client.get("/auth/signed-out")
    directives = csp_directives(response)
    assert directives["form-action"] == ["'self'", "https://login.microsoftonline.com"]
    # The rest of the policy is the configured one, nonce included.
    assert directives["default-src"] == ["'self'"]
    assert directives["script-src"][0] == "'self'"
    assert directives["script-src"][1].startswith("'nonce-")


@pytest.mark.django_db
def test_the_origin_follows_the_setting_at_request_time(settings, client: Client):
    settings.ENTRA_AUTHORITY = "https://127.0.0.1:50123/tenant"
    assert csp_directives(client.get("/auth/signed-out"))["form-action"] == [
        "'self'",
        "https://127.0.0.1:50123",
    ]


@pytest.mark.django_db
def test_an_origin_configured_already_is_not_repeated(settings, client: Client):
    settings.ENTRA_AUTHORITY = "https://login.microsoftonline.com/tenant"
    settings.SECURE_CSP = {
        **settings.SECURE_CSP,
        "form-action": [CSP.SELF, "https://login.microsoftonline.com"],
    }
    assert csp_directives(client.get("/auth/signed-out"))["form-action"] == [
        "'self'",
        "https://login.microsoftonline.com",
    ]


def test_a_views_own_policy_wins(settings):
    settings.ENTRA_AUTHORITY = "https://login.microsoftonline.com/tenant"
    own = {"default-src": [CSP.NONE]}
    view = csp_override(own)(lambda request: HttpResponse("own policy"))
    response = auth.sign_out_form_action(view)(RequestFactory().get("/"))
    assert response._csp_config is own


def test_a_policy_without_form_action_is_not_narrowed(settings):
    settings.SECURE_CSP = {"default-src": [CSP.SELF]}
    response = auth.sign_out_form_action(lambda request: HttpResponse("ok"))(
        RequestFactory().get("/")
    )
    assert not hasattr(response, "_csp_config")
