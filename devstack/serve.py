"""Run a devstack WSGI app on loopback: in a thread (tests) or in the foreground (CLI)."""

from __future__ import annotations

import errno
import logging
import socket
import ssl
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from werkzeug.serving import BaseWSGIServer, make_server

WSGIApp = Callable[..., Any]


@dataclass
class RunningServer:
    server: BaseWSGIServer
    thread: threading.Thread
    url: str

    @property
    def port(self) -> int:
        return self.server.port

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def _server(
    app: WSGIApp, host: str, port: int, ssl_context: ssl.SSLContext | None
) -> BaseWSGIServer:
    # Werkzeug's threaded server: one thread per request, like a real front end would allow.
    return make_server(host, port, app, threaded=True, ssl_context=ssl_context)


def start_in_thread(
    app: WSGIApp, host: str = "127.0.0.1", port: int = 0, ssl_context: ssl.SSLContext | None = None
) -> RunningServer:
    """Start on a free port (port=0) and return once the socket is listening."""
    server = _server(app, host, port, ssl_context)
    scheme = "https" if ssl_context else "http"
    thread = threading.Thread(
        target=server.serve_forever, name=f"devstack-{server.port}", daemon=True
    )
    thread.start()
    return RunningServer(server=server, thread=thread, url=f"{scheme}://{host}:{server.port}")


def port_in_use(host: str, port: int) -> bool:
    """Probe before building anything, so a second emulator fails fast and says why."""
    try:
        socket.create_server((host, port)).close()
    except OSError as exc:
        return exc.errno == errno.EADDRINUSE
    return False


def run_in_foreground(
    build: Callable[[], WSGIApp], host: str, port: int, banner: Callable[[str], str]
) -> int:
    """An emulator's CLI: serve `build()` on host:port until Ctrl-C; the exit status.

    `banner(url)` is printed once the socket listens, so a supervisor (or a test) can wait
    for that line.
    """
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    # The emulators' own access logs (with durations) replace werkzeug's per-request lines.
    logging.getLogger("werkzeug").addFilter(lambda record: record.levelno > logging.INFO)
    if port_in_use(host, port):
        print(
            f"Port {port} on {host} is already in use (is another emulator running?). "
            "Stop that program or pass --port.",
            file=sys.stderr,
        )
        return 1
    running = start_in_thread(build(), host, port)
    print(banner(running.url), flush=True)
    try:
        running.thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        running.stop()
    return 0


def serve_forever(
    app: WSGIApp, host: str, port: int, ssl_context: ssl.SSLContext | None = None
) -> None:
    server = _server(app, host, port, ssl_context)
    logging.getLogger("werkzeug").setLevel(logging.INFO)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def server_ssl_context(cert_chain: str, key: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_chain, key)
    return context
