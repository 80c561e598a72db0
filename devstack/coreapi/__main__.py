"""`python -m devstack.coreapi`: the CoreAPI emulator in the foreground (Ctrl-C stops it).

See the package docstring for the fault flags and their environment variables.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import logging
import random
import socket
import sys
from pathlib import Path

from devstack.config import COREAPI_HOST, COREAPI_PORT, fixtures, idp_base_url, state_dir
from devstack.coreapi.app import build
from devstack.coreapi.faults import Faults
from devstack.serve import start_in_thread

# Faults field -> (flag, type); flags left out keep the DEVSTACK_COREAPI_FAULT_* value.
_FAULT_FLAGS: dict[str, tuple[str, type]] = {
    "latency_ms": ("--fault-latency-ms", int),
    "error_rate": ("--fault-error-rate", float),
    "error_status": ("--fault-error-status", int),
    "throttle_rate": ("--fault-throttle-rate", float),
    "retry_after_seconds": ("--fault-retry-after", int),
    "drop_rate": ("--fault-drop-rate", float),
    "path_regex": ("--fault-path-regex", str),
}


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(prog="python -m devstack.coreapi", description=__doc__)
    result.add_argument("--host", default=COREAPI_HOST)
    result.add_argument("--port", type=int, default=COREAPI_PORT, help="0 picks a free port")
    result.add_argument("--home", type=Path, help="state folder (default: .devstack/)")
    result.add_argument("--idp-url", default=idp_base_url())
    result.add_argument("--ca-file", type=Path, help="dev CA to trust (default: {home}/ca.pem)")
    for field, (flag, kind) in _FAULT_FLAGS.items():
        result.add_argument(flag, dest=field, type=kind)
    result.add_argument("--fault-seed", type=int, help="seed for the fault dice")
    return result


def faults_from(args: argparse.Namespace) -> Faults:
    overrides = {f: getattr(args, f) for f in _FAULT_FLAGS if getattr(args, f) is not None}
    if args.fault_seed is not None:
        overrides["rng"] = random.Random(args.fault_seed)
    return dataclasses.replace(Faults.from_env(), **overrides)


def _port_in_use(host: str, port: int) -> bool:
    """Probe before building anything, so a second emulator fails fast and says why."""
    try:
        socket.create_server((host, port)).close()
    except OSError as exc:
        return exc.errno == errno.EADDRINUSE
    return False


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    # Our own access log (with durations) replaces werkzeug's per-request lines.
    logging.getLogger("werkzeug").addFilter(lambda record: record.levelno > logging.INFO)
    if _port_in_use(args.host, args.port):
        print(
            f"Port {args.port} on {args.host} is already in use (is another emulator running?). "
            "Stop that program or pass --port.",
            file=sys.stderr,
        )
        return 1
    try:
        faults = faults_from(args)
    except ValueError as exc:
        print(f"Invalid fault settings: {exc}", file=sys.stderr)
        return 2
    app = build(args.home or state_dir(), args.idp_url, args.ca_file, faults)
    running = start_in_thread(app, args.host, args.port)
    # Printed once the socket listens, so a supervisor (or a test) can wait for this line.
    print(
        f"CoreAPI emulator listening on {running.url}/instances/{fixtures().instance_id}/ "
        f"(IdP {args.idp_url}; {faults}; Ctrl-C stops)",
        flush=True,
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
