"""htmx-aware middleware: sign-in redirects and Django messages for fragments."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, resolve_url
from django.template.loader import render_to_string
from django_htmx.http import HttpResponseClientRedirect

from memory_ui.auth import SignInRequired

Handler = Callable[[HttpRequest], HttpResponse]


def _current_page(request: HttpRequest) -> str:
    """For htmx requests the page the user is on (not the fragment URL) is where to return."""
    current = request.headers.get("HX-Current-URL", "")
    parts = urlsplit(current)
    if current and parts.netloc == request.get_host():
        return parts.path + (f"?{parts.query}" if parts.query else "")
    return request.get_full_path()


def _login_url(request: HttpRequest) -> str:
    return f"{resolve_url(settings.LOGIN_URL)}?{urlencode({'next': _current_page(request)})}"


def htmx_redirects(get_response: Handler) -> Handler:
    """A redirect answering an htmx request becomes HX-Redirect, so a sign-in page is never
    swapped into a fragment; an expired sign-in anywhere sends the user to sign in again."""

    login_path = resolve_url(settings.LOGIN_URL)

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if getattr(request, "htmx", False) and 300 <= response.status_code < 400:
            location = response["Location"]
            if urlsplit(location).path == login_path:
                location = _login_url(request)
            return HttpResponseClientRedirect(location)
        return response

    def process_exception(request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, SignInRequired):
            return None
        if getattr(request, "htmx", False):
            return HttpResponseClientRedirect(_login_url(request))
        return redirect(_login_url(request))

    middleware.process_exception = process_exception  # type: ignore[attr-defined]
    return middleware


def htmx_messages(get_response: Handler) -> Handler:
    """Deliver pending messages to htmx responses as an out-of-band toast swap."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        # Redirects keep their messages for the page they lead to.
        if (
            not getattr(request, "htmx", False)
            or 300 <= response.status_code < 400
            or "HX-Redirect" in response
            or response.streaming
            or not response.get("Content-Type", "").startswith("text/html")
        ):
            return response
        pending = list(messages.get_messages(request))
        if pending:
            response.write(render_to_string("base.html#toasts", {"messages": pending, "oob": True}))
        return response

    return middleware
