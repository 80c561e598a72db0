"""`python -m devstack.memory_api`: the memory-api emulator in the foreground.

It also keeps the portal's projected ServiceAccount token in {home}/memory-api-portal-token,
rewritten before it expires, as the kubelet keeps a projected token fresh, and the
devstack's pseudonym key in {home}/memory-api-pseudonym-key (the portal's secret).
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

from devstack.config import MEMORY_API_HOST, MEMORY_API_PORT, state_dir
from devstack.memory_api.app import BASE, EDITIONS, build
from devstack.memory_api.identity import (
    TOKEN_LIFETIME,
    load_settings,
    write_projected_token,
    write_pseudonym_key,
)
from devstack.pki import ensure_pki
from devstack.serve import run_in_foreground


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(prog="python -m devstack.memory_api", description=__doc__)
    result.add_argument("--host", default=MEMORY_API_HOST)
    result.add_argument("--port", type=int, default=MEMORY_API_PORT, help="0 picks a free port")
    result.add_argument("--home", type=Path, help="state folder (default: .devstack/)")
    result.add_argument("--edition", choices=EDITIONS, default="enterprise")
    return result


def keep_token_fresh(home: Path, stop: threading.Event) -> None:
    """Write the pseudonym key once, and the token at 80% of its lifetime, when the kubelet
    would."""
    pki, settings = ensure_pki(home), load_settings()
    write_pseudonym_key(home, settings)
    while True:
        write_projected_token(home, pki, settings)
        if stop.wait(TOKEN_LIFETIME * 0.8):
            return


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    home = args.home or state_dir()
    stop = threading.Event()
    threading.Thread(target=keep_token_fresh, args=(home, stop), daemon=True).start()
    try:
        return run_in_foreground(
            lambda: build(home=home, edition=args.edition),
            args.host,
            args.port,
            lambda url: (
                f"memory-api emulator ({args.edition}) listening on {url}{BASE} (Ctrl-C stops)"
            ),
        )
    finally:
        stop.set()


if __name__ == "__main__":
    sys.exit(main())
