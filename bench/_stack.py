"""What the benchmarks share: the devstack (IdP and CoreAPI emulator) in this process, the
portal under gunicorn in a child, all on loopback with free ports and their own state, and
a signed-in browser session over HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from devstack import coreapi as coreapi_module  # noqa: E402
from devstack import idp as idp_module  # noqa: E402
from devstack.config import Fixtures  # noqa: E402
from devstack.coreapi.faults import Faults  # noqa: E402
from tests.pages import form_with_button  # noqa: E402

UPN = "alice@contoso.com"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=1)
            return
        except (requests.ConnectionError, requests.Timeout):  # still starting
            time.sleep(0.1)
    raise SystemExit(f"{url} did not come up")


@dataclass
class Devstack:
    home: Path
    fixtures: Fixtures
    idp: object  # devstack RunningServer
    coreapi: object

    @property
    def ca(self) -> str:
        return str(self.home / "ca.pem")

    def stop(self) -> None:
        self.coreapi.stop()
        self.idp.stop()


def start_devstack(home: Path, fixtures: Fixtures, faults: Faults) -> Devstack:
    idp = idp_module.start(home=home, fixtures_=fixtures)
    coreapi = coreapi_module.start(home=home, idp_url=idp.url, fixtures_=fixtures, faults=faults)
    return Devstack(home, fixtures, idp, coreapi)


@dataclass
class Portal:
    url: str
    log: Path
    process: subprocess.Popen

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def start_portal(
    stack: Devstack,
    *,
    portal_dir: Path = REPO,
    name: str = "portal",
    workers: int = 2,
    threads: int = 16,
    extra_env: dict[str, str] | None = None,
) -> Portal:
    """The portal in `portal_dir` under gunicorn, with its own SQLite database, signed in
    against `stack`. Runs with this interpreter's environment (the current tree's .venv)."""
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
        "PORTAL_LOG_LEVEL": "WARNING",
        "DJANGO_STATIC_ROOT": str(home / f"{name}-static"),
        **(extra_env or {}),
    }
    python = sys.executable
    for command in (["migrate", "-v0"], ["collectstatic", "--noinput", "-v0"]):
        subprocess.run([python, "manage.py", *command], cwd=portal_dir, env=env, check=True)
    log = home / f"{name}.log"
    process = subprocess.Popen(
        # The production server, as the README runs it: runserver's replies stall on
        # delayed ACKs (about 40 ms each) and would measure the dev server, not the portal.
        [
            str(Path(python).with_name("gunicorn")),
            "portal.wsgi",
            f"--bind=127.0.0.1:{port}",
            f"--workers={workers}",
            f"--threads={threads}",
            # gunicorn 27's control socket (~/.gunicorn/gunicorn.ctl) is one per host.
            "--no-control-socket",
        ],
        cwd=portal_dir,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
    )
    portal = Portal(f"http://127.0.0.1:{port}", log, process)
    try:
        wait_for(f"{portal.url}/healthz", time.monotonic() + 30)
    except BaseException:
        portal.stop()
        raise
    return portal


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
