"""Reading the portal's environment: typed variables, NAME_FILE secrets, and the checks
a production start-up makes on it (portal/settings.py uses all of these)."""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env(name: str, default: str = "") -> str:
    """A variable, or the contents of the file named by NAME_FILE (for mounted secrets)."""
    file_path = os.environ.get(f"{name}_FILE")
    if file_path:
        return Path(file_path).read_text(encoding="utf-8").strip()
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {raw!r}.")


def _env_number[N: (int, float)](name: str, default: N, parse: type[N], kind: str) -> N:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return parse(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be {kind}, not {raw!r}.") from exc


def env_int(name: str, default: int) -> int:
    return _env_number(name, default, int, "a whole number")


def env_float(name: str, default: float) -> float:
    return _env_number(name, default, float, "a number")


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env(name, default).split(",") if item.strip()]


def missing_settings(environ: dict[str, str] | os._Environ[str]) -> list[str]:
    """The variables a deployment without the devstack must set and has not (a `NAME_FILE`
    counts as set). One credential for Entra ID is enough: a secret, a certificate, or a
    federated token (a workload identity file or a managed identity)."""

    def given(name: str) -> bool:
        return bool(environ.get(name, "").strip() or environ.get(f"{name}_FILE", "").strip())

    missing = [
        name
        for name in (
            "DJANGO_SECRET_KEY",
            "DJANGO_ALLOWED_HOSTS",
            "DATABASE_URL",
            "ENTRA_AUTHORITY",
            "ENTRA_CLIENT_ID",
            "COREAPI_BASE_URL",
            "COREAPI_INSTANCE_ID",
            "PORTAL_RECEIPT_SIGNING_KEY",
            "PORTAL_RESURFACING_KEY",
            "PORTAL_HISTORY_KEYS",
        )
        if not given(name)
    ]
    has_certificate = given("ENTRA_CLIENT_CERTIFICATE_PATH") and given(
        "ENTRA_CLIENT_CERTIFICATE_THUMBPRINT"
    )
    has_assertion = (
        given("ENTRA_CLIENT_ASSERTION_FILE")
        or given("AZURE_FEDERATED_TOKEN_FILE")
        or given("ENTRA_MANAGED_IDENTITY_CLIENT_ID")
    )
    if not (given("ENTRA_CLIENT_SECRET") or has_certificate or has_assertion):
        missing.append(
            "ENTRA_CLIENT_SECRET (or ENTRA_CLIENT_CERTIFICATE_PATH with "
            "ENTRA_CLIENT_CERTIFICATE_THUMBPRINT, or ENTRA_CLIENT_ASSERTION_FILE, or "
            "ENTRA_MANAGED_IDENTITY_CLIENT_ID)"
        )
    return missing


def conflicting_credentials(environ: dict[str, str] | os._Environ[str]) -> list[str]:
    """The Entra ID credentials given at once (empty when at most one is). The portal would
    use the first of them and ignore the rest, so a deployment that means one (say, a
    Container Apps managed identity) silently uses another (an AKS token file that is not
    there): refused instead."""

    def given(*names: str) -> str:
        return next(
            (
                name
                for name in names
                for variable in (name, f"{name}_FILE")
                if environ.get(variable, "").strip()
            ),
            "",
        )

    kinds = [
        given("ENTRA_CLIENT_ASSERTION_FILE", "AZURE_FEDERATED_TOKEN_FILE"),
        given("ENTRA_MANAGED_IDENTITY_CLIENT_ID"),
        given("ENTRA_CLIENT_CERTIFICATE_PATH"),
        given("ENTRA_CLIENT_SECRET"),
    ]
    found = [name for name in kinds if name]
    return found if len(found) > 1 else []
