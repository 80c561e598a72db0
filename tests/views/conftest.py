"""View tests without servers: every view through Django's test client, with CoreAPI
replaced by `tests.fake_coreapi.FakeCoreAPI` and sign-in done without the IdP.

Exactly two things are replaced; nothing else is mocked:

- the CoreAPI client: `memory_ui.sources.coreapi.client.get_client` returns the fake (the portal
  looks that function up at call time), so every CoreAPI call of a view reaches the fake;
- the token functions `memory_ui.auth.coreapi_token` (the user's delegated token) and
  `memory_ui.auth.app_token` (the portal's own, for support calls). They stand in for msal
  and the IdP and return fixed fake tokens; msal, the IdP and real tokens are covered for
  real by tests/integration against the devstack.

Users are signed in as the sign-in callback signs them in (`EntraBackend` makes the Django
user, then login and the identity in the session): see `signed_in`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client

from memory_ui.auth import EntraBackend, Identity
from tests.fake_coreapi import FakeCoreAPI

USER_TOKEN = "fake-delegated-token"
APP_TOKEN = "fake-app-token"
BACKEND = "memory_ui.auth.EntraBackend"
SESSION_IDENTITY = "entra_identity"  # memory_ui.auth.SESSION_IDENTITY
SUPPORT_ROLE = "Memory.Support"


def identity_for(upn: str, roles: tuple[str, ...] = ()) -> Identity:
    """What the id_token would say about `upn` (the oid derived from it)."""
    oid = str(uuid.uuid5(uuid.NAMESPACE_URL, upn.casefold()))
    tid = settings.DEVSTACK_TENANT_ID
    return Identity(
        oid=oid,
        tid=tid,
        upn=upn,
        name=f"{upn.split('@')[0].capitalize()} Example",
        roles=tuple(roles),
        home_account_id=f"{oid}.{tid}",
    )


def signed_in(client: Client, upn: str, roles: tuple[str, ...] | list[str] = ()) -> Client:
    """`client` signed in as `upn`: the Django user from `EntraBackend`, Django's login,
    and the identity in the session as `auth.remember_sign_in` writes it. There is no
    msal token cache: the token functions are replaced (see the `fake` fixture)."""
    identity = identity_for(upn, tuple(roles))
    user = EntraBackend().authenticate(None, identity=identity)
    assert user is not None
    client.force_login(user, backend=BACKEND)
    session = client.session
    session[SESSION_IDENTITY] = identity.to_session()
    session.save()
    return client


@pytest.fixture(autouse=True)
def _clean_cache(db) -> Iterator[None]:
    """Sessions, users, the audit trail and the cache are in the database (`db`). The
    agent list and staged restores live in Django's cache: none may leak between tests."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, static_from_finders) -> FakeCoreAPI:
    """The CoreAPI every view talks to, and fixed tokens instead of msal and the IdP."""
    coreapi = FakeCoreAPI()
    # The legacy stores are off unless a test installs its own (tests/fake_legacy.py).
    monkeypatch.setattr(settings, "LEGACY_STORES_BASE_URL", "")
    # MemoryOS too, unless a test points it at an emulator it starts (test_memoryos_*).
    monkeypatch.setattr(settings, "MEMORYOS_BASE_URL", "")
    monkeypatch.setattr("memory_ui.sources.coreapi.client.get_client", lambda: coreapi)
    monkeypatch.setattr("memory_ui.auth.coreapi_token", lambda request: USER_TOKEN)
    monkeypatch.setattr("memory_ui.auth.app_token", lambda: APP_TOKEN)
    return coreapi


@pytest.fixture
def alice(fake: FakeCoreAPI) -> Client:
    return signed_in(Client(), "alice@contoso.com")


@pytest.fixture
def bob(fake: FakeCoreAPI) -> Client:
    return signed_in(Client(), "bob@contoso.com")


@pytest.fixture
def carol(fake: FakeCoreAPI) -> Client:
    """Support staff (the Memory.Support app role)."""
    return signed_in(Client(), "carol@contoso.com", [SUPPORT_ROLE])
