"""A UPN resolved to its directory object id through Microsoft Graph
(`GET /v1.0/users/{upn}?$select=id`, application permission User.Read.All): support acts for a
person by UPN, and the memory-api's pseudonyms are made from the object id. Answers are kept
for the process's life (an object id never changes for a UPN's account)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from urllib.parse import quote

import requests

from memory_ui.sources.memory_api.errors import (
    MemoryApiSetupError,
    MemoryApiUnavailable,
    SubjectUnavailable,
)
from memory_ui.transport import pooled_session


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
        self._known: dict[str, str] = {}

    def object_id(self, upn: str) -> str:
        key = upn.casefold()
        with self._lock:
            if key in self._known:
                return self._known[key]
        try:
            response = self._session.get(
                f"{self.base_url}/v1.0/users/{quote(key, safe='@')}",
                params={"$select": "id"},
                headers={"Authorization": f"Bearer {self._token()}"},
                timeout=self._timeout,
                verify=self._verify,
            )
        except requests.RequestException as exc:
            raise MemoryApiUnavailable(
                "The directory cannot be reached to find this person, try again later."
            ) from exc
        if response.status_code == 404:
            raise SubjectUnavailable("The directory knows no one by that name.", status=404)
        if response.status_code in (401, 403):
            raise MemoryApiSetupError(
                f"Microsoft Graph refused the portal's lookup: {response.status_code}",
                status=response.status_code,
            )
        if response.status_code != 200:
            raise MemoryApiUnavailable(
                "The directory failed to answer, try again later.", status=response.status_code
            )
        oid = str(response.json()["id"])
        with self._lock:
            self._known[key] = oid
        return oid
