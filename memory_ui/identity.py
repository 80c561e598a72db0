"""Who is signed in, as the id_token said: the one identity every layer uses (audit,
operations, views), without the request it arrived with; and who acts for whom with which
credentials (`Actor`), which every memory source is called with."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
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


@dataclass(frozen=True)
class UserIdentity:
    """FoundationaLLM's UnifiedUserIdentity, sent as `X-USER-IDENTITY` on support calls."""

    name: str
    user_name: str
    user_id: str
    upn: str
    group_ids: tuple[str, ...] = ()

    def to_header(self) -> str:
        # CoreAPI binds these keys case-sensitively. ensure_ascii keeps non-ASCII names
        # header-safe (\\u escapes), and json escaping rules out header injection.
        return json.dumps(
            {
                "name": self.name,
                "user_name": self.user_name,
                "user_id": self.user_id,
                "upn": self.upn,
                "group_ids": list(self.group_ids),
            },
            separators=(",", ":"),
        )


@dataclass(frozen=True)
class CallerAuth:
    """How a call authenticates. `user_identity` only for support staff's app-only calls."""

    access_token: str = field(repr=False)  # kept out of repr so it never reaches a log
    user_identity: UserIdentity | None = None


@dataclass(frozen=True)
class Actor:
    """Who acts (`who`), with which credentials, for whom: support staff act for
    `subject_upn` with the portal's app token, and say why (`reason`, `ticket`)."""

    who: Identity
    auth: CallerAuth
    subject_upn: str | None = None
    reason: str = ""
    ticket: str = ""
