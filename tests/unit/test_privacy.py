"""Cache-Control on responses to signed-in requests (memory_ui.web.privacy)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.utils.cache import patch_cache_control

from memory_ui.web.privacy import private_when_signed_in

# Tests don't run collectstatic: pages find their static files through the finders.
pytestmark = pytest.mark.usefixtures("static_from_finders")

BACKEND = "memory_ui.auth.EntraBackend"


def directives(response: HttpResponse) -> set[str]:
    return {part.strip() for part in response.get("Cache-Control", "").split(",") if part.strip()}


def signed_in_client(roles: tuple[str, ...] = ()) -> Client:
    client = Client()
    user = get_user_model().objects.create(username="a11ce000-0000-4000-8000-000000000001")
    client.force_login(user, backend=BACKEND)
    # The identity from the id_token, as memory_ui.auth.remember_sign_in keeps it.
    session = client.session
    session["entra_identity"] = {
        "oid": user.username,
        "tid": "3f1b8f5e-6a2c-4d8e-9b7a-5c4d3e2f1a0b",
        "upn": "alice@contoso.com",
        "name": "Alice Example",
        "roles": list(roles),
        "home_account_id": f"{user.username}.3f1b8f5e-6a2c-4d8e-9b7a-5c4d3e2f1a0b",
    }
    session.save()
    return client


@pytest.mark.django_db
def test_signed_in_page_is_neither_stored_nor_shared():
    # The support look-up form: a signed-in page that makes no CoreAPI call.
    response = signed_in_client(roles=("Memory.Support",)).get("/support/")
    assert response.status_code == 200
    assert {"no-store", "private"} <= directives(response)


@pytest.mark.django_db
def test_signed_in_csv_download_is_neither_stored_nor_shared():
    response = signed_in_client(roles=("Memory.Support",)).get("/support/audit?format=csv")
    assert response.status_code == 200
    assert response.streaming
    assert {"no-store", "private"} <= directives(response)


@pytest.mark.django_db
def test_the_same_page_for_an_anonymous_request_is_left_alone(client: Client):
    signed_in = signed_in_client().get("/auth/signed-out")
    anonymous = client.get("/auth/signed-out")
    assert {"no-store", "private"} <= directives(signed_in)
    assert anonymous.status_code == 200
    assert "private" not in directives(anonymous)
    assert "no-store" not in directives(anonymous)


@pytest.mark.django_db
def test_anonymous_healthz_has_only_never_cache_headers(client: Client):
    # never_cache itself sends `private` (Django adds it since 3.0); the middleware adds
    # nothing to an anonymous answer.
    response = client.get("/healthz")
    assert response.status_code == 200
    assert directives(response) == {
        "max-age=0",
        "no-cache",
        "no-store",
        "must-revalidate",
        "private",
    }


@pytest.mark.django_db
def test_never_cache_response_keeps_its_stricter_directives():
    response = signed_in_client().get("/healthz")  # never_cache
    assert response.status_code == 200
    assert {"no-store", "private", "no-cache", "max-age=0", "must-revalidate"} <= directives(
        response
    )
    assert "Expires" in response


@pytest.mark.django_db
def test_public_caching_set_by_a_view_becomes_private():
    def view(request):
        response = HttpResponse("yours")
        patch_cache_control(response, public=True, max_age=600, no_cache=True)
        return response

    request = RequestFactory().get("/anything")
    request.user = get_user_model().objects.create(username="someone")
    response = private_when_signed_in(view)(request)
    assert directives(response) == {"private", "no-store", "max-age=600", "no-cache"}


def test_anonymous_request_keeps_the_views_caching():
    def view(request):
        response = HttpResponse("public page")
        patch_cache_control(response, public=True, max_age=600)
        return response

    request = RequestFactory().get("/anything")
    request.user = AnonymousUser()
    response = private_when_signed_in(view)(request)
    assert directives(response) == {"public", "max-age=600"}
