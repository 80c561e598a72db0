"""`python -m devstack.legacy`: the legacy memory store emulator in the foreground."""

from __future__ import annotations

import sys

from devstack import emulators
from devstack.config import LEGACY_HOST, LEGACY_PORT, state_dir
from devstack.legacy.app import BASE, build
from devstack.serve import run_in_foreground


def main(argv: list[str] | None = None) -> int:
    parser = emulators.parser("python -m devstack.legacy", __doc__, LEGACY_HOST, LEGACY_PORT)
    args = parser.parse_args(argv)
    return run_in_foreground(
        lambda: build(home=args.home or state_dir(), idp_url=args.idp_url, ca_file=args.ca_file),
        args.host,
        args.port,
        lambda url: f"Legacy memory store emulator listening on {url}{BASE} (Ctrl-C stops)",
    )


if __name__ == "__main__":
    sys.exit(main())
