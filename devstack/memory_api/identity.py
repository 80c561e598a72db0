"""Who may call the memory-api emulator: ServiceAccount tokens, subject proofs and the
pseudonymised users (docs/memory-api.md, M2 and M3).

Kubernetes signs a projected ServiceAccount token and memory-api asks TokenReview whether it
is valid; here the devstack's signing key ({home}/signing-key.pem, devstack.pki) stands in
for the cluster's, and checking the signature, issuer, audience and expiry stands in for
TokenReview. The subject proof (X-Omnia-Subject-Proof, the conversation's session token) is
a JWT signed by the same key whose `sub` is the virtual_user_id.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import time
import tomllib
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from jwt.exceptions import PyJWTError

from devstack.config import fixtures as demo_fixtures
from devstack.pki import Pki, load_signing_key

FIXTURES_PATH = Path(__file__).resolve().parent / "fixtures.toml"
TOKEN_FILENAME = "memory-api-portal-token"  # the portal's projected token, in {home}
KEY_FILENAME = "memory-api-pseudonym-key"  # the pseudonym key, as the portal's secret
TOKEN_LIFETIME = 3600  # a projected token's default expirationSeconds
PROOF_LIFETIME = 3600
LEEWAY_SECONDS = 30


@dataclass(frozen=True)
class Workspace:
    uid: str
    name: str


@dataclass(frozen=True)
class Settings:
    workspace: Workspace
    other_workspace: Workspace
    audience: str
    issuer: str
    allowed_subjects: tuple[str, ...]
    allowed_namespaces: tuple[str, ...]
    proof_issuer: str
    proof_audience: str
    pseudonym_key: str
    accounts: dict[str, str]  # --as name -> ServiceAccount subject
    raw: dict[str, Any]

    def virtual_user_id(self, upn: str) -> str:
        """The demo user's pseudonym: hex HMAC-SHA256 of their oid (M2)."""
        user = demo_fixtures().user(upn)
        if user is None:
            raise KeyError(upn)
        return pseudonym(self.pseudonym_key, user.oid)

    def virtual_user_ids(self) -> dict[str, str]:
        return {u.upn: self.virtual_user_id(u.upn) for u in demo_fixtures().users}


def pseudonym(key: str, oid: str) -> str:
    return hmac.new(key.encode(), oid.casefold().encode(), hashlib.sha256).hexdigest()


def load_settings(path: Path = FIXTURES_PATH) -> Settings:
    with path.open("rb") as fh:
        raw = tomllib.load(fh)
    auth = raw["auth"]
    return Settings(
        workspace=Workspace(**raw["workspace"]),
        other_workspace=Workspace(**raw["other_workspace"]),
        audience=auth["audience"],
        issuer=auth["issuer"],
        allowed_subjects=tuple(auth["allowed_subjects"]),
        allowed_namespaces=tuple(auth["allowed_namespaces"]),
        proof_issuer=auth["proof_issuer"],
        proof_audience=auth["proof_audience"],
        pseudonym_key=auth["pseudonym_key"],
        accounts=dict(raw["accounts"]),
        raw=raw,
    )


# --- minting (devstack_token, the projected token file, tests) ---------------------------


def service_account_token(
    pki: Pki, settings: Settings, subject: str, lifetime: int = TOKEN_LIFETIME
) -> str:
    """A projected ServiceAccount token for `system:serviceaccount:<ns>:<name>`."""
    _, _, namespace, name = subject.split(":", 3)
    now = int(time.time())
    claims = {
        "iss": settings.issuer,
        "sub": subject,
        "aud": [settings.audience],
        "iat": now,
        "nbf": now,
        "exp": now + lifetime,
        "kubernetes.io": {
            "namespace": namespace,
            "serviceaccount": {"name": name, "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, subject))},
        },
    }
    return _sign(pki, claims)


def subject_proof(
    pki: Pki, settings: Settings, virtual_user_id: str, lifetime: int = PROOF_LIFETIME
) -> str:
    now = int(time.time())
    claims = {
        "iss": settings.proof_issuer,
        "aud": settings.proof_audience,
        "sub": virtual_user_id,
        "iat": now,
        "exp": now + lifetime,
        "sid": uuid.uuid4().hex,
    }
    return _sign(pki, claims)


def _sign(pki: Pki, claims: dict[str, Any]) -> str:
    return jwt.encode(
        claims, load_signing_key(pki.signing_key), algorithm="RS256", headers={"kid": pki.kid}
    )


def write_projected_token(home: Path, pki: Pki, settings: Settings) -> Path:
    """The portal's token where the kubelet would project it; replaced atomically, as the
    kubelet swaps its symlink, so a reader never sees half a token."""
    path = home / TOKEN_FILENAME
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(service_account_token(pki, settings, settings.accounts["portal"]))
    tmp.replace(path)
    return path


def write_pseudonym_key(home: Path, settings: Settings) -> Path:
    """The devstack's pseudonym key where the portal reads its secret (M2)."""
    path = home / KEY_FILENAME
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(settings.pseudonym_key)
    return path


# --- checking (the emulator) -------------------------------------------------------------


class Unauthenticated(Exception):
    """No token, or one TokenReview would not authenticate: 401."""


class NotAllowed(Exception):
    """Authenticated, but neither exact-listed nor in an allowed namespace: 403."""


@dataclass(frozen=True)
class Caller:
    subject: str
    system_service: bool  # exact-listed; otherwise trusted only by its namespace


class Verifier:
    def __init__(self, pki: Pki, settings: Settings) -> None:
        self.public_key = load_signing_key(pki.signing_key).public_key()
        self.settings = settings

    def caller(self, authorization: str | None) -> Caller:
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("a ServiceAccount bearer token is required")
        try:
            claims = jwt.decode(
                token.strip(),
                self.public_key,
                algorithms=["RS256"],
                audience=self.settings.audience,
                issuer=self.settings.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "sub"]},
            )
        except PyJWTError as exc:
            raise Unauthenticated(f"token review failed: {exc}") from exc
        subject = claims["sub"]
        namespace = (claims.get("kubernetes.io") or {}).get("namespace")
        if subject in self.settings.allowed_subjects:
            return Caller(subject, system_service=True)
        if namespace in self.settings.allowed_namespaces:
            return Caller(subject, system_service=False)
        raise NotAllowed(f"service account {subject!r} is not allowed to call memory-api")

    def proven_user(self, proof: str | None) -> str | None:
        """The verified virtual_user_id of a subject proof; None without one."""
        if proof is None:
            return None
        try:
            claims = jwt.decode(
                proof.strip(),
                self.public_key,
                algorithms=["RS256"],
                audience=self.settings.proof_audience,
                issuer=self.settings.proof_issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "sub"]},
            )
        except PyJWTError as exc:
            raise Unauthenticated(f"subject proof rejected: {exc}") from exc
        return claims["sub"]
