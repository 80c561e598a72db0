"""Helpers and fixtures of the memory-api emulator's contract tests (seed 001): servers on
free ports over their own homes, and callers with the devstack's ServiceAccount tokens."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from devstack import memory_api
from devstack.memory_api.identity import (
    Settings,
    load_settings,
    service_account_token,
    subject_proof,
)
from devstack.memory_api.store import MemoryStore
from devstack.pki import Pki, ensure_pki
from devstack.serve import RunningServer

SETTINGS = load_settings()
UID = SETTINGS.workspace.uid
NAME = SETTINGS.workspace.name
OTHER_UID = SETTINGS.other_workspace.uid
ALICE = SETTINGS.virtual_user_id("alice@contoso.com")
BOB = SETTINGS.virtual_user_id("bob@contoso.com")
# Demo rows (devstack/memory_api/fixtures.toml).
ALICE_CONTACT = "0a1ce001-0000-4000-8000-000000000001"
ALICE_401K = "0a1ce001-0000-4000-8000-000000000002"  # one superseded observation
ALICE_LAPTOP = "0a1ce001-0000-4000-8000-000000000003"
ALICE_CONFLICT = "0a1ce001-0000-4000-8000-000000000004"  # two active observations
BOB_INSTRUCTIONS = "0b0b0001-0000-4000-8000-000000000001"
BOB_PLAN = "0b0b0001-0000-4000-8000-000000000002"
AGENT_SHARED = "0a9e0001-0000-4000-8000-000000000001"
INSTITUTIONAL = "01a50001-0000-4000-8000-000000000001"
OTHER_WORKSPACE_ROW = "0f0f0001-0000-4000-8000-000000000001"
ALICE_ROWS = {ALICE_CONTACT, ALICE_401K, ALICE_LAPTOP, ALICE_CONFLICT}


def foreign_body(value: str) -> dict[str, str]:
    """Seed 001's exact 403 body for another workspace."""
    return {"error": f'workspace "{value}" is not this memory-api\'s workspace ("{NAME}")'}


@dataclass
class Api:
    url: str
    token: str | None
    proof: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """`path` under /api/v1, or at the root when it starts with /admin."""
        headers = {**self.headers, **kwargs.pop("headers", {})}
        if self.token is not None:
            headers.setdefault("Authorization", f"Bearer {self.token}")
        if self.proof is not None:
            headers.setdefault("X-Omnia-Subject-Proof", self.proof)
        prefix = "" if path.startswith("/admin") else "/api/v1"
        return requests.request(
            method, f"{self.url}{prefix}{path}", headers=headers, timeout=10, **kwargs
        )

    def get(self, path: str, **params: Any) -> requests.Response:
        return self.call("GET", path, params=params)

    def memories(self, user: str | None = ALICE, **params: Any) -> list[dict[str, Any]]:
        query = {"workspace": UID, **params}
        if user is not None:
            query["virtual_user_id"] = user
        response = self.get("/memories", **query)
        assert response.status_code == 200, response.text
        return response.json()["memories"]


@dataclass(frozen=True)
class Callers:
    """Tokens for one server's home: the portal (exact-listed), the runtime (namespace),
    an outsider, and subject proofs."""

    url: str
    pki: Pki
    settings: Settings = SETTINGS

    def token(self, account: str, lifetime: int = 3600) -> str:
        return service_account_token(
            self.pki, self.settings, self.settings.accounts[account], lifetime
        )

    def proof(self, user: str, lifetime: int = 3600) -> str:
        return subject_proof(self.pki, self.settings, user, lifetime)

    def api(self, account: str = "portal", proof_for: str | None = None) -> Api:
        return Api(self.url, self.token(account), self.proof(proof_for) if proof_for else None)


def start(home: Path, **options: Any) -> RunningServer:
    return memory_api.start(home=home, **options)


@pytest.fixture(scope="module")
def memapi_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("memory-api")


@pytest.fixture(scope="module")
def memapi(memapi_home: Path) -> Iterator[RunningServer]:
    """The module's Enterprise emulator over seeded demo data; tests that write use
    `fresh_memapi`."""
    server = start(memapi_home)
    yield server
    server.stop()


@pytest.fixture
def fresh_memapi(memapi: RunningServer, tmp_path: Path) -> Iterator[RunningServer]:
    """The module's server over this test's own freshly seeded store, for the test's
    length (only the store is swapped: tokens stay signed by the module home's key)."""
    app = memory_api.emulator(memapi)
    shared = app.store
    app.store = MemoryStore(tmp_path, SETTINGS)
    app.store.seed_once()
    yield memapi
    app.store = shared


@pytest.fixture
def callers(memapi: RunningServer, memapi_home: Path) -> Callers:
    return Callers(memapi.url, ensure_pki(memapi_home))


@pytest.fixture
def portal(callers: Callers) -> Api:
    return callers.api("portal")


@pytest.fixture(scope="module")
def variants(memapi: RunningServer, memapi_home: Path) -> Iterator[Callable[..., Callers]]:
    """Servers with other settings (edition, auth, resolution), over copies of the
    module's key, each with its own seeded store; stopped after the module."""
    started: list[RunningServer] = []

    def make(**options: Any) -> Callers:
        home = memapi_home / f"variant-{len(started)}"
        home.mkdir()
        for name in ("signing-key.pem", "ca.pem", "server.pem", "server-key.pem"):
            source = memapi_home / name
            if source.exists():
                (home / name).write_bytes(source.read_bytes())
        started.append(start(home, **options))
        return Callers(started[-1].url, ensure_pki(home))

    yield make
    for server in started:
        server.stop()


def assert_error(response: requests.Response, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}, body
    assert body["error"]
    return body["error"]
