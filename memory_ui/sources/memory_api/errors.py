"""The memory-api's failures (seed 001; docs/memory-api.md, Errors), each a
`protocol.SourceError` with a message people can act on. The 403s stay apart: a foreign
workspace, a missing allow-listing and an account trusted by namespace only are the portal's
set-up errors (logged for operators, never the person's fault); `enterprise_required` is an
edition's limit."""

from __future__ import annotations

import logging

from memory_ui.sources.protocol import SourceError

logger = logging.getLogger("memory_ui.sources.memory_api")

SETUP = (
    "The portal is not set up to reach this workspace's memory; its operators have been "
    "told. Nothing about you is wrong."
)


class MemoryApiError(SourceError):
    """Any failure of the workspace memory-api."""


class MemoryApiSetupError(MemoryApiError):
    """A foreign workspace (403), the portal not allow-listed (403) or trusted by namespace
    only (403), its token refused (401) or unreadable, Graph refusing its lookup, or a
    workspace name where the UID belongs (500): configuration, not the person."""

    portal_status = 502

    def __init__(
        self,
        operator_detail: str,
        *,
        status: int | None = None,
        logged: bool = False,
        message: str = SETUP,  # another where the reader is not the person (support)
    ) -> None:
        super().__init__(message, status=status)
        self.operator_detail = operator_detail
        # Logged where it is made, so every raise keeps SETUP's promise that the operators
        # have been told (`logged`: already, where it was found, as the shared Graph
        # directory does). The detail names the refusal, never a token or memory content.
        if not logged:
            logger.warning("memory-api set-up error: %s", operator_detail)


class MemoryApiEditionLimit(MemoryApiError):
    """`enterprise_required`: this deployment is the Core edition."""

    portal_status = 409


class MemoryApiOthersHeld(MemoryApiError):
    """Clearing the memories without an agent while other agents' are held: the DSAR route
    cannot name "no agent", so it would erase theirs too (M30)."""

    portal_status = 409
    retry_helps = False


class MemoryApiNotFound(MemoryApiError):
    portal_status = 404


class MemoryApiBadRequest(MemoryApiError):
    portal_status = 400


class MemoryApiUnavailable(MemoryApiError):
    portal_status = 503


class MemoryApiOutcomeUnknown(MemoryApiError):
    """A write sent without an answer: it may have been applied."""

    portal_status = 504
    outcome_unknown = True


class SubjectUnavailable(MemoryApiError):
    """The rule for virtual_user_id needs the person's object id and the request has none:
    support acting for a UPN where Microsoft Graph is not configured (GRAPH_BASE_URL), or
    one the directory does not know."""

    portal_status = 409
