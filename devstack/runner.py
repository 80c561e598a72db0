"""Start the IdP, the CoreAPI, legacy store, memory-api and MemoryOS emulators and
(optionally) the portal, with prefixed logs."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import requests

from devstack.config import (
    COREAPI_HOST,
    COREAPI_PORT,
    IDP_HOST,
    IDP_PORT,
    LEGACY_HOST,
    LEGACY_PORT,
    MEMORY_API_HOST,
    MEMORY_API_PORT,
    MEMORYOS_HOST,
    MEMORYOS_PORT,
    PORTAL_PORT,
    REPO_ROOT,
    fixtures,
    idp_base_url,
    state_dir,
)
from devstack.memory_api.identity import load_settings as load_memory_api_settings
from devstack.memory_api.identity import write_projected_token, write_pseudonym_key
from devstack.pki import ensure_pki

# The devstack stops within 2 s of SIGTERM, however it was started.
STOP_GRACE_SECONDS = 1.5


@dataclass(frozen=True)
class Service:
    name: str
    host: str
    port: int
    command: Sequence[str]


def port_taken(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def services(with_portal: bool, memory_api_edition: str = "enterprise") -> list[Service]:
    python = sys.executable
    found = [
        Service("idp", IDP_HOST, IDP_PORT, [python, "-m", "devstack.idp", "--port", str(IDP_PORT)]),
        Service(
            "coreapi",
            COREAPI_HOST,
            COREAPI_PORT,
            [python, "-m", "devstack.coreapi", "--port", str(COREAPI_PORT)],
        ),
        Service(
            "legacy",
            LEGACY_HOST,
            LEGACY_PORT,
            [python, "-m", "devstack.legacy", "--port", str(LEGACY_PORT)],
        ),
        Service(
            "memoryos",
            MEMORYOS_HOST,
            MEMORYOS_PORT,
            [python, "-m", "devstack.memoryos", "--port", str(MEMORYOS_PORT)],
        ),
        Service(
            "memory-api",
            MEMORY_API_HOST,
            MEMORY_API_PORT,
            [
                python,
                "-m",
                "devstack.memory_api",
                "--port",
                str(MEMORY_API_PORT),
                "--edition",
                memory_api_edition,
            ],
        ),
    ]
    if with_portal:
        found.append(
            Service(
                "portal",
                "127.0.0.1",
                PORTAL_PORT,
                [python, "manage.py", "runserver", f"127.0.0.1:{PORTAL_PORT}", "--noreload"],
            )
        )
    return found


def _pump(name: str, stream: TextIO, out: TextIO, lock: threading.Lock) -> None:
    width = len("memory-api")  # the longest service name
    for line in stream:
        with lock:
            out.write(f"[{name:<{width}}] {line}")
            out.flush()


def _wait_until_ready(pki_ca: Path, deadline: float) -> bool:
    discovery = f"{idp_base_url()}/{fixtures().tenant_id}/v2.0/.well-known/openid-configuration"
    while time.monotonic() < deadline:
        try:
            requests.get(discovery, timeout=1, verify=str(pki_ca)).raise_for_status()
            requests.get(f"http://{COREAPI_HOST}:{COREAPI_PORT}/openapi.json", timeout=1)
            # Any answer (a 401 without a token) means the legacy emulator listens.
            requests.get(f"http://{LEGACY_HOST}:{LEGACY_PORT}/api/2.1/unity-catalog", timeout=1)
            requests.get(f"http://{MEMORYOS_HOST}:{MEMORYOS_PORT}/v1/memories", timeout=1)
            requests.get(
                f"http://{MEMORY_API_HOST}:{MEMORY_API_PORT}/api/v1/openapi.yaml", timeout=1
            ).raise_for_status()
            return True
        except requests.RequestException:
            time.sleep(0.2)
    return False


def run(
    with_portal: bool = True, out: TextIO = sys.stdout, memory_api_edition: str = "enterprise"
) -> int:
    """Run until Ctrl-C or until one service exits; returns a process exit code."""
    wanted = services(with_portal, memory_api_edition)
    taken = [s for s in wanted if port_taken(s.host, s.port)]
    if taken:
        for s in taken:
            out.write(
                f"Port {s.host}:{s.port} ({s.name}) is already in use. Stop whatever holds it "
                f"(perhaps an earlier devstack: `lsof -i :{s.port}`) and try again.\n"
            )
        return 1

    home = state_dir()
    pki = ensure_pki(home)  # once, before the servers race for it
    # The portal's memory-api credentials, before the portal's start-up check reads them
    # (the emulator keeps the token fresh from then on).
    memory_api = load_memory_api_settings()
    write_pseudonym_key(home, memory_api)
    write_projected_token(home, pki, memory_api)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "DEVSTACK_HOME": str(home)}
    env.setdefault("PORTAL_DEVSTACK", "true")
    env.setdefault("DJANGO_DEBUG", "true")
    env.setdefault("PORTAL_CA_BUNDLE", str(pki.ca_cert))

    if with_portal:
        migrate = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=REPO_ROOT,
            env=env,
            check=False,
        )
        if migrate.returncode != 0:
            return migrate.returncode

    # `kill` (SIGTERM) stops the children too, exactly as Ctrl-C does, from the first child
    # on, also when a script started us in the background (which ignores SIGINT for us).
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    lock = threading.Lock()
    processes: list[tuple[Service, subprocess.Popen[str]]] = []
    code = 0
    try:
        for service in wanted:
            proc = subprocess.Popen(
                service.command,
                cwd=REPO_ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,  # Ctrl-C reaches us; we stop the children ourselves
            )
            processes.append((service, proc))
            assert proc.stdout is not None
            threading.Thread(
                target=_pump, args=(service.name, proc.stdout, out, lock), daemon=True
            ).start()

        if _wait_until_ready(pki.ca_cert, time.monotonic() + 30):
            with lock:
                out.write(
                    "\nDevstack is up. "
                    + (
                        f"Open http://127.0.0.1:{PORTAL_PORT}/ and sign in as alice@contoso.com.\n"
                        if with_portal
                        else f"CoreAPI emulator: http://{COREAPI_HOST}:{COREAPI_PORT}/ "
                        f"(token: python manage.py devstack_token alice@contoso.com)\n"
                        f"Legacy memory stores: http://{LEGACY_HOST}:{LEGACY_PORT}/ "
                        f"(token: python manage.py devstack_token --legacy)\n"
                        f"MemoryOS emulator: http://{MEMORYOS_HOST}:{MEMORYOS_PORT}/v1/memories "
                        f"(API keys: python manage.py devstack_token --memoryos)\n"
                        f"Workspace memory-api: http://{MEMORY_API_HOST}:{MEMORY_API_PORT}/api/v1 "
                        f"(token: python manage.py devstack_token --memory-api)\n"
                    )
                    + f"State lives in {home}; delete it to reset the demo. "
                    "Ctrl-C stops everything.\n\n"
                )
                out.flush()

        while True:
            exited = [(s, p) for s, p in processes if p.poll() is not None]
            if exited:
                service, proc = exited[0]
                out.write(
                    f"{service.name} exited with code {proc.returncode}; stopping the rest.\n"
                )
                code = proc.returncode or 1
                break
            time.sleep(0.3)
    except KeyboardInterrupt:
        out.write("\nStopping the devstack…\n")
    finally:
        _stop(proc for _, proc in processes)
    return code


def _stop(processes: Iterable[subprocess.Popen[str]], grace: float = STOP_GRACE_SECONDS) -> None:
    """SIGTERM, not SIGINT: a child started from a background job inherits an ignored
    SIGINT, and would sit out every wait. One deadline for all of them, then SIGKILL."""
    running = [proc for proc in processes if proc.poll() is None]
    for proc in running:
        proc.terminate()
    deadline = time.monotonic() + grace
    for proc in running:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
