"""The devstack both multi-instance modules run their portals against."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devstack import coreapi as coreapi_module
from devstack.config import Fixtures
from devstack.pki import Pki
from devstack.serve import RunningServer
from tests.stack import Devstack


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, idp: RunningServer, pki: Pki, demo: Fixtures
) -> Iterator[Devstack]:
    """The session's IdP and an emulator of this module's own: the tests change memory."""
    home = tmp_path_factory.mktemp("multi-instance")
    coreapi = coreapi_module.start(
        home=home / "coreapi", idp_url=idp.url, ca_file=pki.ca_cert, faults=coreapi_module.Faults()
    )
    yield Devstack(home=home, fixtures=demo, idp=idp, coreapi=coreapi, ca=str(pki.ca_cert))
    coreapi.stop()
