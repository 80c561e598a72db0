"""`python -m devstack.coreapi`: the CoreAPI emulator in the foreground (Ctrl-C stops it).

See the package docstring for the fault flags and their environment variables.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys

from devstack import emulators
from devstack.config import COREAPI_HOST, COREAPI_PORT, fixtures, state_dir
from devstack.coreapi.app import build
from devstack.coreapi.faults import Faults
from devstack.serve import run_in_foreground

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
    result = emulators.parser("python -m devstack.coreapi", __doc__, COREAPI_HOST, COREAPI_PORT)
    for field, (flag, kind) in _FAULT_FLAGS.items():
        result.add_argument(flag, dest=field, type=kind)
    result.add_argument("--fault-seed", type=int, help="seed for the fault dice")
    return result


def faults_from(args: argparse.Namespace) -> Faults:
    overrides = {f: getattr(args, f) for f in _FAULT_FLAGS if getattr(args, f) is not None}
    if args.fault_seed is not None:
        overrides["rng"] = random.Random(args.fault_seed)
    return dataclasses.replace(Faults.from_env(), **overrides)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        faults = faults_from(args)
    except ValueError as exc:
        print(f"Invalid fault settings: {exc}", file=sys.stderr)
        return 2
    return run_in_foreground(
        lambda: build(
            home=args.home or state_dir(), idp_url=args.idp_url, ca_file=args.ca_file, faults=faults
        ),
        args.host,
        args.port,
        lambda url: (
            f"CoreAPI emulator listening on {url}/instances/{fixtures().instance_id}/ "
            f"(IdP {args.idp_url}; {faults}; Ctrl-C stops)"
        ),
    )


if __name__ == "__main__":
    sys.exit(main())
