"""What every memory view needs: the caller's CoreAPI credentials, the user's own agents,
and consistent rendering of pages, fragments and CoreAPI failures."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django_htmx.middleware import HtmxDetails

from memory_ui import auth
from memory_ui.coreapi import Agent, CallerAuth, CoreAPIError, get_client
from memory_ui.operations import Actor


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def caller(request: HttpRequest) -> CallerAuth:
    """The signed-in user's own delegated token; never an X-USER-IDENTITY."""
    return CallerAuth(access_token=auth.coreapi_token(request))


def user_actor(request: HttpRequest) -> Actor:
    """The signed-in user acting on their own memory."""
    return Actor(request, caller(request))


def _agents_cache_key(request: HttpRequest) -> str:
    identity = auth.current_identity(request)
    if identity is None:
        raise auth.SignInRequired
    return f"agents:{identity.oid}"


def user_agents(request: HttpRequest) -> list[Agent]:
    """The agents this user may read, from CoreAPI; reused briefly so cards don't re-list."""
    key = _agents_cache_key(request)
    agents: list[Agent] | None = cache.get(key)
    if agents is None:
        agents = get_client().list_agents(caller(request))
        cache.set(key, agents, settings.PORTAL_AGENTS_CACHE_SECONDS)
    return agents


def agent_by_name(request: HttpRequest, agent_name: str) -> Agent:
    """Agent object ids come only from the user's own agent list; unknown names are 404."""
    for agent in user_agents(request):
        if agent.name == agent_name:
            return agent
    raise Http404("No agent of yours has that name.")


def scope_target(request: HttpRequest, scope: str, agent_name: str | None) -> Agent | None:
    """Validate a (scope, agent) pair taken from a URL or form: 404 for anything else."""
    if scope == "user" and not agent_name:
        return None
    if scope == "agent" and agent_name:
        return agent_by_name(request, agent_name)
    raise Http404("Unknown memory scope.")


def render_page(
    request: HtmxHttpRequest,
    template: str,
    fragment: str,
    context: dict[str, Any],
    status: int = 200,
) -> HttpResponse:
    """One URL, a page or (for htmx) its fragment; caches must keep them apart."""
    name = f"{template}#{fragment}" if request.htmx else template
    response = render(request, name, context, status=status)
    patch_vary_headers(response, ["HX-Request"])
    return response


def error_status(error: CoreAPIError) -> int:
    """The portal's own status for a failed CoreAPI call."""
    if error.status in (401, 403, 404, 409, 429):
        return error.status
    if error.status == 400:
        return 400
    return 503 if error.status is None or error.status >= 500 else 502
