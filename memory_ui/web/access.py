"""From a request to who acts and on which memory: the signed-in user's identity and
credentials as an `Actor`, their own agents, and the 404s for anything else.

Agent object ids come only from the user's own agent list (CoreAPI's answer); a name in a
URL or form that is not in that list is a 404.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import BadRequest
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from memory_ui import auth
from memory_ui.identity import Actor, CallerAuth, Identity, UserIdentity
from memory_ui.sources.agent_memory import Agent, Target
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_store
from memory_ui.web.errors import AgentsUnlisted, UnlistedHandler, answers_unlisted
from memory_ui.web.forms import TargetForm

View = Callable[..., HttpResponse]


@dataclass
class _AtTheDoor:
    """Who acts, worked out once per request and kept on it: every later look-up in the
    same request (a view, its helpers, the agent list) gets the same values, and the
    sign-in token cache is loaded from the session once."""

    identity: Identity | None = None
    actor: Actor | None = None


def _door(request: HttpRequest) -> _AtTheDoor:
    door = getattr(request, "portal_door", None)
    if door is None:
        door = _AtTheDoor()
        request.portal_door = door
    return door


def signed_in(request: HttpRequest) -> Identity:
    door = _door(request)
    if door.identity is None:
        door.identity = auth.current_identity(request)
    if door.identity is None:
        raise auth.SignInRequired
    return door.identity


def user_actor(request: HttpRequest) -> Actor:
    """The signed-in user acting on their own memory with their own delegated token;
    never an X-USER-IDENTITY. Once per request (`_AtTheDoor`)."""
    door = _door(request)
    if door.actor is None:
        token = auth.coreapi_token(request)
        door.actor = Actor(signed_in(request), CallerAuth(access_token=token))
    return door.actor


def support_actor(request: HttpRequest, upn: str, reason: str = "", ticket: str = "") -> Actor:
    """The portal's service principal acting for `upn` on a support request. The portal
    only knows the UPN of the looked-up user, so that is what the UnifiedUserIdentity
    carries. Raises `auth.SignInFailed` when the portal gets no app token."""
    identity = UserIdentity(name=upn, user_name=upn, user_id="", upn=upn)
    return Actor(
        signed_in(request),
        CallerAuth(access_token=auth.app_token(), user_identity=identity),
        subject_upn=upn,
        reason=reason,
        ticket=ticket,
    )


def listed_agents(request: HttpRequest) -> list[Agent] | None:
    """The user's agents if they were listed lately (`user_agents`), without asking CoreAPI."""
    return cache.get(f"agents:{signed_in(request).oid}")


def user_agents(request: HttpRequest) -> list[Agent]:
    """The agents this user may read, from CoreAPI; reused briefly so cards don't re-list."""
    agents = listed_agents(request)
    if agents is None:
        agents = memory_store().agents(user_actor(request))
        cache.set(f"agents:{signed_in(request).oid}", agents, settings.PORTAL_AGENTS_CACHE_SECONDS)
    return agents


def agent_by_name(request: HttpRequest, agent_name: str) -> Agent:
    """One of the user's own agents; any other name is a 404."""
    for agent in user_agents(request):
        if agent.name == agent_name:
            return agent
    raise Http404("No agent of yours has that name.")


def target_for(request: HttpRequest, scope: str, agent_name: str | None) -> Target:
    """A (scope, agent) pair from a URL or form as a Target of this user: 404 otherwise."""
    if scope == "user" and not agent_name:
        return Target("user")
    if scope in ("agent", "combined") and agent_name:
        return Target(scope, agent_by_name(request, agent_name))
    raise Http404("Unknown memory scope.")


def form_target(request: HttpRequest, form: TargetForm) -> Target:
    """The memory the form names; `AgentsUnlisted` when the user's agents could not be
    listed (the view's `errors.answers_unlisted` answers it). A forged scope is a 400; an
    agent that isn't the user's a 404."""
    if not form.names_a_memory:
        raise BadRequest("Unknown memory scope.")
    data = form.cleaned_data
    try:
        return target_for(request, data["scope"], data["agent"] or None)
    except SourceError as exc:
        raise AgentsUnlisted(form, exc) from exc


def on_memory(
    unlisted: UnlistedHandler, methods: Sequence[str] = ("GET", "POST")
) -> Callable[[View], View]:
    """The door of an end-user view on one memory: only `methods`, signed in, and the
    memory its request names (`scope`/`agent`, from the form posted or else the query, by
    `form_target`) and the signed-in user's Actor worked out once and handed to the view
    as `view(request, actor, target, ...)`. `unlisted` answers when the user's agents could
    not be listed (`errors.answers_unlisted`), wherever in the view that comes up."""

    def decorator(view: View) -> View:
        @require_http_methods(list(methods))
        @login_required
        @answers_unlisted(unlisted)
        @wraps(view)
        def door(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            named = TargetForm(request.POST if request.method == "POST" else request.GET)
            target = form_target(request, named)
            return view(request, user_actor(request), target, *args, **kwargs)

        return door

    return decorator


def as_named(form: TargetForm) -> Target:
    """When the user's agents can't be listed: the memory as the form named it, only to
    show the form again as it was posted (its agent has no object id: no CoreAPI call)."""
    name = form.cleaned_data["agent"]
    if form.cleaned_data["scope"] == "agent" and name:
        return Target("agent", Agent(name=name, object_id="", display_name=name))
    return Target("user")


def support_required(view: View) -> View:
    """Signed in and holding the support app role (from the id_token), or 403. Every
    support view, fragments included, is wrapped in this."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        identity = auth.current_identity(request)
        if identity is None or not identity.is_support:
            return render(request, "403.html", status=403)
        return view(request, *args, **kwargs)

    return wrapper
