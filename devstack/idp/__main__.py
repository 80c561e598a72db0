"""`python -m devstack.idp [--host 127.0.0.1] [--port 8443]`: run the IdP in the foreground."""

from __future__ import annotations

import argparse
import logging
import socket
import sys

from devstack.config import IDP_HOST, IDP_PORT, idp_base_url
from devstack.idp.app import build
from devstack.serve import serve_forever, server_ssl_context


def _port(value: str) -> int:
    port = int(value)
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError("port must be between 1 and 65535")
    return port


def _check_free(host: str, port: int) -> None:
    """Bind once as the server will, so a taken port is reported before the banner."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m devstack.idp", description="Devstack identity provider (Entra-shaped)."
    )
    parser.add_argument("--host", default=IDP_HOST)
    parser.add_argument("--port", type=_port, default=IDP_PORT)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    app, pki = build()
    app.base_url = idp_base_url(args.host, args.port)
    context = server_ssl_context(str(pki.server_cert), str(pki.server_key))
    try:
        _check_free(args.host, args.port)
        print(
            "Identity provider: "
            f"{app.authority_url('v2.0/.well-known/openid-configuration')} "
            f"(trust {pki.ca_cert}; Ctrl-C stops)",
            flush=True,
        )
        serve_forever(app, args.host, args.port, context)
    except KeyboardInterrupt:  # Ctrl-C before the server loop took over
        return 0
    except OSError as exc:
        print(
            f"Cannot listen on {args.host}:{args.port}: {exc.strerror or exc}. "
            "Is another identity provider running? Choose another one with --port.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
