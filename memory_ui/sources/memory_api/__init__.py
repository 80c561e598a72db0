"""The workspace memory-api (seed 001; docs/memory-api.md) as a memory source: the adapter
(`adapter.py`) over one client (`client.py`), configured from settings (`config.py`), the
generic source pages, and its own erasure steps (`steps.py`). Off unless
MEMORY_API_BASE_URL is set (the default PORTAL_MEMORY_SOURCES names it)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from memory_ui.sources.protocol import Source

if TYPE_CHECKING:
    from memory_ui.identity import Actor
    from memory_ui.sources.memory_api.adapter import MemoryApiBackend

OTHERS = (
    "Other workspaces' memory services may keep memory about this person: the portal "
    "reaches only the one it is configured for."
)


@cache
def backend_for(
    base_url: str, workspace: str, token_file: str, rule: str, key_file: str, graph_url: str
) -> MemoryApiBackend:
    """One backend (one pooled client) per configuration, shared by every request."""
    from django.conf import settings

    from memory_ui import budget
    from memory_ui.directory import directory_for
    from memory_ui.sources.memory_api.adapter import MemoryApiBackend
    from memory_ui.sources.memory_api.client import MemoryApiClient
    from memory_ui.sources.memory_api.config import SubjectRule, TokenFile

    client = MemoryApiClient(
        base_url,
        workspace,
        TokenFile(token_file),
        connect_timeout=settings.MEMORY_API_CONNECT_TIMEOUT,
        read_timeout=settings.MEMORY_API_READ_TIMEOUT,
        get_retries=settings.MEMORY_API_GET_RETRIES,
        verify=settings.PORTAL_CA_BUNDLE or True,
        remaining=budget.remaining,
    )
    directory = directory_for(graph_url, settings.PORTAL_CA_BUNDLE or True) if graph_url else None
    return MemoryApiBackend(client, SubjectRule.configured(rule, key_file), directory)


def source() -> Source | None:
    from django.conf import settings

    from memory_ui.sources.memory_api.adapter import (
        CAPABILITIES,
        DELETE_NOTE,
        EDIT_NOTE,
        MISSING,
        NAME,
        RESTORE_NOTE,
        TITLE,
    )
    from memory_ui.sources.memory_api.config import SubjectRule, workspace_uid
    from memory_ui.sources.memory_api.steps import MemoryApiSteps

    if not settings.MEMORY_API_BASE_URL:
        return None
    # Checked now, at start-up: a name or a broken rule stops the portal with a reason.
    workspace = workspace_uid(settings.MEMORY_API_WORKSPACE_UID)
    SubjectRule.configured(settings.MEMORY_API_SUBJECT_RULE, settings.MEMORY_API_PSEUDONYM_KEY_FILE)
    args = (
        settings.MEMORY_API_BASE_URL,
        workspace,
        settings.MEMORY_API_TOKEN_FILE,
        settings.MEMORY_API_SUBJECT_RULE,
        settings.MEMORY_API_PSEUDONYM_KEY_FILE,
        settings.GRAPH_BASE_URL,
    )

    def backend(actor: Actor) -> MemoryApiBackend:
        return backend_for(*args)

    return Source(
        name=NAME,
        title=TITLE,
        description="What agents in the workspace remember about you across conversations.",
        capabilities=CAPABILITIES,
        missing=MISSING,
        steps=MemoryApiSteps(backend),
        backend=backend,
        items=("memory", "memories"),
        others_note=OTHERS,
        edit_note=EDIT_NOTE,
        delete_note=DELETE_NOTE,
        restore_note=RESTORE_NOTE,
    )
