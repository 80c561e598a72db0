"""Shared fixtures: a real devstack (IdP over https, CoreAPI emulator) on free loopback ports."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from devstack import idp as idp_module
from devstack.config import Fixtures, fixtures
from devstack.pki import Pki, ensure_pki
from devstack.serve import RunningServer


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
