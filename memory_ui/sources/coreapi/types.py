"""What CoreAPI sends and receives, read into the agent-memory values
(`memory_ui.sources.agent_memory`: Memory, Agent), and the identity a call carries.

Identity. End-user calls carry only the user's delegated token (`CallerAuth(token)`).
Support staff calls carry the portal's app-only token plus `X-USER-IDENTITY`, built from
the target user's identity as the support view resolved it. The portal never builds a
`UserIdentity` from browser input for end users, and never sends `X-USER-IDENTITY` for them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from memory_ui.sources.agent_memory import AGENT_NAME, Agent, Memory

AGENT_PROVIDER_SEGMENT = "/providers/FoundationaLLM.Agent/agents/"


def memory_from_json(data: object) -> Memory:
    """Tolerates missing, null and extra fields, but not a missing `content_markdown`:
    reading such a body as "no memory" could lead a user to overwrite real memory."""
    if not isinstance(data, dict):
        raise ValueError("a MemoryResponse must be a JSON object")
    content = data.get("content_markdown")
    if "content_markdown" not in data or not isinstance(content, str | None):
        raise ValueError("a MemoryResponse must have content_markdown")
    return Memory(
        scope=as_text(data.get("scope")),
        upn=as_text(data.get("upn")),
        user_name=as_optional_text(data.get("user_name")),
        name=as_optional_text(data.get("name")),
        agent_object_id=as_optional_text(data.get("agent_object_id")),
        agent_name=as_optional_text(data.get("agent_name")),
        content_markdown=content or "",
        created_on=_parse_datetime(data.get("created_on")),
        updated_on=_parse_datetime(data.get("updated_on")),
    )


def agent_from_json(element: object) -> Agent | None:
    """None for elements that are not agents or lack a name or object id."""
    if not isinstance(element, dict):
        return None
    resource = element.get("resource")
    if not isinstance(resource, dict):
        return None
    name = as_text(resource.get("name"))
    object_id = as_text(resource.get("object_id"))
    # FoundationaLLM's own rule for agent names; names become URL segments and ids here.
    if not AGENT_NAME.fullmatch(name) or AGENT_PROVIDER_SEGMENT not in object_id:
        return None
    roles = element.get("roles")
    properties = element.get("properties")
    enabled = properties.get("enabled") if isinstance(properties, dict) else None
    return Agent(
        name=name,
        object_id=object_id,
        display_name=as_text(resource.get("display_name")) or name,
        description=as_text(resource.get("description")),
        roles=tuple(r for r in roles if isinstance(r, str)) if isinstance(roles, list) else (),
        # An absent flag means enabled: only an explicit false hides an agent.
        enabled=enabled is not False,
    )


def parse_agents(data: object) -> list[Agent]:
    """The agents listing, sorted by name as the User Portal shows it."""
    if not isinstance(data, list):
        raise ValueError("the agents listing must be a JSON array")
    agents = [agent for agent in map(agent_from_json, data) if agent is not None]
    return sorted(agents, key=lambda agent: (agent.name.casefold(), agent.name))


def as_text(value: object) -> str:
    return value if isinstance(value, str) else ""


def as_optional_text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _parse_datetime(value: object) -> datetime | None:
    """ISO 8601 as .NET and Python write it (Z, +00:00, up to 7 fractional digits).
    A time without an offset is taken as UTC, which is what CoreAPI stores."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def agent_object_id(instance_id: str, agent_name: str) -> str:
    """The FoundationaLLM resource path of an agent."""
    if not instance_id or "/" in instance_id:
        raise ValueError("instance_id must be a non-empty id")
    if not AGENT_NAME.fullmatch(agent_name):
        raise ValueError(f"not an agent name: {agent_name!r}")
    return f"/instances/{instance_id}{AGENT_PROVIDER_SEGMENT}{agent_name}"
