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
