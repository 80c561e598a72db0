"""A UPN resolved to its directory object id through Microsoft Graph
(`GET /v1.0/users/{upn}?$select=id`, application permission User.Read.All): support acts for a
person by UPN, and the memory-api's pseudonyms and a legacy scope template using `{oid}` are
made from the object id. One directory per Graph address, shared by the sources, so a person
is looked up once; answers are kept `KNOWN_SECONDS` (an account's object id never changes,
but a UPN can pass to another account: a rehire, a reassigned address). Failures are `DirectoryError`s with a message support can act on; each source
turns them into its own errors."""

from __future__ import annotations

import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable
from urllib.parse import quote

import requests
from django.conf import settings

from memory_ui import auth
from memory_ui.transport import pooled_session

logger = logging.getLogger("memory_ui.directory")

OPERATORS = "ask the portal's operators"
KNOWN_SECONDS = 300.0
LASTS = f"try again later, or {OPERATORS} if it lasts."


class DirectoryError(Exception):
    """A lookup that found no object id; `message` is safe to show support staff."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class DirectoryUnavailable(DirectoryError):
    """Graph did not answer (in time), or failed: trying again may help."""


class DirectoryRefused(DirectoryError):
    """Graph refused the portal (no token, 401, 403): its set-up, never the person's."""

    def __init__(self, operator_detail: str, *, status: int | None = None) -> None:
        super().__init__(
            f"Microsoft Graph refused the portal's lookup of this person; {OPERATORS} "
            "(it needs the User.Read.All application permission).",
            status=status,
        )
        self.operator_detail = operator_detail


class UnknownPerson(DirectoryError):
    """No account has that UPN."""


class Directory:
    def __init__(
        self,
        base_url: str,
        token: Callable[[], str],
        *,
        timeout: tuple[float, float] = (3.05, 10.0),
        verify: bool | str = True,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token
        self._timeout = timeout
        self._verify = verify
        self._session = pooled_session(2, self.base_url)
        self._lock = threading.Lock()
        self._known: dict[str, tuple[float, str]] = {}  # upn -> (when looked up, object id)

    def object_id(self, upn: str) -> str:
        key = upn.casefold()
        with self._lock:
            found = self._known.get(key)
            if found is not None and time.monotonic() - found[0] < KNOWN_SECONDS:
                return found[1]
        try:
            response = self._session.get(
                f"{self.base_url}/v1.0/users/{quote(key, safe='@')}",
                params={"$select": "id"},
                headers={"Authorization": f"Bearer {self._token()}"},
                timeout=self._timeout,
                verify=self._verify,
            )
        except (requests.RequestException, OSError) as exc:  # OSError: a CA bundle not found
            raise DirectoryUnavailable(
                f"Microsoft Graph cannot be reached to find this person; {LASTS}"
            ) from exc
        if response.status_code == 404:
            raise UnknownPerson(
                "The directory knows no one by that name; check the UPN.", status=404
            )
        if response.status_code in (401, 403):
            # The portal's set-up, for operators: the status only (never the token or UPN).
            logger.warning("Microsoft Graph refused the portal's lookup: %s", response.status_code)
            raise DirectoryRefused(
                f"Microsoft Graph refused the portal's lookup: {response.status_code}",
                status=response.status_code,
            )
        if response.status_code != 200:
            raise DirectoryUnavailable(
                f"Microsoft Graph failed to answer; {LASTS}", status=response.status_code
            )
        try:
            # An object id is a GUID: anything else (a proxy's page, a null) names nobody, and
            # a pseudonym made from it would be one person's for every such answer.
            oid = str(uuid.UUID(response.json()["id"]))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise DirectoryUnavailable(f"Microsoft Graph failed to answer; {LASTS}") from exc
        now = time.monotonic()
        with self._lock:
            self._known = {k: v for k, v in self._known.items() if now - v[0] < KNOWN_SECONDS}
            self._known[key] = (now, oid)
        return oid


def _graph_token() -> str:
    """The portal's app token for Graph; none is the portal's set-up failure, or Entra not
    answering (requests' errors are OSErrors), which trying again may mend."""
    try:
        return auth.graph_app_token()
    except auth.SignInFailed as exc:
        if isinstance(exc.__cause__, OSError):
            raise DirectoryUnavailable(
                f"The portal could not get its Microsoft Graph token; {LASTS}"
            ) from exc
        raise DirectoryRefused(exc.message) from exc


@functools.cache
def directory_for(base_url: str, verify: bool | str) -> Directory:
    """One directory (one pooled session, one set of answers) per Graph address."""
    return Directory(base_url, _graph_token, verify=verify)


def configured() -> Directory | None:
    """The directory at GRAPH_BASE_URL; None where it is empty (the lookup is off)."""
    if not settings.GRAPH_BASE_URL:
        return None
    return directory_for(settings.GRAPH_BASE_URL, settings.PORTAL_CA_BUNDLE or True)
