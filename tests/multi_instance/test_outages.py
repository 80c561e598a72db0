"""Two portal instances while their shared dependencies fail and come back (issue 19).

Each instance is its own gunicorn, both on one PostgreSQL cluster and one Redis of this
module's own (Debian's postgresql and redis-server, which `./dev` installs): so the test
can stop them and start them again without touching the suite's database. Expected, as
docs/operations.md says:

- Redis down: every page keeps working on both instances, nobody is signed out (sessions
  live in the database, the cache falls back to it), readiness stays 200, and the
  `portal_dependency_up{dependency="redis"}` gauge and a log line say Redis is down. A
  form confirmed before the outage and sent again during it adds nothing twice (its
  submission key is claimed in the database).
- PostgreSQL down: signed-in pages answer a styled 503 with Retry-After (never 500),
  readiness stays 200 (no instance is taken out of rotation for a shared outage), the
  gauge and the log say so; once it is back, the same session continues, no restart.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from memory_ui.sources.coreapi import CallerAuth
from memory_ui.sources.coreapi.client import CoreAPIClient
from tests.conftest import TokenMinter
from tests.integration.test_transfer import Api
from tests.multi_instance.test_two_instances import confirm_import, preview_import
from tests.stack import Devstack, Instances, Portal, free_port, sign_in, start_instances

TIMEOUT = 30
METRICS_TOKEN = "outage-scrape-token"
CHECK_SECONDS = "0.5"  # the dependency checker's period in these instances


def wait_until(condition: Callable[[], object], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)  # the interval between polls, bounded by the deadline
    raise AssertionError(f"not within {seconds} s: {what}")


def as_postgres() -> list[str]:
    """PostgreSQL refuses to run as root: its own user, as ./dev does it."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


@dataclass
class Postgres:
    bin: Path
    data: Path
    socket_dir: Path
    log: Path

    @property
    def url(self) -> str:
        return f"postgres://portal@/portal?host={self.socket_dir}"

    def ctl(self, *args: str) -> None:
        subprocess.run(
            [*as_postgres(), str(self.bin / "pg_ctl"), "-D", str(self.data), *args],
            check=True,
            capture_output=True,
            timeout=60,
        )

    def start(self) -> None:
        self.ctl(
            "-l",
            str(self.log),
            "-w",
            "-t",
            "30",
            "-o",
            f"-c listen_addresses='' -k {self.socket_dir} -c fsync=off",
            "start",
        )

    def stop(self) -> None:
        self.ctl("-m", "fast", "-w", "stop")


@dataclass
class Redis:
    port: int
    directory: Path
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                shutil.which("redis-server") or "/usr/bin/redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self.answers, 10, "redis-server answers")

    def answers(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(port=self.port, socket_timeout=1).ping())
        except redis.RedisError:
            return False

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture(scope="module")
def postgres() -> Iterator[Postgres]:
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    assert bins, "PostgreSQL is not installed: run ./dev test, which installs it"
    home = Path(tempfile.mkdtemp(prefix="memory-portal-outage-pg."))
    home.chmod(0o755)
    server = Postgres(Path(bins[-1]), home / "data", home, home / "server.log")
    if os.geteuid() == 0:
        shutil.chown(home, "postgres")
    subprocess.run(
        [
            *as_postgres(),
            *(str(server.bin / "initdb"), "-D", str(server.data), "-U", "portal"),
            *("--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync"),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    server.start()
    subprocess.run(
        [str(server.bin / "createdb"), "-h", str(home), "-U", "portal", "portal"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    yield server
    subprocess.run(
        [
            *as_postgres(),
            str(server.bin / "pg_ctl"),
            "-D",
            str(server.data),
            "-m",
            "immediate",
            "stop",
        ],
        capture_output=True,
        timeout=60,
    )
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Redis]:
    assert shutil.which("redis-server"), "redis-server is not installed: run ./dev test"
    server = Redis(free_port(), tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def instances(stack: Devstack, postgres: Postgres, redis_server: Redis) -> Iterator[Instances]:
    both = start_instances(
        stack,
        postgres.url,
        {
            "REDIS_URL": redis_server.url,
            "PORTAL_METRICS_TOKEN": METRICS_TOKEN,
            "PORTAL_DEPENDENCY_CHECK_SECONDS": CHECK_SECONDS,
            "PORTAL_REDIS_RETRY_SECONDS": "1",
            "PORTAL_LOG_LEVEL": "INFO",
        },
    )
    yield both
    both.stop()


def dependency_up(portal: Portal, dependency: str) -> float | None:
    text = requests.get(
        f"{portal.url}/metrics",
        headers={"Authorization": f"Bearer {METRICS_TOKEN}"},
        timeout=TIMEOUT,
    ).text
    prefix = f'portal_dependency_up{{dependency="{dependency}"}} '
    values = [
        float(line.removeprefix(prefix)) for line in text.splitlines() if line.startswith(prefix)
    ]
    return values[0] if values else None


def logged(portal: Portal, message: str) -> bool:
    for line in portal.log.read_text().splitlines():
        if line.startswith("{") and json.loads(line).get("message") == message:
            return True
    return False


def page(browser: requests.Session, url: str) -> requests.Response:
    return browser.get(url, allow_redirects=False, timeout=TIMEOUT)


def test_with_redis_down_everything_keeps_working(instances: Instances, stack, redis_server):
    browser = sign_in(instances.a.url, stack.ca)
    session = browser.cookies["memory_portal_session"]
    assert page(browser, f"{instances.b.url}/").status_code == 200
    wait_until(lambda: dependency_up(instances.a, "redis") == 1.0, 10, "redis up in the gauge")

    redis_server.stop()
    try:
        for portal in (instances.a, instances.b):
            dashboard = page(browser, f"{portal.url}/")
            assert dashboard.status_code == 200, dashboard.text[:500]
            assert "Alice Example" in dashboard.text
            card = page(browser, f"{portal.url}/cards/agents/travel-planner")
            assert card.status_code == 200
            assert requests.get(f"{portal.url}/readyz", timeout=TIMEOUT).status_code == 200
        # A new sign-in works too: sessions and the msal flow live in the database.
        other = sign_in(instances.b.url, stack.ca)
        assert page(other, f"{instances.a.url}/").status_code == 200
        for portal in (instances.a, instances.b):
            wait_until(lambda p=portal: dependency_up(p, "redis") == 0.0, 10, "redis down gauge")
            wait_until(
                lambda p=portal: logged(p, "Dependency unavailable: redis"), 10, "redis down line"
            )
    finally:
        redis_server.start()
    wait_until(lambda: dependency_up(instances.a, "redis") == 1.0, 10, "redis up again")
    assert page(browser, f"{instances.b.url}/").status_code == 200
    assert browser.cookies["memory_portal_session"] == session


def test_a_confirmation_sent_again_while_redis_is_down_adds_nothing(
    instances: Instances, stack: Devstack, redis_server: Redis, coreapi_tokens: TokenMinter
):
    demo = stack.fixtures
    client = CoreAPIClient(stack.coreapi.url, demo.instance_id)
    api = Api(client, CallerAuth(coreapi_tokens.delegated("alice@contoso.com")), demo.instance_id)
    browser = sign_in(instances.a.url, stack.ca)
    text = f"- Confirmed before Redis went down {uuid.uuid4().hex}\n"
    preview = preview_import(browser, instances.a, text)
    assert confirm_import(browser, instances.a, preview).status_code == 302
    redis_server.stop()
    try:
        # The retry through the load balancer, while the database cache stands in.
        again = confirm_import(browser, instances.b, preview)
        assert again.status_code == 302
    finally:
        redis_server.start()
    assert api.doc().count(text.strip()) == 1
    client.close()


def test_with_postgres_down_pages_answer_503_and_recover(instances: Instances, stack, postgres):
    browser = sign_in(instances.a.url, stack.ca)
    session = browser.cookies["memory_portal_session"]
    assert page(browser, f"{instances.b.url}/").status_code == 200

    postgres.stop()
    try:
        for portal in (instances.a, instances.b):
            for path in ("/", "/memory/user", "/cards/user"):
                answer = page(browser, f"{portal.url}{path}")
                assert answer.status_code == 503, (path, answer.status_code, answer.text[:300])
                assert int(answer.headers["Retry-After"]) > 0
                assert "temporarily unavailable" in answer.text
                assert "/static/css/portal" in answer.text  # the styled page
            # Still in rotation: the outage is shared, the instance is fine.
            assert requests.get(f"{portal.url}/readyz", timeout=TIMEOUT).status_code == 200
            assert requests.get(f"{portal.url}/livez", timeout=TIMEOUT).status_code == 200
            wait_until(
                lambda p=portal: dependency_up(p, "database") == 0.0, 10, "database down gauge"
            )
            wait_until(
                lambda p=portal: logged(p, "Dependency unavailable: database"), 10, "down line"
            )
    finally:
        postgres.start()
    # Back without a restart, in the same session.
    for portal in (instances.a, instances.b):
        wait_until(lambda p=portal: page(browser, f"{p.url}/").status_code == 200, 30, "pages back")
        wait_until(lambda p=portal: dependency_up(p, "database") == 1.0, 10, "database up gauge")
    assert "Alice Example" in page(browser, f"{instances.a.url}/").text
    assert browser.cookies["memory_portal_session"] == session
    for portal in (instances.a, instances.b):
        assert all(
            json.loads(line).get("status") != 500
            for line in portal.log.read_text().splitlines()
            if line.startswith("{")
        )
