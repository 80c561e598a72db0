"""Settings parsing: strict booleans, numbers, *_FILE secrets, required variables."""

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.contrib.sessions.backends import db
from django.core.exceptions import ImproperlyConfigured

from portal import settings as portal_settings
from tests.receipt_keys import new_signing_key

RECEIPT_KEY = new_signing_key()
HISTORY_KEY = Fernet.generate_key().decode()


def test_env_bool_is_strict(monkeypatch):
    monkeypatch.setenv("X_FLAG", "yes")
    assert portal_settings.env_bool("X_FLAG", False) is True
    monkeypatch.setenv("X_FLAG", "off")
    assert portal_settings.env_bool("X_FLAG", True) is False
    monkeypatch.setenv("X_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG must be true or false"):
        portal_settings.env_bool("X_FLAG", False)
    monkeypatch.delenv("X_FLAG")
    assert portal_settings.env_bool("X_FLAG", True) is True


def test_env_numbers(monkeypatch):
    monkeypatch.setenv("X_INT", "42")
    assert portal_settings.env_int("X_INT", 1) == 42
    monkeypatch.setenv("X_INT", "4.2")
    with pytest.raises(ImproperlyConfigured, match="whole number"):
        portal_settings.env_int("X_INT", 1)
    monkeypatch.setenv("X_FLOAT", "0.5")
    assert portal_settings.env_float("X_FLOAT", 1.0) == 0.5
    monkeypatch.setenv("X_FLOAT", "fast")
    with pytest.raises(ImproperlyConfigured, match="must be a number"):
        portal_settings.env_float("X_FLOAT", 1.0)


def test_secret_from_file(monkeypatch, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("from-a-mounted-file\n")
    monkeypatch.setenv("X_SECRET_FILE", str(secret))
    monkeypatch.setenv("X_SECRET", "ignored")
    assert portal_settings.env("X_SECRET") == "from-a-mounted-file"


def test_env_list(monkeypatch):
    monkeypatch.setenv("X_HOSTS", " a.example , b.example,, ")
    assert portal_settings.env_list("X_HOSTS") == ["a.example", "b.example"]


def _reload_settings():
    sys.modules.pop("portal.settings", None)
    try:
        return importlib.import_module("portal.settings")
    finally:
        sys.modules["portal.settings"] = portal_settings


REPO = Path(__file__).resolve().parents[2]

PRODUCTION = {
    "DJANGO_SECRET_KEY": "x" * 50,
    "DJANGO_ALLOWED_HOSTS": "memory.contoso.com",
    "DATABASE_URL": "postgres://portal:pw@db.internal:5432/portal",
    "ENTRA_AUTHORITY": "https://login.microsoftonline.com/11111111-2222-3333-4444-555555555555",
    "ENTRA_CLIENT_ID": "22222222-3333-4444-5555-666666666666",
    "ENTRA_CLIENT_SECRET": "a-real-secret",
    "COREAPI_BASE_URL": "https://coreapi.contoso.com",
    "COREAPI_INSTANCE_ID": "33333333-4444-5555-6666-777777777777",
    "PORTAL_RECEIPT_SIGNING_KEY": RECEIPT_KEY,
    "PORTAL_RESURFACING_KEY": "a-real-resurfacing-key",
    "PORTAL_HISTORY_KEYS": HISTORY_KEY,
}


def _production_env(monkeypatch, **overrides: str | None) -> None:
    monkeypatch.setenv("DJANGO_DEBUG", "false")
    monkeypatch.delenv("PORTAL_DEVSTACK", raising=False)
    for name in (*PRODUCTION, "PORTAL_HTTPS", "REDIS_URL", "AZURE_FEDERATED_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(f"{name}_FILE", raising=False)
    for name, value in {**PRODUCTION, **overrides}.items():
        if value is not None:
            monkeypatch.setenv(name, value)


def test_secret_key_required_without_debug(monkeypatch):
    monkeypatch.setenv("DJANGO_DEBUG", "false")
    monkeypatch.delenv("DJANGO_SECRET_KEY", raising=False)
    with pytest.raises(ImproperlyConfigured, match="DJANGO_SECRET_KEY"):
        _reload_settings()


def test_start_up_names_every_missing_variable_at_once():
    """A real start (`manage.py check` in a fresh process), DEBUG off, nothing set: one
    message naming each variable, and no sign of the devstack's defaults."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("DJANGO_", "PORTAL_", "ENTRA_", "COREAPI_", "AZURE_"))
        and name not in ("DATABASE_URL", "REDIS_URL")
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    # One line, a JSON log record like every other, and no traceback.
    (last_line,) = result.stderr.strip().splitlines()
    entry = json.loads(last_line)
    assert entry["level"] == "CRITICAL"
    assert entry["message"].startswith("Memory Portal is not configured.")
    for name in (*PRODUCTION, "ENTRA_CLIENT_CERTIFICATE_PATH", "ENTRA_CLIENT_ASSERTION_FILE"):
        assert name in last_line
    assert "Traceback" not in result.stderr and "ImproperlyConfigured" not in result.stderr


def test_missing_settings_accepts_any_one_credential():
    base = {name: value for name, value in PRODUCTION.items() if name != "ENTRA_CLIENT_SECRET"}
    assert portal_settings.missing_settings({**base, "ENTRA_CLIENT_SECRET": "s"}) == []
    assert portal_settings.missing_settings({**base, "ENTRA_CLIENT_SECRET_FILE": "/s"}) == []
    certificate = {
        "ENTRA_CLIENT_CERTIFICATE_PATH": "/k.pem",
        "ENTRA_CLIENT_CERTIFICATE_THUMBPRINT": "ab",
    }
    assert portal_settings.missing_settings({**base, **certificate}) == []
    assert portal_settings.missing_settings({**base, "AZURE_FEDERATED_TOKEN_FILE": "/t"}) == []
    assert portal_settings.missing_settings({**base, "ENTRA_MANAGED_IDENTITY_CLIENT_ID": "m"}) == []
    # A certificate without its thumbprint is no credential.
    half = {**base, "ENTRA_CLIENT_CERTIFICATE_PATH": "/k.pem"}
    assert [m.split()[0] for m in portal_settings.missing_settings(half)] == ["ENTRA_CLIENT_SECRET"]


def test_production_has_no_devstack_defaults(monkeypatch):
    _production_env(monkeypatch)
    loaded = _reload_settings()
    assert "devstack" not in loaded.INSTALLED_APPS
    assert loaded.PORTAL_CA_BUNDLE == ""
    assert loaded.ENTRA_INSTANCE_DISCOVERY is True
    assert loaded.ALLOWED_HOSTS == ["memory.contoso.com"]
    assert loaded.PORTAL_RECEIPT_SIGNING_KEY == RECEIPT_KEY
    assert loaded.PORTAL_RESURFACING_KEY == "a-real-resurfacing-key"
    assert loaded.PORTAL_HISTORY_KEYS == [HISTORY_KEY]


def test_redis_keeps_sessions_and_staged_restores_in_the_database(monkeypatch):
    _production_env(monkeypatch, REDIS_URL="rediss://:key@cache.contoso.com:6380/0")
    loaded = _reload_settings()
    # Sessions only in the database: never stale from a Redis that was away (issue 19).
    assert loaded.SESSION_ENGINE == "portal.sessions"
    assert issubclass(importlib.import_module(loaded.SESSION_ENGINE).SessionStore, db.SessionStore)
    assert loaded.CACHES["default"]["BACKEND"] == "portal.caches.RedisWithDatabaseFallback"
    assert loaded.CACHES["default"]["OPTIONS"]["socket_timeout"] <= 1
    assert loaded.CACHES["durable"]["BACKEND"].endswith("DatabaseCache")
    assert loaded.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True


def test_production_defaults(monkeypatch):
    _production_env(monkeypatch)
    loaded = _reload_settings()
    assert loaded.DEBUG is False
    assert loaded.SESSION_COOKIE_SECURE is True
    assert loaded.CSRF_COOKIE_SECURE is True
    assert loaded.SESSION_COOKIE_HTTPONLY is True
    assert loaded.SECURE_HSTS_SECONDS > 0
    assert loaded.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
    assert loaded.ENTRA_CLIENT_SECRET == "a-real-secret"
    assert loaded.ENTRA_INSTANCE_DISCOVERY is True
    assert loaded.SECURE_HSTS_INCLUDE_SUBDOMAINS is False
    assert loaded.SECURE_HSTS_PRELOAD is False


def test_devstack_defaults(monkeypatch):
    monkeypatch.setenv("PORTAL_DEVSTACK", "true")
    monkeypatch.setenv("DJANGO_DEBUG", "true")
    monkeypatch.delenv("DJANGO_SECRET_KEY", raising=False)
    monkeypatch.delenv("PORTAL_HTTPS", raising=False)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    loaded = _reload_settings()
    assert loaded.SESSION_COOKIE_SECURE is False
    assert loaded.SECURE_HSTS_SECONDS == 0
    assert loaded.COREAPI_BASE_URL == "http://127.0.0.1:8001"
    assert loaded.ENTRA_AUTHORITY.startswith("https://127.0.0.1:8443/")
    assert loaded.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
    assert "devstack" in loaded.INSTALLED_APPS


def test_devstack_urls_follow_the_devstack_ports(monkeypatch):
    # `manage.py devstack` passes its DEVSTACK_*_PORT variables on to the portal it starts.
    monkeypatch.setenv("PORTAL_DEVSTACK", "true")
    monkeypatch.setenv("DJANGO_DEBUG", "true")
    for name in ("DATABASE_URL", "COREAPI_BASE_URL", "ENTRA_AUTHORITY", "GRAPH_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("LEGACY_STORES_BASE_URL", "MEMORYOS_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    ports = {"IDP": 9443, "COREAPI": 9001, "LEGACY": 9002, "MEMORYOS": 9004}
    for name, port in ports.items():
        monkeypatch.setenv(f"DEVSTACK_{name}_PORT", str(port))
    loaded = _reload_settings()
    assert loaded.COREAPI_BASE_URL == "http://127.0.0.1:9001"
    assert loaded.ENTRA_AUTHORITY.startswith("https://127.0.0.1:9443/")
    assert loaded.GRAPH_BASE_URL == "https://127.0.0.1:9443"
    assert loaded.LEGACY_STORES_BASE_URL == "http://127.0.0.1:9002"
    assert loaded.MEMORYOS_BASE_URL == "http://127.0.0.1:9004"


@pytest.mark.parametrize(
    "credentials",
    [
        # Container Apps with deploy/portal.env.example's AKS token file left in (issue 19).
        {
            "ENTRA_CLIENT_ASSERTION_FILE": "/var/run/secrets/t",
            "ENTRA_MANAGED_IDENTITY_CLIENT_ID": "m",
        },
        {
            "AZURE_FEDERATED_TOKEN_FILE": "/var/run/secrets/t",
            "ENTRA_MANAGED_IDENTITY_CLIENT_ID": "m",
        },
        {"ENTRA_CLIENT_SECRET": "s", "ENTRA_CLIENT_CERTIFICATE_PATH_FILE": "/k"},
    ],
)
def test_contradictory_credentials_are_refused_by_name(monkeypatch, credentials):
    _production_env(monkeypatch, **{"ENTRA_CLIENT_SECRET": None, **credentials})
    with pytest.raises(ImproperlyConfigured, match="one credential, not several") as refused:
        _reload_settings()
    for name in credentials:
        assert name.removesuffix("_FILE").removesuffix("_PATH") in str(refused.value)


def test_one_credential_with_the_platform_token_file_is_accepted(monkeypatch):
    _production_env(monkeypatch, ENTRA_CLIENT_SECRET=None, AZURE_FEDERATED_TOKEN_FILE="/t")
    assert _reload_settings().ENTRA_CLIENT_ASSERTION_FILE == "/t"


def test_a_malformed_receipt_key_stops_the_start_up(monkeypatch):
    _production_env(monkeypatch, PORTAL_RECEIPT_SIGNING_KEY="not a key")
    with pytest.raises(ImproperlyConfigured, match="PORTAL_RECEIPT_SIGNING_KEY must be"):
        _reload_settings()


def test_a_malformed_history_key_stops_the_start_up(monkeypatch):
    _production_env(monkeypatch, PORTAL_HISTORY_KEYS=f"{HISTORY_KEY},not a key")
    with pytest.raises(ImproperlyConfigured, match="PORTAL_HISTORY_KEYS must be Fernet keys"):
        _reload_settings()


def test_history_keys_are_read_newest_first(monkeypatch):
    older = Fernet.generate_key().decode()
    _production_env(monkeypatch, PORTAL_HISTORY_KEYS=f"{HISTORY_KEY}, {older}")
    assert _reload_settings().PORTAL_HISTORY_KEYS == [HISTORY_KEY, older]
