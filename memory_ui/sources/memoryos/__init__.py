"""MemoryOS (seed 002; docs/memoryos.md): a hosted memory service that agents call once per
turn. It can show what an agent is told about a person for one question, and take a
person's correction; it cannot list, export, edit or delete what it keeps. Typed values in
`types`, errors in `errors`, the transport in `client`, the `MemoryBackend` in `adapter`.
"""

from __future__ import annotations

import json

from memory_ui.sources.protocol import Source


def source() -> Source | None:
    """MemoryOS in the registry, where MEMORYOS_BASE_URL configures it: searchable (one
    retrieval per configured agent), never erasable or exportable through the portal."""
    from django.conf import settings

    from memory_ui import budget
    from memory_ui.identity import Actor
    from memory_ui.sources.generic import BackendSteps
    from memory_ui.sources.memoryos.adapter import (
        CAPABILITIES,
        NO_LIST_TO_SUPPORT,
        SOURCE,
        TITLE,
        MemoryOsBackend,
        missing,
    )
    from memory_ui.sources.memoryos.client import MemoryOsClient

    if not settings.MEMORYOS_BASE_URL:
        return None
    client = MemoryOsClient(
        settings.MEMORYOS_BASE_URL,
        lambda: settings.MEMORYOS_API_KEY,  # read per call: a rotated secret applies at once
        connect_timeout=float(settings.MEMORYOS_CONNECT_TIMEOUT),
        read_timeout=float(settings.MEMORYOS_READ_TIMEOUT),
        retries=int(settings.MEMORYOS_RETRIES),
        verify=settings.MEMORYOS_CA_BUNDLE or True,
        remaining=budget.remaining,
    )
    agents = json.loads(settings.MEMORYOS_AGENTS or "{}")
    template = settings.MEMORYOS_USER_ID_TEMPLATE

    def make(actor: Actor) -> MemoryOsBackend:
        return MemoryOsBackend(client, agents, template, settings.MEMORYOS_CONTACT)

    return Source(
        name=SOURCE,
        title=TITLE,
        description="What agents are told about you, question by question.",
        capabilities=CAPABILITIES,
        missing=missing(settings.MEMORYOS_CONTACT),
        steps=BackendSteps(make),
        backend=make,
        items=("memory", "memories"),
        owner=settings.MEMORYOS_CONTACT or "MemoryOS's operator",
        cannot_list_to_support=NO_LIST_TO_SUPPORT,
    )
