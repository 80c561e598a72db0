"""What every page that shows another memory system's targets shares (search, Activity,
the source pages): a target named for people, and links to a target's and an item's page,
the source's own where it has pages of its own (`Source.target_page`, `Source.item_page`),
else the generic ones (`views.sources`)."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import quote

from django.http import HttpRequest
from django.urls import reverse

from memory_ui import auth
from memory_ui.sources.protocol import Source, SourceError, SourceTarget
from memory_ui.web.access import user_agents


def agent_titles(request: HttpRequest) -> dict[str, str]:
    """Display names of the agents this person can read (their own list, cached per user),
    which name the targets kept for them; none when that list cannot be had now. Not the
    portal-wide cache of display names: a target is listed to everyone, also to people who
    cannot read its agent, and those see the source's own name for it instead."""
    try:
        return {agent.name: agent.display_name for agent in user_agents(request)}
    except (SourceError, auth.SignInRequired):
        return {}


def named(target: SourceTarget, titles: dict[str, str]) -> SourceTarget:
    """`target`, named by its agent's display name where `titles` has it."""
    title = titles.get(target.agent or "")
    return replace(target, title=title) if title else target


def source_target_url(source: Source, key: str) -> str:
    """The page of the source's target `key`."""
    if source.target_page:
        return reverse(source.target_page, args=[key])
    return f"{reverse('source_target', args=[source.name])}?target={quote(key, safe='/')}"


def source_item_url(source: Source, target: str, item: str) -> str:
    """The page of one item, where the source has item pages; else its target's page."""
    if source.item_page:
        return f"{reverse(source.item_page, args=[target])}?path={quote(item, safe='/')}"
    return source_target_url(source, target)
