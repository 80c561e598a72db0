"""Agents' private notes (seed 004): each agent keeps notes for itself, read by a stable id
and private to the agent's identity. They name no person, so the portal cannot find, show
or erase what they hold about someone: registered with no capability, only that reason, so
a deletion request names them as "not possible" instead of leaving them out."""

from __future__ import annotations

from memory_ui.sources.protocol import Source

UNREACHABLE = (
    "Each agent's private notes belong to that agent alone and are not kept per person, so "
    "the portal can neither find nor erase what they say about someone."
)


def source() -> Source:
    return Source(
        name="agent_notes",
        title="Agents' private notes",
        description="Working notes each agent keeps for itself, not per person.",
        unreachable=UNREACHABLE,
        owner="the owner of each agent",
    )
