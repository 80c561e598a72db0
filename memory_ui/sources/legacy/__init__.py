"""The legacy memory stores (seed 003; docs/legacy-stores.md): typed values and errors
here, the transport in `memory_ui.sources.legacy.client`. Stands alone like memory_ui.sources.coreapi:
it imports nothing else of the portal (the token source and the request deadline are
passed in)."""

from memory_ui.sources.legacy.errors import (
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
from memory_ui.sources.legacy.types import (
    ListPage,
    MemoryEntry,
    MemoryStore,
    parse_store_agents,
    parse_store_owners,
    scope_for,
)
from memory_ui.sources.protocol import Source

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
    "ListPage",
    "MemoryEntry",
    "MemoryStore",
    "parse_store_agents",
    "parse_store_owners",
    "scope_for",
]


# The stores service lists only the stores the portal may read: nothing tells it of others.
OTHER_STORES = (
    "Other legacy memory stores may keep memory about this person: the portal only knows "
    "of those listed here. Ask {contact} which others exist."
)


def source() -> Source | None:
    """The legacy memory stores (seed 003) in the registry, where LEGACY_STORES_BASE_URL
    configures them: being turned down, their files moved into the primary source."""
    from django.conf import settings

    from memory_ui.sources.legacy.adapter import CAPABILITIES, MISSING
    from memory_ui.sources.legacy.backend import stores_backend
    from memory_ui.sources.legacy.operations import SYSTEM_NOTICE, legacy_store_keys
    from memory_ui.sources.legacy.steps import LegacySteps

    if not settings.LEGACY_STORES_BASE_URL:
        return None
    return Source(
        name="legacy",
        title="Legacy memory stores",
        description="Some agents also kept notes about you in an older system.",
        capabilities=CAPABILITIES,
        missing=MISSING,
        turned_down=True,
        moved_from="memory/legacy",
        steps=LegacySteps(),
        items=("file", "files"),
        targets=("store", "stores"),
        system="the older system",
        key_name="the memory store",
        notice=SYSTEM_NOTICE,
        backend=stores_backend,
        target_keys=legacy_store_keys(),
        others_note=OTHER_STORES.format(
            contact=settings.LEGACY_STORES_CONTACT or "the Databricks workspace's administrators"
        ),
    )
