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
from memory_ui.sources.protocol import Source

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
    # Both import this package.
    from memory_ui.sources.coreapi.adapter import CAPABILITIES
    from memory_ui.sources.coreapi.store import CoreAPIMemories

    return Source(
        name="coreapi",
        title="CoreAPI",
        description="What agents remember about you, shared with every agent or kept by one.",
        capabilities=CAPABILITIES,
        primary=True,
        items=("entry", "entries"),
        memories=CoreAPIMemories(),
    )
