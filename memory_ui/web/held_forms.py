"""A form posted after the session itself ended keeps what was typed.

When only the sign-in token expired, the session holds the form (`stores.pending_form`).
When the session is gone (its cookie expired, or it was cleared on the server), there is
nowhere to keep it that belongs to the person, so:

- forms people type into carry a signed owner hint (`{% form_owner %}`: the oid they were
  rendered for, signed with the portal's secret key);
- a post that is sent to sign in for want of a session, and carries a valid hint, is held
  in the cache for HELD_SECONDS under a random key, which travels in a short-lived,
  HttpOnly cookie of that browser only;
- the first signed-in request of that browser takes it: it becomes the session's pending
  form (shown on the page the form came from, with "Send again") only when the person who
  signed in is the one the form was rendered for. Either way it is dropped then.

What was typed is never logged: it goes only to the cache, under a key only that browser
has.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.core import signing
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, resolve_url

from memory_ui.auth import current_identity
from memory_ui.web.htmx import _current_page, _login_url
from memory_ui.web.stores.pending_form import NOT_KEPT, PendingForm, pending_form_keep

HELD_SECONDS = 10 * 60
HELD_COOKIE = "portal_held_form"
OWNER_FIELD = "form_owner"
_SALT = "memory_ui.web.held_forms.owner"
_KEY = "held-form:"


def owner_hint(oid: str) -> str:
    """The hidden field's value: whom a form was rendered for."""
    return signing.dumps(oid, salt=_SALT)


def _hinted_owner(request: HttpRequest) -> str | None:
    try:
        # A form may have been open as long as a session lasts.
        owner = signing.loads(
            request.POST.get(OWNER_FIELD, ""), salt=_SALT, max_age=settings.SESSION_COOKIE_AGE
        )
    except signing.BadSignature:
        return None
    return owner if isinstance(owner, str) else None


def _sent_to_sign_in(response: HttpResponse) -> bool:
    """A redirect to sign in, or its htmx form (`htmx.htmx_redirects`)."""
    location = response.get("Location", "") if 300 <= response.status_code < 400 else ""
    location = location or response.get("HX-Redirect", "")
    return urlsplit(location).path == resolve_url(settings.LOGIN_URL)


def _hold(request: HttpRequest, response: HttpResponse, owner: str) -> HttpResponse:
    key = secrets.token_urlsafe(24)
    fields = [
        (name, value)
        for name, values in request.POST.lists()
        if name not in NOT_KEPT
        for value in values
    ]
    held: dict[str, Any] = {
        "owner": owner,
        "action": request.path,
        "origin": _current_page(request),
        "fields": fields,
        "had_files": bool(request.FILES),
    }
    cache.set(_KEY + key, held, HELD_SECONDS)
    response.set_cookie(
        HELD_COOKIE,
        key,
        max_age=HELD_SECONDS,
        httponly=True,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,
    )
    return response


def _take(request: HttpRequest, key: str, oid: str) -> None:
    held = cache.get(_KEY + key)
    cache.delete(_KEY + key)
    if not isinstance(held, dict) or held.get("owner") != oid:
        return  # someone else signed in on this browser: it is not theirs to see
    pending = PendingForm(
        held["action"], held["origin"], [tuple(f) for f in held["fields"]], held["had_files"]
    )
    if pending_form_keep(request.session, pending):
        messages.warning(request, "Your session had ended. Nothing was sent; it is kept below.")


def held_forms(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable:
    """Hold a sessionless post's fields through sign-in; give them back to their owner.
    Sits outside `htmx_redirects`, so it sees an htmx post's HX-Redirect to sign in too."""

    def middleware(request: HttpRequest) -> HttpResponse:
        key = request.COOKIES.get(HELD_COOKIE, "")
        if not key and request.method != "POST":
            return get_response(request)  # nothing held, nothing to hold: most pages
        identity = current_identity(request) if hasattr(request, "session") else None
        if key and identity is not None:
            _take(request, key, identity.oid)
            response = get_response(request)
            response.delete_cookie(HELD_COOKIE, samesite="Lax")
            return response
        response = get_response(request)
        if request.method == "POST" and identity is None and _sent_to_sign_in(response):
            owner = _hinted_owner(request)
            if owner is not None:
                if "HX-Redirect" not in response:
                    # Back to the page the form came from after sign-in, not its POST URL
                    # (htmx_redirects' HX-Redirect goes there already).
                    response = redirect(_login_url(request))
                return _hold(request, response, owner)
        return response

    return middleware
