"""Who is signed in, as the id_token said: the one identity every layer uses (audit,
operations, views), without the request it arrived with."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.conf import settings


@dataclass(frozen=True)
class Identity:
    oid: str
    tid: str
    upn: str
    name: str
    roles: tuple[str, ...]
    home_account_id: str

    @property
    def is_support(self) -> bool:
        return settings.SUPPORT_ROLE in self.roles

    def to_session(self) -> dict[str, Any]:
        """As the session keeps it (JSON, so the roles are a list); `from_session` reverses it."""
        return {**asdict(self), "roles": list(self.roles)}

    @classmethod
    def from_session(cls, raw: dict[str, Any]) -> Identity:
        return cls(**{**raw, "roles": tuple(raw["roles"])})

    @classmethod
    def from_claims(cls, claims: dict[str, Any]) -> Identity:
        oid, tid = str(claims.get("oid", "")), str(claims.get("tid", ""))
        roles = claims.get("roles") or []
        return cls(
            oid=oid,
            tid=tid,
            upn=str(claims.get("preferred_username") or claims.get("upn") or ""),
            name=str(claims.get("name") or claims.get("preferred_username") or ""),
            roles=tuple(str(r) for r in roles) if isinstance(roles, list) else (),
            home_account_id=f"{oid}.{tid}",
        )
