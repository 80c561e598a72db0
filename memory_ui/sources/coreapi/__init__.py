"""FoundationaLLM CoreAPI: typed values and errors here; the transport is
`memory_ui.sources.coreapi.client`, which only `memory_ui.sources.coreapi.operations` calls."""

from memory_ui.identity import CallerAuth, UserIdentity
from memory_ui.sources.coreapi.errors import (
    CoreAPIBadRequest,
    CoreAPIConflict,
    CoreAPIError,
    CoreAPIForbidden,
    CoreAPINotFound,
    CoreAPIOutcomeUnknown,
    CoreAPIPreconditionFailed,
    CoreAPIRateLimited,
    CoreAPIRejected,
    CoreAPIRequestTooLarge,
    CoreAPIUnauthorized,
    CoreAPIUnavailable,
    CoreAPIUnexpectedResponse,
    parse_error_response,
)
from memory_ui.sources.coreapi.types import (
    AGENT_NAME,
    Agent,
    Memory,
    agent_object_id,
    parse_agents,
)
from memory_ui.sources.protocol import Capability, Source

__all__ = [
    "AGENT_NAME",
    "Agent",
    "CallerAuth",
    "CoreAPIBadRequest",
    "CoreAPIConflict",
    "CoreAPIError",
    "CoreAPIForbidden",
    "CoreAPINotFound",
    "CoreAPIOutcomeUnknown",
    "CoreAPIPreconditionFailed",
    "CoreAPIRateLimited",
    "CoreAPIRejected",
    "CoreAPIRequestTooLarge",
    "CoreAPIUnauthorized",
    "CoreAPIUnavailable",
    "CoreAPIUnexpectedResponse",
    "Memory",
    "UserIdentity",
    "agent_object_id",
    "parse_agents",
    "parse_error_response",
]


def source() -> Source:
    """CoreAPI (seed 000) in the registry: the primary source, whose memories are the
    portal's own memory pages and whose documents make the restorable archive."""
    return Source(
        name="coreapi",
        title="CoreAPI",
        description="What agents remember about you, shared with every agent or kept by one.",
        capabilities=(
            Capability.SEARCH
            | Capability.APPEND
            | Capability.EDIT_ITEM
            | Capability.DELETE_ITEM
            | Capability.RESTORE_ITEM
            | Capability.CLEAR_TARGET
            | Capability.ERASE_SUBJECT
            | Capability.EXPORT
            | Capability.IMPORT
            | Capability.CONDITIONAL_WRITE
        ),
        primary=True,
        items=("entry", "entries"),
    )
