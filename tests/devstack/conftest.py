"""Fixtures of the CoreAPI emulator tests (test_coreapi*.py): emulators of their own per
module, over freshly seeded homes, so no module sees another's writes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from devstack import coreapi
from devstack.config import Fixtures
from devstack.coreapi.app import open_store
from devstack.pki import Pki
from devstack.serve import RunningServer
from tests.conftest import TokenMinter

# The memory-api emulator's fixtures (memory_api_client.py), for its test_memory_api*.py.
from tests.devstack.memory_api_client import (  # noqa: F401
    callers,
    fresh_memapi,
    memapi,
    memapi_home,
    portal,
    variants,
)
from tests.devstack.test_coreapi import Api, start_emulator


@pytest.fixture(scope="module")
def emulators(
    tmp_path_factory: pytest.TempPathFactory, idp: RunningServer, pki: Pki
) -> Iterator[Callable[[], RunningServer]]:
    """Starts emulators for one module, each over its own seeded home; stops them after it."""
    started: list[RunningServer] = []

    def start() -> RunningServer:
        started.append(start_emulator(tmp_path_factory.mktemp("coreapi"), idp.url, pki))
        return started[-1]

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def server(emulators: Callable[[], RunningServer]) -> RunningServer:
    """The module's emulator with the seeded demo data; tests write only to ad-hoc users,
    or through `fresh`."""
    return emulators()


@pytest.fixture
def fresh(server: RunningServer, tmp_path: Path, demo: Fixtures) -> RunningServer:
    """The module's server over this test's own freshly seeded store: write anything, alice's
    too. Only the store is swapped: restarting the server costs 0.5 s a test."""
    coreapi.emulator(server).store = open_store(tmp_path, demo)
    return server


@pytest.fixture
def as_user(coreapi_tokens: TokenMinter) -> Callable[[RunningServer, str], Api]:
    def make(running: RunningServer, upn: str) -> Api:
        return Api(running.url, coreapi_tokens.delegated(upn))

    return make
