"""The portal as it runs in production, for the tests and benchmarks that need it: the
devstack (IdP and CoreAPI emulator) in this process, the portal under gunicorn in a child,
all on loopback with free ports and their own state, and a signed-in browser session over
HTTP. Used by tests/multi_instance and bench/."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from devstack import coreapi as coreapi_module
from devstack import idp as idp_module
from devstack import legacy as legacy_module
from devstack.config import Fixtures
from devstack.coreapi.faults import Faults
from devstack.serve import RunningServer
from tests.pages import form_with_button

REPO = Path(__file__).resolve().parent.parent
UPN = "alice@contoso.com"
START_SECONDS = 30  # gunicorn importing Django and answering /healthz


def stops_on_sigint() -> None:
    """Popen's preexec_fn for a child that a test stops with SIGINT, as Ctrl-C would: a run
    started in the background by a script (`./dev test &`, nohup) ignores SIGINT, its
    children inherit that and Python keeps it, so the child would never stop."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt(process: subprocess.Popen, timeout: float) -> int:
    """Stop `process` as Ctrl-C would and give its exit code; killed if it outlives
    `timeout` (then Popen's exit would wait forever), so the test fails instead of hanging."""
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=timeout)
    finally:
        process.kill()  # nothing once it has exited


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, deadline: float, process: subprocess.Popen | None = None) -> None:
    """Until `url` answers 200; fails early when `process`, which should serve it, exits."""
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server for {url} exited with status {process.returncode}")
        try:
            if requests.get(url, timeout=1).status_code == 200:
                return
        except (requests.ConnectionError, requests.Timeout):  # still starting
            pass
        time.sleep(0.05)  # the interval between polls, bounded by the deadline
    raise RuntimeError(f"{url} did not come up")


@dataclass
class Devstack:
    home: Path  # state of the servers started on this stack (databases, logs)
    fixtures: Fixtures
    idp: RunningServer
    coreapi: RunningServer
    ca: str  # the dev CA that signed the IdP's certificate
    legacy: RunningServer | None = None  # the legacy memory store emulator (seed 003)

    def stop(self) -> None:
        if self.legacy is not None:
            self.legacy.stop()
        self.coreapi.stop()
        self.idp.stop()


def start_devstack(home: Path, fixtures: Fixtures, faults: Faults) -> Devstack:
    idp = idp_module.start(home=home, fixtures_=fixtures)
    coreapi = coreapi_module.start(home=home, idp_url=idp.url, fixtures_=fixtures, faults=faults)
    legacy = legacy_module.start(home=home, idp_url=idp.url, faults=Faults())
    return Devstack(home, fixtures, idp, coreapi, str(home / "ca.pem"), legacy)


@dataclass
class Portal:
    """One portal instance under gunicorn on a port of its own, which it keeps across a
    stop and start (a restart behind a load balancer)."""

    url: str
    log: Path
    command: list[str]
    cwd: Path
    env: dict[str, str]
    process: subprocess.Popen | None = field(default=None, repr=False)

    def start(self) -> None:
        with self.log.open("a") as log:
            self.process = subprocess.Popen(
                self.command, cwd=self.cwd, env=self.env, stdout=subprocess.DEVNULL, stderr=log
            )
        try:
            wait_for(f"{self.url}/healthz", time.monotonic() + START_SECONDS, self.process)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()  # gunicorn's graceful shutdown
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


def start_portal(
    stack: Devstack,
    *,
    portal_dir: Path = REPO,
    name: str = "portal",
    workers: int = 2,
    threads: int = 16,
    extra_env: dict[str, str] | None = None,
    prepare: bool = True,
    shipped_config: bool = False,
) -> Portal:
    """The portal in `portal_dir` under gunicorn, with its own SQLite database unless
    `extra_env` names a DATABASE_URL, signed in against `stack`. Runs with this
    interpreter's environment (the current tree's .venv). `prepare` runs migrate and
    collectstatic; another instance sharing the database and DJANGO_STATIC_ROOT can skip it.
    `shipped_config` runs gunicorn with `deploy/gunicorn.conf.py`, as production does, when
    `portal_dir` has one (`workers` and `threads` are then the config's)."""
    home, demo = stack.home, stack.fixtures
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_DEBUG": "false",
        "PORTAL_DEVSTACK": "true",  # the devstack's client id and instance id
        "DJANGO_SECRET_KEY": "benchmark-only-secret-key-0123456789abcdefghijklmnop",
        "PORTAL_HTTPS": "false",
        "DATABASE_URL": f"sqlite:///{home / f'{name}.sqlite3'}",
        "ENTRA_AUTHORITY": f"{stack.idp.url}/{demo.tenant_id}",
        "ENTRA_CLIENT_SECRET": demo.portal.client_secret,
        "ENTRA_INSTANCE_DISCOVERY": "false",
        "PORTAL_CA_BUNDLE": stack.ca,
        "COREAPI_BASE_URL": stack.coreapi.url,
        # Off unless this stack runs a legacy emulator: the devstack default (port 8002) may
        # have nothing listening, and "Export everything" includes the legacy files.
        "LEGACY_STORES_BASE_URL": stack.legacy.url if stack.legacy else "",
        # MemoryOS likewise: no stack here runs its emulator, and the dashboard would offer it.
        "MEMORYOS_BASE_URL": "",
        "MEMORY_API_BASE_URL": "",  # and the memory-api, on only where a test starts it
        "PORTAL_LOG_LEVEL": "WARNING",
        "DJANGO_STATIC_ROOT": str(home / f"{name}-static"),
        **(extra_env or {}),
    }
    python = sys.executable
    if prepare:
        for command in (["migrate", "-v0"], ["collectstatic", "--noinput", "-v0"]):
            subprocess.run([python, "manage.py", *command], cwd=portal_dir, env=env, check=True)
    portal = Portal(
        url=f"http://127.0.0.1:{port}",
        log=home / f"{name}.log",
        # The production server, as the README runs it: runserver's replies stall on
        # delayed ACKs (about 40 ms each) and would measure the dev server, not the portal.
        command=[
            str(Path(python).with_name("gunicorn")),
            "portal.wsgi",
            f"--bind=127.0.0.1:{port}",
            *(
                ["--config=deploy/gunicorn.conf.py"]
                if shipped_config and (portal_dir / "deploy" / "gunicorn.conf.py").exists()
                else [f"--workers={workers}", f"--threads={threads}"]
            ),
            # Its default path is one per user, shared by every gunicorn on the machine.
            "--no-control-socket",
        ],
        cwd=portal_dir,
        env=env,
    )
    portal.start()
    return portal


@dataclass
class Instances:
    """Two portal instances, A and B, behind an imaginary load balancer."""

    a: Portal
    b: Portal

    def stop(self) -> None:
        self.b.stop()
        self.a.stop()


def start_instances(
    stack: Devstack, database_url: str, extra_env: dict[str, str] | None = None
) -> Instances:
    """A and B (one worker of 4 threads each) on one database and one DJANGO_STATIC_ROOT:
    A migrates the database and collects the static files that B serves too."""
    shared = {
        "DATABASE_URL": database_url,
        "DJANGO_STATIC_ROOT": str(stack.home / "static"),
        **(extra_env or {}),
    }
    a = start_portal(stack, name="a", workers=1, threads=4, extra_env=shared)
    try:
        b = start_portal(stack, name="b", workers=1, threads=4, extra_env=shared, prepare=False)
    except BaseException:
        a.stop()
        raise
    return Instances(a, b)


def sign_in(portal: str, ca: str, upn: str = UPN) -> requests.Session:
    """A browser session signed in as `upn`, stopped at the callback's redirect (so the
    first page it loads is cold)."""
    browser = requests.Session()
    browser.trust_env = False  # REQUESTS_CA_BUNDLE would override the dev CA
    browser.verify = ca
    picker = browser.get(f"{portal}/auth/login?next=/", timeout=30)
    form = form_with_button(picker.text, "upn", upn, base_url=picker.url)
    back = browser.post(
        form.action, data={**form.fields, "upn": upn}, allow_redirects=False, timeout=30
    )
    done = browser.get(back.headers["Location"], allow_redirects=False, timeout=30)
    assert done.status_code == 302, done.status_code
    return browser
