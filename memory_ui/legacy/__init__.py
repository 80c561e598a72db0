"""The legacy memory stores (seed 003; docs/legacy-stores.md): typed values and errors
here, the transport in `memory_ui.legacy.client`. Stands alone like memory_ui.coreapi:
it imports nothing else of the portal (the token source and the request deadline are
passed in)."""

from memory_ui.legacy.errors import (
    LegacyBadRequest,
    LegacyConflict,
    LegacyForbidden,
    LegacyNotFound,
    LegacyOutcomeUnknown,
    LegacyRateLimited,
    LegacyStoreError,
    LegacyUnauthorized,
    LegacyUnavailable,
    LegacyUnexpectedResponse,
)
from memory_ui.legacy.types import (
    MemoryEntry,
    MemoryStore,
    Page,
    parse_store_agents,
    parse_store_owners,
    scope_for,
)

__all__ = [
    "LegacyBadRequest",
    "LegacyConflict",
    "LegacyForbidden",
    "LegacyNotFound",
    "LegacyOutcomeUnknown",
    "LegacyRateLimited",
    "LegacyStoreError",
    "LegacyUnauthorized",
    "LegacyUnavailable",
    "LegacyUnexpectedResponse",
    "MemoryEntry",
    "MemoryStore",
    "Page",
    "parse_store_agents",
    "parse_store_owners",
    "scope_for",
]
