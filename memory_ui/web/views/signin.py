"""Signing in and out with Entra ID (msal). The health probes are portal/probes.py."""

from __future__ import annotations

import logging

import requests
from django.contrib.auth import authenticate, login, logout
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from memory_ui import auth

logger = logging.getLogger(__name__)


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
