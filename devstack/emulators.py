"""What the CoreAPI and legacy store emulators share when they are built and started.

Both keep their state in one home folder, validate the devstack IdP's tokens the same way
(devstack.coreapi.auth.emulator_validator) and take the same fault settings; only the
audience, the storage and the error format differ.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from devstack.config import idp_base_url

if TYPE_CHECKING:  # devstack.coreapi's package imports this module: no import back at runtime
    from devstack.coreapi.faults import Faults


class Options(TypedDict, total=False):
    """build()/start() keywords of either emulator; each is optional."""

    home: Path | None  # state folder (default: devstack.config.state_dir())
    idp_url: str | None  # the IdP whose keys sign the tokens (default: the devstack's)
    ca_file: Path | None  # the CA that signed the IdP's certificate (default: {home}/ca.pem)
    faults: Faults | None


def parser(prog: str, description: str | None, host: str, port: int) -> argparse.ArgumentParser:
    """The command-line flags both `python -m devstack.coreapi` and `.legacy` take."""
    result = argparse.ArgumentParser(prog=prog, description=description)
    result.add_argument("--host", default=host)
    result.add_argument("--port", type=int, default=port, help="0 picks a free port")
    result.add_argument("--home", type=Path, help="state folder (default: .devstack/)")
    result.add_argument("--idp-url", default=idp_base_url())
    result.add_argument("--ca-file", type=Path, help="dev CA to trust (default: {home}/ca.pem)")
    return result
