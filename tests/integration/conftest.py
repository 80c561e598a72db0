"""The portal (Django test client or live server) wired to the real devstack over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
import requests
from django.core.cache import cache
from django.test import Client

from devstack.config import Fixtures
from devstack.pki import Pki
from devstack.serve import RunningServer
from memory_ui import auth
from memory_ui.sources.coreapi import client as coreapi_client
from tests.pages import form_with_button

# Registered for the devstack portal client; the test client follows the redirect by path.
REDIRECT_URI = "http://127.0.0.1:8000/auth/callback"


def _reset_portal_caches() -> None:
    auth.reset_caches()
    coreapi_client.get_client.cache_clear()
    cache.clear()


@pytest.fixture
def portal(
    settings,
    static_from_finders,
    idp: RunningServer,
    portal_coreapi: RunningServer,
    pki: Pki,
    demo: Fixtures,
) -> Iterator[None]:
    """Point the portal's settings at the devstack servers started for this test session."""
    settings.ENTRA_AUTHORITY = f"{idp.url}/{demo.tenant_id}"
    settings.ENTRA_CLIENT_ID = demo.portal.client_id
    settings.ENTRA_CLIENT_SECRET = demo.portal.client_secret
    settings.ENTRA_INSTANCE_DISCOVERY = False
    settings.LEGACY_STORES_BASE_URL = ""  # on only where a test starts an emulator
    settings.MEMORYOS_BASE_URL = ""  # likewise
    settings.ENTRA_REDIRECT_URI = REDIRECT_URI
    settings.PORTAL_CA_BUNDLE = str(pki.ca_cert)
    settings.COREAPI_BASE_URL = portal_coreapi.url
    settings.COREAPI_CA_BUNDLE = ""
    _reset_portal_caches()
    yield
    _reset_portal_caches()


def idp_sign_in(authorize_url: str, upn: str, ca: str) -> str:
    """Pick `upn` on the IdP's picker like a person would; returns the redirect back."""
    with requests.Session() as browser:
        page = browser.get(authorize_url, verify=ca, timeout=10)
        assert page.status_code == 200, page.text[:500]
        form = form_with_button(page.text, "upn", upn, base_url=page.url)
        answer = browser.post(
            form.action,
            data={**form.fields, "upn": upn},
            verify=ca,
            allow_redirects=False,
            timeout=10,
        )
    assert answer.status_code in (302, 303), answer.text[:500]
    return answer.headers["Location"]


def sign_in(client: Client, upn: str, ca: str, next_url: str = "/") -> None:
    start = client.get("/auth/login", {"next": next_url})
    assert start.status_code == 302
    back = urlsplit(idp_sign_in(start["Location"], upn, ca))
    done = client.get(f"{back.path}?{back.query}")
    assert done.status_code == 302, done.content[:500]
    assert done["Location"] == next_url


@pytest.fixture
def alice(client: Client, portal: None, pki: Pki, db) -> Client:
    sign_in(client, "alice@contoso.com", str(pki.ca_cert))
    return client


@pytest.fixture
def bob(client: Client, portal: None, pki: Pki, db) -> Client:
    sign_in(client, "bob@contoso.com", str(pki.ca_cert))
    return client


@pytest.fixture
def carol(client: Client, portal: None, pki: Pki, db) -> Client:
    """Support staff (Memory.Support app role)."""
    sign_in(client, "carol@contoso.com", str(pki.ca_cert))
    return client


@pytest.fixture
def portal_identity(settings, idp: RunningServer, pki: Pki, demo: Fixtures) -> Iterator[None]:
    """The portal's Entra settings against the test IdP, so legacy_app_token is real."""
    settings.ENTRA_AUTHORITY = f"{idp.url}/{demo.tenant_id}"
    settings.ENTRA_CLIENT_ID = demo.portal.client_id
    settings.ENTRA_CLIENT_SECRET = demo.portal.client_secret
    settings.ENTRA_INSTANCE_DISCOVERY = False
    settings.PORTAL_CA_BUNDLE = str(pki.ca_cert)
    auth.reset_caches()
    yield
    auth.reset_caches()
