"""Pages and htmx fragments. Every view checks sign-in itself; fragments included."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import requests
from django.contrib.auth import authenticate, login, logout
from django.contrib.auth.decorators import login_required
from django.db import connection
from django.db.utils import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from memory_ui import auth
from memory_ui.access import (
    HtmxHttpRequest,
    agent_by_name,
    caller,
    error_status,
    render_page,
    user_agents,
)
from memory_ui.coreapi import Agent, CoreAPIError, Memory, get_client
from memory_ui.documents import Document, parse_document

logger = logging.getLogger(__name__)


# --- sign-in -------------------------------------------------------------------------


@require_GET
def login_view(request: HttpRequest) -> HttpResponse:
    next_url = auth.safe_next(request, request.GET.get("next"))
    try:
        return redirect(auth.login_start(request, next_url))
    except (ValueError, requests.RequestException) as exc:
        # msal raises these when the authority is misconfigured or can't be reached.
        logger.warning("Could not start sign-in: %s", type(exc).__name__)
        return render(
            request,
            "auth/failed.html",
            {"message": "The sign-in service is unavailable. Please try again shortly."},
            status=503,
        )


@require_GET
@never_cache
def callback_view(request: HttpRequest) -> HttpResponse:
    try:
        sign_in = auth.login_finish(request, request.GET.dict())
    except auth.SignInFailed as failure:
        return render(request, "auth/failed.html", {"message": failure.message}, status=400)
    user = authenticate(request, identity=sign_in.identity)
    login(request, user)  # cycles the session key (or flushes another user's session)
    auth.remember_sign_in(request, sign_in)
    return redirect(auth.safe_next(request, sign_in.next_url))


@require_POST
def logout_view(request: HttpRequest) -> HttpResponse:
    end_session = auth.logout_url(request)
    logout(request)  # flushes the session and with it the token cache
    return redirect(end_session)


@require_GET
def signed_out_view(request: HttpRequest) -> HttpResponse:
    return render(request, "auth/signed_out.html")


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """For load balancers: no sign-in, no configuration or secrets in the answer."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        return JsonResponse({"status": "error", "database": "unavailable"}, status=503)
    return JsonResponse({"status": "ok", "database": "ok"})


# --- dashboard -----------------------------------------------------------------------


@require_GET
@login_required
def dashboard(request: HtmxHttpRequest) -> HttpResponse:
    """First paint needs only the agent list; each card then loads itself."""
    try:
        agents, error = user_agents(request), None
    except CoreAPIError as exc:
        agents, error = [], exc
    return render_page(
        request,
        "memory_ui/dashboard.html",
        "agents",
        {"agents": agents, "agents_error": error},
        status=error_status(error) if error else 200,
    )


@dataclass(frozen=True)
class CardState:
    memory: Memory | None
    document: Document | None
    error: CoreAPIError | None


def _card(request: HttpRequest, scope: str, agent: Agent | None) -> tuple[CardState, int]:
    try:
        memory = get_client().get_memory(caller(request), scope, agent.object_id if agent else None)
    except CoreAPIError as exc:
        return CardState(None, None, exc), error_status(exc)
    return CardState(memory, parse_document(memory.content_markdown), None), 200


@require_GET
@login_required
def user_card(request: HtmxHttpRequest) -> HttpResponse:
    state, status = _card(request, "user", None)
    return render(
        request,
        "memory_ui/card.html#card",
        {"card": state, "agent": None, "card_id": "card-user"},
        status=status,
    )


@require_GET
@login_required
def agent_card(request: HtmxHttpRequest, agent_name: str) -> HttpResponse:
    try:
        agent = agent_by_name(request, agent_name)
    except CoreAPIError as exc:
        state, status = CardState(None, None, exc), error_status(exc)
    else:
        state, status = _card(request, "agent", agent)
    return render(
        request,
        "memory_ui/card.html#card",
        {
            "card": state,
            "agent": agent if state.error is None else None,
            "agent_name": agent_name,
            "card_id": f"card-agent-{agent_name}",
        },
        status=status,
    )


# --- memory pages --------------------------------------------------------------------


def _memory_page(
    request: HtmxHttpRequest, scope: str, agent: Agent | None, title: str
) -> HttpResponse:
    view = "raw" if request.GET.get("view") == "raw" else "rendered"
    try:
        memory = get_client().get_memory(caller(request), scope, agent.object_id if agent else None)
        error = None
    except CoreAPIError as exc:
        memory, error = None, exc
    document = parse_document(memory.content_markdown) if memory else None
    return render_page(
        request,
        "memory_ui/memory.html",
        "content",
        {
            "scope": scope,
            "agent": agent,
            "title": title,
            "memory": memory,
            "document": document,
            "error": error,
            "view": view,
        },
        status=error_status(error) if error else 200,
    )


@require_GET
@login_required
def user_memory(request: HtmxHttpRequest) -> HttpResponse:
    return _memory_page(request, "user", None, "What all agents remember about you")


def _agent_or_error(request: HtmxHttpRequest, agent_name: str) -> Agent | HttpResponse:
    try:
        return agent_by_name(request, agent_name)
    except CoreAPIError as exc:
        return render_page(
            request,
            "memory_ui/memory.html",
            "content",
            {"error": exc, "title": agent_name, "scope": "agent"},
            status=error_status(exc),
        )


@require_GET
@login_required
def agent_memory(request: HtmxHttpRequest, agent_name: str) -> HttpResponse:
    agent = _agent_or_error(request, agent_name)
    if isinstance(agent, HttpResponse):
        return agent
    return _memory_page(request, "agent", agent, f"What {agent.display_name} remembers")


@require_GET
@login_required
def agent_combined(request: HtmxHttpRequest, agent_name: str) -> HttpResponse:
    agent = _agent_or_error(request, agent_name)
    if isinstance(agent, HttpResponse):
        return agent
    return _memory_page(
        request, "combined", agent, f"What {agent.display_name} sees: your memory and its own"
    )
