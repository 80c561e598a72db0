"""Shared fixtures: a real devstack (IdP over https, CoreAPI emulator) on free loopback ports."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from devstack import coreapi as coreapi_module
from devstack import idp as idp_module
from devstack import legacy as legacy_module
from devstack import memoryos as memoryos_module
from devstack.config import Client, Fixtures, User, fixtures, issuer
from devstack.coreapi.faults import Faults
from devstack.legacy.store import audience as legacy_audience
from devstack.pki import Pki, ensure_pki
from devstack.serve import RunningServer
from devstack.tokens import ACCESS_TOKEN_LIFETIME, app_access_token, delegated_access_token

# Helpers that several suites share assert; pytest explains their failures as a test's own.
pytest.register_assert_rewrite("tests.pages", "tests.transfers", "tests.unit.timing")


@pytest.fixture(scope="session")
def django_db_modify_db_settings(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A test database file per test run, so parallel runs on one machine never share one."""
    from django.conf import settings

    test = settings.DATABASES["default"].setdefault("TEST", {})
    if settings.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        test["NAME"] = str(tmp_path_factory.getbasetemp() / "test-db.sqlite3")


@pytest.fixture(autouse=True)
def _no_remembered_users() -> Iterator[None]:
    """Each test's database is rolled back after it and the next may reuse its users' ids:
    no user row a worker remembers (memory_ui.active_users) outlives the test."""
    from memory_ui.active_users import active_users

    active_users.clear()
    yield
    active_users.clear()


@pytest.fixture(scope="session")
def devstack_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh state folder per test session; the developer's .devstack/ is never touched."""
    return tmp_path_factory.mktemp("devstack-home")


@pytest.fixture(scope="session")
def demo() -> Fixtures:
    return fixtures()


@pytest.fixture(scope="session")
def pki(devstack_home: Path) -> Pki:
    return ensure_pki(devstack_home)


@pytest.fixture(scope="session")
def idp(devstack_home: Path, pki: Pki) -> Iterator[RunningServer]:
    server = idp_module.start(home=devstack_home)
    yield server
    server.stop()


@pytest.fixture
def static_from_finders(settings) -> None:
    """Tests don't run collectstatic, so serve static files from the finders."""
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@contextmanager
def _emulator(
    module: ModuleType, home: Path, idp: RunningServer, pki: Pki
) -> Iterator[RunningServer]:
    """`module`'s emulator (devstack.coreapi or devstack.legacy) over `home`, trusting the
    session's IdP, seeded with its demo data on first use. No faults unless a test switches
    them on (`module.emulator(server).faults`): DEVSTACK_COREAPI_FAULT_* in the developer's
    environment must not leak into tests."""
    server = module.start(home=home, idp_url=idp.url, ca_file=pki.ca_cert, faults=Faults())
    yield server
    server.stop()


@pytest.fixture(scope="session")
def coreapi(devstack_home: Path, idp: RunningServer, pki: Pki) -> Iterator[RunningServer]:
    """The CoreAPI emulator over the session's state folder, seeded with the demo memory."""
    with _emulator(coreapi_module, devstack_home, idp, pki) as server:
        yield server


@pytest.fixture
def portal_coreapi(request: pytest.FixtureRequest, coreapi: RunningServer) -> RunningServer:
    """The emulator the portal talks to: the shared one, which tests must not change.
    Tests that change memory are marked `changes_memory` and get `fresh_coreapi` (a module
    may also override this fixture with it)."""
    if request.node.get_closest_marker("changes_memory"):
        return request.getfixturevalue("fresh_coreapi")
    return coreapi


@pytest.fixture
def fresh_coreapi(tmp_path: Path, idp: RunningServer, pki: Pki) -> Iterator[RunningServer]:
    """An emulator of its own with freshly seeded demo memory, for tests that change memory."""
    with _emulator(coreapi_module, tmp_path / "coreapi", idp, pki) as server:
        yield server


@pytest.fixture(scope="session")
def legacy(devstack_home: Path, idp: RunningServer, pki: Pki) -> Iterator[RunningServer]:
    """The legacy memory store emulator (seed 003) over the session's state folder, with
    its demo stores; tests that write use `fresh_legacy`."""
    with _emulator(legacy_module, devstack_home, idp, pki) as server:
        yield server


@pytest.fixture
def fresh_legacy(tmp_path: Path, idp: RunningServer, pki: Pki) -> Iterator[RunningServer]:
    """A legacy store emulator of its own with freshly seeded demo stores."""
    with _emulator(legacy_module, tmp_path / "legacy", idp, pki) as server:
        yield server


@pytest.fixture(scope="session")
def memoryos(devstack_home: Path) -> Iterator[RunningServer]:
    """The MemoryOS emulator (seed 002) over the session's state folder, with its demo
    tenants; retrievals move last_accessed, so tests that look at it (or write) use
    `fresh_memoryos`."""
    server = memoryos_module.start(home=devstack_home, faults=Faults())
    yield server
    server.stop()


@pytest.fixture
def fresh_memoryos(tmp_path: Path) -> Iterator[RunningServer]:
    """A MemoryOS emulator of its own with freshly seeded demo data."""
    server = memoryos_module.start(home=tmp_path / "memoryos", faults=Faults())
    yield server
    server.stop()


@dataclass(frozen=True)
class TokenMinter:
    """CoreAPI access tokens signed with the devstack IdP's key (what the IdP would issue)."""

    pki: Pki
    demo: Fixtures
    issuer: str

    def user_for(self, upn: str) -> User:
        """A demo user, or an ad-hoc one (oid derived from the UPN) for isolated test data."""
        oid = str(uuid.uuid5(uuid.NAMESPACE_URL, upn.casefold()))
        return self.demo.user(upn) or User(upn=upn, name=f"Test {upn.split('@')[0]}", oid=oid)

    def delegated(
        self,
        who: str | User,
        scopes: tuple[str, ...] | None = None,
        lifetime: int = ACCESS_TOKEN_LIFETIME,
    ) -> str:
        user = who if isinstance(who, User) else self.user_for(who)
        return delegated_access_token(
            self.pki, self.demo, self.issuer, user, self.demo.portal, scopes, lifetime
        )

    def app(self, client: Client | None = None, lifetime: int = ACCESS_TOKEN_LIFETIME) -> str:
        """Client credentials of `client` (default: the portal's service principal)."""
        return app_access_token(
            self.pki, self.demo, self.issuer, client or self.demo.portal, lifetime
        )

    def legacy(self, client: Client | None = None, lifetime: int = ACCESS_TOKEN_LIFETIME) -> str:
        """What client credentials for the legacy stores' audience give `client`."""
        return app_access_token(
            self.pki,
            self.demo,
            self.issuer,
            client or self.demo.portal,
            lifetime,
            audience=legacy_audience(),
        )


@pytest.fixture(scope="session")
def coreapi_tokens(pki: Pki, demo: Fixtures, idp: RunningServer) -> TokenMinter:
    return TokenMinter(pki, demo, issuer(idp.url, demo.tenant_id))
