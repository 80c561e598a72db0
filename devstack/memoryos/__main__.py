"""`python -m devstack.memoryos`: the MemoryOS emulator in the foreground (Ctrl-C stops it)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from devstack.config import MEMORYOS_HOST, MEMORYOS_PORT, state_dir
from devstack.memoryos.app import BASE, build
from devstack.serve import run_in_foreground


def main(argv: list[str] | None = None) -> int:
    # Not devstack.emulators.parser: API keys, not the IdP's tokens, authenticate callers.
    parser = argparse.ArgumentParser(prog="python -m devstack.memoryos", description=__doc__)
    parser.add_argument("--host", default=MEMORYOS_HOST)
    parser.add_argument("--port", type=int, default=MEMORYOS_PORT, help="0 picks a free port")
    parser.add_argument("--home", type=Path, help="state folder (default: .devstack/)")
    args = parser.parse_args(argv)
    return run_in_foreground(
        lambda: build(home=args.home or state_dir()),
        args.host,
        args.port,
        lambda url: f"MemoryOS emulator listening on {url}{BASE} (Ctrl-C stops)",
    )


if __name__ == "__main__":
    sys.exit(main())
