"""The one transport to the workspace memory-api (seed 001; docs/memory-api.md).

The portal calls it as an exact-listed system service: `token` returns the projected
ServiceAccount token (config.TokenFile), every call names the Workspace UID and the
person's virtual_user_id. Timeouts are cut to what is left of the request's deadline
(`remaining`); reads are retried on transient failures, writes sent once.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from typing import Any

import requests

from memory_ui.sources.memory_api.errors import (
    MemoryApiBadRequest,
    MemoryApiEditionLimit,
    MemoryApiError,
    MemoryApiNotFound,
    MemoryApiOutcomeUnknown,
    MemoryApiSetupError,
    MemoryApiUnavailable,
)
from memory_ui.transport import exchange, pooled_session, timeout_within

API = "/api/v1"
PAGE_SIZE = 200  # the emulator's maximum (docs/memory-api.md, M5)
BATCH = 1000


class MemoryApiClient:
    def __init__(
        self,
        base_url: str,
        workspace: str,
        token: Callable[[], str],
        *,
        connect_timeout: float = 3.05,
        read_timeout: float = 10.0,
        get_retries: int = 2,
        backoff: float = 0.2,
        verify: bool | str = True,
        remaining: Callable[[], float | None] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.workspace = workspace
        self._token = token
        self._timeout = (connect_timeout, read_timeout)
        self._retries = get_retries
        self._backoff = backoff
        self._verify = verify
        self._remaining = remaining
        self._session = pooled_session(10, self.base_url)

    # --- calls ------------------------------------------------------------------------

    def memories(
        self,
        user: str,
        agent: str | None = None,
        cursor: str | None = None,
        *,
        shared: bool = False,
    ) -> tuple[list[dict[str, Any]], str | None]:
        """A page of the person's memories; `shared` adds the workspace's shared ones
        (`include_shared`: agent and, on Enterprise, institutional memory)."""
        params: dict[str, Any] = {"virtual_user_id": user, "limit": PAGE_SIZE}
        if agent is not None:
            params["agent"] = agent
        if cursor:
            params["cursor"] = cursor
        if shared:
            params["include_shared"] = "true"
        body = self._call("GET", "/memories", params)
        return body["memories"], body.get("next_cursor")

    def all_memories(
        self, user: str, agent: str | None = None, *, shared: bool = False
    ) -> list[dict[str, Any]]:
        found, cursor = self.memories(user, agent, shared=shared)
        while cursor:
            more, cursor = self.memories(user, agent, cursor, shared=shared)
            found += more
        return found

    def memory(self, memory_id: str, user: str) -> dict[str, Any]:
        return self._call("GET", f"/memories/{memory_id}", {"virtual_user_id": user})

    def enterprise(self, user: str) -> bool:
        """Whether this memory-api is the Enterprise edition: the cheapest Enterprise route,
        one event of the person's audit log, answers `enterprise_required` on Core (M12)."""
        try:
            self._call("GET", "/audit/memories", {"virtual_user_id": user, "limit": 1})
        except MemoryApiEditionLimit:
            return False
        return True

    def search(self, user: str, query: str) -> list[dict[str, Any]]:
        params = {"virtual_user_id": user, "q": query, "limit": 100}
        return self._call("GET", "/memories/search", params)["memories"]

    def supersede(self, memory_id: str, user: str, content: str) -> dict[str, Any]:
        params = {"virtual_user_id": user}
        return self._call("PATCH", f"/memories/{memory_id}", params, {"content": content})

    def create(
        self,
        user: str,
        agent: str | None,
        content: str,
        memory_type: str | None = None,
        about: str | None = None,
    ) -> dict[str, Any]:
        """A memory of the person's written (M6): a new one, or, where `about` names a live
        memory of the same person and agent, one more active observation of it (M7)."""
        scope = {"virtual_user_id": user} | ({"agent": agent} if agent else {})
        body: dict[str, Any] = {"workspace_id": self.workspace, "scope": scope, "content": content}
        body |= {k: v for k, v in (("type", memory_type), ("about", about)) if v}
        return self._call("POST", "/memories", {}, body)

    def soft_delete(self, memory_id: str, user: str) -> dict[str, Any]:
        return self._call("DELETE", f"/memories/{memory_id}", {"virtual_user_id": user})

    def export(self, user: str, agent: str | None = None) -> dict[str, Any]:
        params = {"virtual_user_id": user} | ({"agent": agent} if agent else {})
        return self._call("GET", "/memories/export", params)

    def erase(self, user: str, agent: str | None = None) -> int:
        """The DSAR route, batch by batch until nothing remains; how many were deleted."""
        params: dict[str, Any] = {"virtual_user_id": user, "limit": BATCH}
        if agent:
            params["agent"] = agent
        deleted = 0
        while True:
            body = self._call("DELETE", "/memories/batch", params)
            deleted += body["deleted"]
            if not body["remaining"] or not body["deleted"]:
                return deleted

    # --- mechanics --------------------------------------------------------------------

    def _call(
        self, method: str, path: str, params: dict[str, Any], body: dict[str, Any] | None = None
    ) -> Any:
        write = method != "GET"
        query = {"workspace": self.workspace, **params}
        url = f"{self.base_url}{API}{path}"

        def send(attempt: int) -> requests.Response:
            left = self._remaining() if self._remaining else None
            timeout = timeout_within(self._timeout, left)
            if timeout is None:
                raise MemoryApiUnavailable("The workspace memory took too long to answer.")
            return self._session.request(
                method,
                url,
                params=query,
                json=body,
                headers={"Authorization": f"Bearer {self._token()}"},
                timeout=timeout,
                verify=self._verify,
            )

        response = exchange(
            send,
            retries=0 if write else self._retries,
            write=write,
            outcome_unknown=lambda exc: MemoryApiOutcomeUnknown(
                "The workspace memory did not answer; the change may have been made. Reload to see."
            ),
            unavailable=lambda exc: MemoryApiUnavailable(
                "The workspace memory cannot be reached, try again later."
            ),
            pause=lambda attempt: time.sleep(self._backoff * 2**attempt * random.random()),
        )
        if response.status_code < 400:
            try:
                return response.json()
            except ValueError as exc:
                raise MemoryApiUnavailable(
                    "The workspace memory answered in a way the portal does not understand.",
                    status=response.status_code,
                ) from exc
        raise _error(method, path, response)


def _error(method: str, path: str, response: requests.Response) -> MemoryApiError:
    status = response.status_code
    try:
        detail = str(json.loads(response.text).get("error", ""))
    except (ValueError, AttributeError):
        detail = ""
    if status == 403 and detail == "enterprise_required":
        return MemoryApiEditionLimit(
            "This workspace runs the Core edition, which does not offer this.", status=status
        )
    if status in (401, 403, 500):
        # Set-up errors, each named for operators, with the service's words (never a token
        # or memory content): none is the person's fault. The error logs it.
        return MemoryApiSetupError(
            f"memory-api refused the portal's call ({_setup_error(status, detail)}): "
            f"{method} {path} -> {status} {detail}",
            status=status,
        )
    if status == 404:
        return MemoryApiNotFound("That memory is no longer there.", status=status)
    if status == 400:
        return MemoryApiBadRequest(
            "The workspace memory refused the request as invalid.", status=status
        )
    return MemoryApiUnavailable(
        "The workspace memory failed to answer, try again later.", status=status
    )


def _setup_error(status: int, detail: str) -> str:
    """Which set-up error a refusal is, for the operators' log (docs/memory-api.md, Errors)."""
    if status == 401:
        return "its ServiceAccount token was not accepted"
    if status == 500:
        return "the service failed; a workspace name where MEMORY_API_WORKSPACE_UID belongs?"
    if detail.startswith("workspace "):
        return "foreign workspace: MEMORY_API_WORKSPACE_UID is not this memory-api's"
    if "subject proof" in detail:
        # The portal names the person without a proof, which only an exact-listed system
        # service may do (seed 001's subject table; the emulator's words, docs/memory-api.md).
        return (
            "the portal's ServiceAccount is trusted by namespace only, not exact-listed: "
            "add its subject (system:serviceaccount:<namespace>:<name>) to this memory-api's "
            "subject allowlist"
        )
    return "the portal's ServiceAccount is not allow-listed for this memory-api"
