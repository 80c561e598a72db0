"""Where the devstack keeps its state, and the fixed identities it serves."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES_PATH = Path(__file__).resolve().parent / "fixtures.toml"


def _port(name: str, default: int) -> int:
    # The fixed ports of docs/architecture.md (Devstack interface); tests that start the
    # whole devstack as a person would move it to free ports with these variables.
    return int(os.environ.get(name) or default)


IDP_HOST = "127.0.0.1"
IDP_PORT = _port("DEVSTACK_IDP_PORT", 8443)
COREAPI_HOST = "127.0.0.1"
COREAPI_PORT = _port("DEVSTACK_COREAPI_PORT", 8001)
PORTAL_PORT = _port("DEVSTACK_PORTAL_PORT", 8000)
LEGACY_HOST = "127.0.0.1"
LEGACY_PORT = _port("DEVSTACK_LEGACY_PORT", 8002)
MEMORYOS_HOST = "127.0.0.1"
MEMORYOS_PORT = _port("DEVSTACK_MEMORYOS_PORT", 8004)
MEMORY_API_HOST = "127.0.0.1"
MEMORY_API_PORT = _port("DEVSTACK_MEMORY_API_PORT", 8003)


def state_dir() -> Path:
    """The one ignored folder that holds keys, CA and database (DEVSTACK_HOME overrides)."""
    path = Path(os.environ.get("DEVSTACK_HOME") or REPO_ROOT / ".devstack")
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass(frozen=True)
class User:
    upn: str
    name: str
    oid: str
    roles: tuple[str, ...] = ()
    group_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Client:
    name: str
    client_id: str
    client_secret: str
    service_principal_oid: str
    api_roles: tuple[str, ...] = ()
    graph_roles: tuple[str, ...] = ()  # Microsoft Graph application permissions
    redirect_uris: tuple[str, ...] = ()
    post_logout_redirect_uris: tuple[str, ...] = ()


@dataclass(frozen=True)
class Agent:
    name: str
    display_name: str
    description: str
    readers: dict[str, str] = field(default_factory=dict)  # lower-case UPN -> role


@dataclass(frozen=True)
class Fixtures:
    tenant_id: str
    instance_id: str
    core_api_audience: str
    core_api_scopes: tuple[str, ...]
    substitution_principal_id: str
    substitution_upn_pattern: str
    clients: tuple[Client, ...]
    users: tuple[User, ...]
    agents: tuple[Agent, ...]
    memory: tuple[dict[str, Any], ...]

    def user(self, upn: str) -> User | None:
        wanted = upn.casefold()
        return next((u for u in self.users if u.upn.casefold() == wanted), None)

    def client(self, client_id: str) -> Client | None:
        return next((c for c in self.clients if c.client_id == client_id), None)

    @property
    def portal(self) -> Client:
        return self.clients[0]


def load_fixtures(path: Path = FIXTURES_PATH) -> Fixtures:
    with path.open("rb") as fh:
        raw = tomllib.load(fh)
    return Fixtures(
        tenant_id=raw["tenant_id"],
        instance_id=raw["instance_id"],
        core_api_audience=raw["core_api"]["audience"],
        core_api_scopes=tuple(raw["core_api"]["scopes"]),
        substitution_principal_id=raw["substitution"]["security_principal_id"],
        substitution_upn_pattern=raw["substitution"]["user_principal_name_pattern"],
        clients=tuple(_record(Client, c) for c in raw["clients"]),
        users=tuple(_record(User, u) for u in raw["users"]),
        agents=tuple(
            Agent(
                name=a["name"],
                display_name=a["display_name"],
                description=a["description"],
                readers={k.casefold(): v for k, v in a.get("readers", {}).items()},
            )
            for a in raw["agents"]
        ),
        memory=tuple(raw.get("memory", ())),
    )


def _record[T](cls: type[T], table: dict[str, Any]) -> T:
    """A fixtures.toml table as the dataclass `cls`: arrays become tuples (the records are
    frozen), keys left out take the field's default."""
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(
        **{k: tuple(v) if isinstance(v, list) else v for k, v in table.items() if k in names}
    )


@cache
def fixtures() -> Fixtures:
    return load_fixtures()


def idp_base_url(host: str = IDP_HOST, port: int = IDP_PORT) -> str:
    return f"https://{host}:{port}"


def issuer(base_url: str, tenant_id: str) -> str:
    """Entra v2 issuer: {authority host}/{tenant}/v2.0."""
    return f"{base_url.rstrip('/')}/{tenant_id}/v2.0"
