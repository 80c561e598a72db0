"""`python -m devstack.legacy`: the legacy memory store emulator in the foreground."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from devstack.config import LEGACY_HOST, LEGACY_PORT, idp_base_url, state_dir
from devstack.coreapi.__main__ import _port_in_use
from devstack.legacy.app import BASE, build
from devstack.serve import start_in_thread


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack.legacy", description=__doc__)
    parser.add_argument("--host", default=LEGACY_HOST)
    parser.add_argument("--port", type=int, default=LEGACY_PORT, help="0 picks a free port")
    parser.add_argument("--home", type=Path, help="state folder (default: .devstack/)")
    parser.add_argument("--idp-url", default=idp_base_url())
    parser.add_argument("--ca-file", type=Path, help="dev CA to trust (default: {home}/ca.pem)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("werkzeug").addFilter(lambda record: record.levelno > logging.INFO)
    if _port_in_use(args.host, args.port):
        print(
            f"Port {args.port} on {args.host} is already in use. Stop that program or pass --port.",
            file=sys.stderr,
        )
        return 1
    running = start_in_thread(
        build(args.home or state_dir(), args.idp_url, args.ca_file), args.host, args.port
    )
    print(
        f"Legacy memory store emulator listening on {running.url}{BASE} (Ctrl-C stops)", flush=True
    )
    try:
        running.thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        running.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
