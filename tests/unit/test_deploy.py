"""The deployment as shipped: the documented production configuration passes Django's
deployment checks, `migrate` makes the cache table whatever the cache, gunicorn loads its
configuration, and telemetry switches on from its connection string. Each in a fresh
process, as an operator would run it."""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography.fernet import Fernet

from tests.receipt_keys import new_signing_key

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "deploy" / "portal.env.example"
GUNICORN = Path(sys.executable).with_name("gunicorn")

# Values for the secrets the example reads from mounted files.
SECRET_VALUES = {
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    "PORTAL_RECEIPT_SIGNING_KEY": new_signing_key(),
    "PORTAL_RESURFACING_KEY": secrets.token_urlsafe(32),
    "PORTAL_HISTORY_KEYS": Fernet.generate_key().decode(),
    "DATABASE_URL": "postgres://portal@db.internal:5432/portal",
    "REDIS_URL": "rediss://:key@cache.internal:6380/0",
    "PORTAL_METRICS_TOKEN": "scrape-token",
    "APPLICATIONINSIGHTS_CONNECTION_STRING": "InstrumentationKey=00000000-0000-0000-0000-000000000000",
}


def clean_env(**extra: str) -> dict[str, str]:
    """This machine's environment without any of the portal's variables."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("DJANGO_", "PORTAL_", "ENTRA_", "COREAPI_", "AZURE_"))
        and name not in ("DATABASE_URL", "REDIS_URL", "APPLICATIONINSIGHTS_CONNECTION_STRING")
    }
    return {**env, **extra}


def example_env(tmp_path: Path) -> dict[str, str]:
    """deploy/portal.env.example as written, its secret files made in tmp_path."""
    values: dict[str, str] = {}
    for line in EXAMPLE.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, value = line.split("=", 1)
        if name.endswith("_FILE") and name.removesuffix("_FILE") in SECRET_VALUES:
            secret = tmp_path / name.lower()
            secret.write_text(SECRET_VALUES[name.removesuffix("_FILE")] + "\n")
            value = str(secret)
        values[name] = value
    return values


# Application Insights towards loopback, where nothing listens; no resource detection and
# no statsbeat, so nothing leaves the machine.
TELEMETRY = {
    "APPLICATIONINSIGHTS_CONNECTION_STRING": (
        "InstrumentationKey=00000000-0000-0000-0000-000000000000;"
        "IngestionEndpoint=http://127.0.0.1:9/"
    ),
    "OTEL_EXPERIMENTAL_RESOURCE_DETECTORS": "otel",
    "APPLICATIONINSIGHTS_STATSBEAT_DISABLED_ALL": "true",
}


def devstack_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """clean_env for the devstack's identities, with an SQLite database in tmp_path."""
    return clean_env(
        PORTAL_DEVSTACK="true",
        DJANGO_SECRET_KEY="deploy-test-" + "k" * 40,
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        **extra,
    )


def run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`command` in a fresh process in the repository, as an operator would run it."""
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "manage.py", *args], env)


def entrypoint(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """deploy/entrypoint.sh as the image runs it, with this interpreter's tools on PATH."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return run(["deploy/entrypoint.sh", *args], {**env, "PATH": path})


def python(probe: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-c", probe], env)


def printed(probe: str, env: dict[str, str]) -> list[str]:
    """The lines `probe` prints, once it has run to its end."""
    result = python(probe, env)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_documented_production_configuration_passes_check_deploy(tmp_path: Path):
    result = entrypoint("check", env=clean_env(**example_env(tmp_path)))
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_the_example_names_one_credential_and_refuses_a_second(tmp_path: Path):
    """Issue 19: the example set an AKS token file, which won over Container Apps' managed
    identity. Now it names one credential, and adding AKS' token file is refused."""
    env = clean_env(**example_env(tmp_path))
    assert env["ENTRA_MANAGED_IDENTITY_CLIENT_ID"]
    both = {**env, "AZURE_FEDERATED_TOKEN_FILE": "/var/run/secrets/azure/tokens/token"}
    result = entrypoint("check", env=both)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    message = json.loads(line)["message"]
    assert "AZURE_FEDERATED_TOKEN_FILE" in message
    assert "ENTRA_MANAGED_IDENTITY_CLIENT_ID" in message


def test_entrypoint_names_its_commands_for_anything_else():
    result = entrypoint("serv", env=clean_env())
    assert result.returncode == 2
    assert "serve" in result.stderr and "migrate" in result.stderr


def test_without_the_hsts_variables_check_deploy_warns(tmp_path: Path):
    env = example_env(tmp_path)
    del env["DJANGO_HSTS_INCLUDE_SUBDOMAINS"], env["DJANGO_HSTS_PRELOAD"]
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=clean_env(**env))
    assert result.returncode != 0
    assert "security.W005" in result.stderr and "security.W021" in result.stderr


def test_migrate_makes_the_cache_table_even_with_redis(tmp_path: Path):
    """REDIS_URL names a Redis nobody runs: migrate never needs it, and the table is
    there for the day Redis is dropped (and for sessions and staged restores now)."""
    env = devstack_env(tmp_path, REDIS_URL="redis://127.0.0.1:9/0")
    result = entrypoint("migrate", env=env)
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(tmp_path / "db.sqlite3") as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert "portal_cache" in tables


def test_the_daily_job_deletes_expired_sessions_and_claims(tmp_path: Path):
    """`clearsessions` as the chart's CronJob runs it: expired sessions (with their refresh
    tokens) and submission claims past their day go, nothing else (issue 19 left the
    claims to the next form claimed)."""
    env = devstack_env(tmp_path)
    assert entrypoint("migrate", env=env).returncode == 0
    now = datetime.now(UTC)

    def stamp(delta: timedelta) -> str:  # how Django stores a datetime in SQLite (UTC)
        return (now + delta).strftime("%Y-%m-%d %H:%M:%S.%f")

    with sqlite3.connect(tmp_path / "db.sqlite3") as db:
        db.executemany(
            "INSERT INTO django_session VALUES (?, '', ?)",
            [("expired", stamp(-timedelta(minutes=1))), ("live", stamp(timedelta(hours=8)))],
        )
        db.executemany(
            "INSERT INTO memory_ui_submissionclaim"
            " (owner_oid, token, created_at, state, round) VALUES (?, ?, ?, '', 0)",
            [
                ("alice-oid", "old-" + "k" * 18, stamp(-timedelta(days=1, minutes=1))),
                ("alice-oid", "new-" + "k" * 18, stamp(-timedelta(hours=23))),
            ],
        )
    result = entrypoint("clearsessions", env=env)
    assert result.returncode == 0, result.stderr
    assert "1 expired submission claims" in result.stdout
    with sqlite3.connect(tmp_path / "db.sqlite3") as db:
        assert [r[0] for r in db.execute("SELECT session_key FROM django_session")] == ["live"]
        tokens = [r[0] for r in db.execute("SELECT token FROM memory_ui_submissionclaim")]
    assert tokens == ["new-" + "k" * 18]


def test_gunicorn_loads_its_configuration(tmp_path: Path):
    env = devstack_env(
        tmp_path,
        DJANGO_STATIC_ROOT=str(tmp_path / "static"),
        GUNICORN_MAX_REQUESTS="500",
        TMPDIR=str(tmp_path),
    )
    result = run([str(GUNICORN), "-c", "deploy/gunicorn.conf.py", "--print-config"], env)
    assert result.returncode == 0, result.stderr
    printed = dict(
        (name.strip(), value.strip())
        for name, _, value in (line.partition("=") for line in result.stdout.splitlines())
    )
    assert printed["worker_class"] == "gthread"
    assert int(printed["threads"]) > 1
    assert printed["max_requests"] == "500"
    assert printed["control_socket_disable"] == "True"
    # Above the longest CoreAPI wait: 3 GET attempts of 3.05 s + 10 s, plus backoff.
    assert int(printed["graceful_timeout"]) > 3 * (3.05 + 10) + 1


def test_telemetry_switches_on_with_a_connection_string(tmp_path: Path):
    env = devstack_env(tmp_path, **TELEMETRY)
    probe = (
        "import logging, portal.wsgi\n"
        "from django.conf import settings\n"
        "from opentelemetry import trace\n"
        "print(type(trace.get_tracer_provider()).__name__)\n"
        "print(any('opentelemetry' in m for m in settings.MIDDLEWARE))\n"
        "print(sorted(type(h).__name__ for h in logging.getLogger().handlers))\n"
        "import os; os._exit(0)\n"  # no exporter flush towards the unreachable endpoint
    )
    assert printed(probe, env) == [
        "TracerProvider",
        "True",
        "['LoggingHandler', 'StreamHandler']",
    ]


def test_probes_answer_by_pod_ip_with_telemetry_on(tmp_path: Path):
    """Issue 19: with Application Insights on, the OpenTelemetry middleware read the Host
    first and answered 400 to kubelet's probes by pod IP. The WSGI application exactly as
    gunicorn loads it, telemetry on, called with a pod IP as the Host."""
    env = devstack_env(
        tmp_path,
        DJANGO_ALLOWED_HOSTS="memory.contoso.com",
        PORTAL_METRICS_TOKEN="scrape-token",
        PORTAL_DEPENDENCY_CHECK_SECONDS="0",
        **TELEMETRY,
    )
    probe = (
        "import io, sys, portal.wsgi\n"
        "from django.conf import settings\n"
        "assert any('opentelemetry' in m for m in settings.MIDDLEWARE)\n"
        "def call(path, host, **headers):\n"
        "    environ = {'REQUEST_METHOD': 'GET', 'PATH_INFO': path, 'SERVER_NAME': host,\n"
        "               'SERVER_PORT': '8000', 'HTTP_HOST': host, 'wsgi.url_scheme': 'http',\n"
        "               'wsgi.input': io.BytesIO(), 'wsgi.errors': sys.stderr, **headers}\n"
        "    seen = []\n"
        "    portal.wsgi.application(environ, lambda status, h: seen.append(status))\n"
        "    print(path, seen[0].split()[0])\n"
        "call('/livez', '10.244.1.17:8000')\n"
        "call('/readyz', '10.244.1.17:8000')\n"
        "call('/metrics', '10.244.1.17', HTTP_AUTHORIZATION='Bearer scrape-token')\n"
        # Everything else is traced, and the Host check holds for it.
        "names = [m.rsplit('.', 1)[-1] for m in settings.MIDDLEWARE]\n"
        "print(names[:5])\n"
        "import os; os._exit(0)\n"
    )
    assert printed(probe, env) == [
        "/livez 200",
        "/readyz 200",
        "/metrics 200",
        "['request_ids', 'probes', 'metrics', '_DjangoMiddleware', 'SecurityMiddleware']",
    ]


def test_the_log_stream_stays_json_when_the_telemetry_exporter_fails(tmp_path: Path):
    """Issue 19: the exporter's own warnings and its failed flush at exit were bare text.
    Its endpoint refuses connections here; the process exits normally (atexit runs)."""
    env = devstack_env(tmp_path, PORTAL_DEPENDENCY_CHECK_SECONDS="0", **TELEMETRY)
    probe = "import logging, portal.wsgi\nlogging.getLogger('memory_ui').warning('exported')\n"
    result = python(probe, env)
    assert result.returncode == 0, result.stderr
    entries = [json.loads(line) for line in result.stderr.splitlines()]  # each line JSON
    assert any(entry["message"] == "exported" for entry in entries)
    assert result.stdout == ""


def test_every_variable_is_documented_in_the_readme():
    readme = (REPO / "README.md").read_text()
    sources = [
        (REPO / "portal" / "settings.py").read_text(),
        (REPO / "deploy" / "gunicorn.conf.py").read_text(),
    ]
    names = {
        name
        for source in sources
        for name in re.findall(
            r"(?:\benv|\benv_bool|\benv_int|\benv_float|\benv_list|\b_int|os\.environ\.get)"
            r'\(\s*"([A-Z_]+)"',
            source,
        )
    }
    # Set by the platform or by gunicorn's configuration for its workers, not by operators.
    names -= {"AZURE_FEDERATED_TOKEN_FILE", "PROMETHEUS_MULTIPROC_DIR", "PORTAL_DRAIN_FILE"}
    assert len(names) > 40
    undocumented = sorted(name for name in names if f"`{name}`" not in readme)
    assert undocumented == []


def test_what_dev_run_leaves_behind_is_ignored_by_git():
    # The devstack's SQLite database runs in WAL mode (portal/settings.py): beside
    # db.sqlite3 it keeps db.sqlite3-wal and db.sqlite3-shm while the portal runs.
    left = ["db.sqlite3", "db.sqlite3-wal", "db.sqlite3-shm", ".devstack/signing-key.pem"]
    found = subprocess.run(
        ["git", "check-ignore", "--no-index", *left], cwd=REPO, capture_output=True, text=True
    )
    assert found.stdout.split() == left
