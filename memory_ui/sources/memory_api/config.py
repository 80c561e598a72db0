"""The memory-api adapter's configuration, checked when the registry is built (start-up):
the Workspace UID (a UUID; a workspace name is refused, since the memory-api matches rows
by the UID and answers 500 to a name), the rule that makes a virtual_user_id from the
verified identity, and the projected ServiceAccount token, re-read when it rotates."""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from memory_ui.sources.memory_api.errors import MemoryApiSetupError, SubjectUnavailable
from memory_ui.sources.protocol import Subject

HMAC_RULE = "hmac-sha256"


def workspace_uid(value: str) -> str:
    """The Workspace UID as configured, refused at start-up unless it is a UUID."""
    try:
        return str(uuid.UUID(value))
    except ValueError as exc:
        raise ImproperlyConfigured(
            f"MEMORY_API_WORKSPACE_UID must be the Workspace's UID (a UUID), not {value!r}: "
            "the memory-api accepts a workspace name in its tenant check but keys rows by "
            "the UID, so every call with a name would fail with a 500."
        ) from exc


@dataclass(frozen=True)
class SubjectRule:
    """virtual_user_id from the verified identity: a template over {oid} and {upn}, or the
    keyed pseudonym hex(HMAC-SHA256(key, oid))."""

    template: str
    key: bytes = b""

    @classmethod
    def configured(cls, rule: str, key_file: str) -> SubjectRule:
        if rule == HMAC_RULE:
            if not key_file:
                raise ImproperlyConfigured(
                    f"MEMORY_API_SUBJECT_RULE={HMAC_RULE} needs MEMORY_API_PSEUDONYM_KEY_FILE."
                )
            try:
                key = Path(key_file).read_bytes().strip()
            except OSError as exc:
                raise ImproperlyConfigured(
                    f"MEMORY_API_PSEUDONYM_KEY_FILE cannot be read: {exc.strerror}"
                ) from exc
            if not key:
                raise ImproperlyConfigured("MEMORY_API_PSEUDONYM_KEY_FILE is empty.")
            return cls(HMAC_RULE, key)
        try:
            rule.format(oid="o", upn="u")
        except (KeyError, IndexError, ValueError) as exc:
            raise ImproperlyConfigured(
                "MEMORY_API_SUBJECT_RULE is hmac-sha256 or a template over {oid} and {upn}."
            ) from exc
        if "{oid}" not in rule and "{upn}" not in rule:
            raise ImproperlyConfigured(
                "MEMORY_API_SUBJECT_RULE names nobody: use {oid}, {upn} or hmac-sha256."
            )
        return cls(rule)

    @property
    def needs_oid(self) -> bool:
        return self.template == HMAC_RULE or "{oid}" in self.template

    def virtual_user_id(self, subject: Subject) -> str:
        if self.needs_oid and not subject.oid:
            raise SubjectUnavailable(
                "This person's workspace memory is keyed by their directory object id, which "
                "the portal does not know when acting for them by name.",
                status=None,
            )
        if self.template == HMAC_RULE:
            return hmac.new(self.key, subject.oid.casefold().encode(), hashlib.sha256).hexdigest()
        return self.template.format(oid=subject.oid, upn=subject.upn.casefold())


class TokenFile:
    """The projected ServiceAccount token, read again whenever the kubelet replaces the
    file (its modification time or inode changes)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seen: tuple[int, int] | None = None
        self._token = ""

    def __call__(self) -> str:
        try:
            stat = os.stat(self.path)
            with self._lock:
                if self._seen != (stat.st_ino, stat.st_mtime_ns):
                    self._token = Path(self.path).read_text().strip()
                    self._seen = (stat.st_ino, stat.st_mtime_ns)
                return self._token
        except OSError as exc:
            raise MemoryApiSetupError(
                f"the ServiceAccount token file {self.path} cannot be read: {exc.strerror}"
            ) from exc
