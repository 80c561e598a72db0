"""Settings parsing: strict booleans, numbers, *_FILE secrets, required secret key."""

import importlib
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from portal import settings as portal_settings


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


def test_secret_key_required_without_debug(monkeypatch):
    monkeypatch.setenv("DJANGO_DEBUG", "false")
    monkeypatch.delenv("DJANGO_SECRET_KEY", raising=False)
    with pytest.raises(ImproperlyConfigured, match="DJANGO_SECRET_KEY is required"):
        _reload_settings()


def test_production_defaults(monkeypatch):
    monkeypatch.setenv("DJANGO_DEBUG", "false")
    monkeypatch.setenv("DJANGO_SECRET_KEY", "x" * 50)
    monkeypatch.delenv("PORTAL_HTTPS", raising=False)
    monkeypatch.setenv("DATABASE_URL", "postgres://portal:pw@db.internal:5432/portal")
    loaded = _reload_settings()
    assert loaded.DEBUG is False
    assert loaded.SESSION_COOKIE_SECURE is True
    assert loaded.CSRF_COOKIE_SECURE is True
    assert loaded.SESSION_COOKIE_HTTPONLY is True
    assert loaded.SECURE_HSTS_SECONDS > 0
    assert loaded.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
    assert loaded.ENTRA_CLIENT_SECRET == ""  # no development secret outside DEBUG
    assert loaded.ENTRA_INSTANCE_DISCOVERY is True


def test_devstack_defaults(monkeypatch):
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
