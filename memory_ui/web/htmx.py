"""htmx response policy, in one place: pages or fragments, redirects, swaps, client events,
and delivering sign-in redirects and Django messages to htmx requests.

This is the only module that sets HX-* response headers or `Vary`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render, resolve_url
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django_htmx.http import (
    HttpResponseClientRedirect,
    reselect,
    reswap,
    retarget,
    trigger_client_event,
)
from django_htmx.middleware import HtmxDetails

from memory_ui.auth import SignInRequired
from memory_ui.web.stores.pending_form import NOT_KEPT, PendingForm, pending_form_keep

Handler = Callable[[HttpRequest], HttpResponse]


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def render_page(
    request: HtmxHttpRequest,
    template: str,
    fragment: str,
    context: dict[str, Any],
    status: int = 200,
) -> HttpResponse:
    """One URL, a page or (for htmx) its fragment; caches must keep them apart."""
    name = f"{template}#{fragment}" if request.htmx else template
    return render_fragment(request, name, context, status)


def render_fragment(
    request: HttpRequest, name: str, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    """A fragment answering an htmx request, for a URL that may also serve a page."""
    response = render(request, name, context, status=status)
    patch_vary_headers(response, ["HX-Request"])
    return response


def redirect_to(request: HtmxHttpRequest, url: str) -> HttpResponse:
    """After a change: for htmx, HX-Redirect right away (on a 302 the messages middleware
    would hand the message to this response, which htmx never shows)."""
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)


def no_swap(status: int) -> HttpResponse:
    """An htmx answer that leaves the page as it is; a toast (messages) says why."""
    return reswap(HttpResponse(status=status), "none")


def into_change_panel(request: HtmxHttpRequest, response: HttpResponse) -> HttpResponse:
    """A change form posted from the memory page targets #memory-content to show the
    result; a problem with the form stays in its panel instead."""
    if request.htmx and request.method == "POST":
        return reswap(retarget(response, "#change-panel"), "outerHTML")
    return response


def replacing(request: HtmxHttpRequest, response: HttpResponse, selector: str) -> HttpResponse:
    """For htmx: the answer replaces `selector` (outerHTML), not the request's own target."""
    if request.htmx:
        reswap(retarget(response, selector), "outerHTML")
    return response


def into_memory_content(request: HtmxHttpRequest, response: HttpResponse) -> HttpResponse:
    """A change made in an entry's place (its editor, its move panel) whose answer is the
    memory as it now is: it replaces #memory-content, not the entry's place."""
    return replacing(request, response, "#memory-content")


def as_whole_page(request: HtmxHttpRequest, response: HttpResponse) -> HttpResponse:
    """A whole page answering an htmx form: it replaces the page's main content."""
    if request.htmx:
        reselect(retarget(reswap(response, "innerHTML"), "#main"), "#main")
    return response


def trigger(response: HttpResponseBase, event: str, detail: dict[str, Any]) -> HttpResponseBase:
    """A client event (past tense, e.g. memoryCleared) for listeners `from:body`."""
    return trigger_client_event(response, event, detail)


# --- middleware --------------------------------------------------------------------------


def _same_site_page(request: HttpRequest, url: str) -> str | None:
    parts = urlsplit(url)
    if url and parts.netloc == request.get_host() and parts.path.startswith("/"):
        return parts.path + (f"?{parts.query}" if parts.query else "")
    return None


def _current_page(request: HttpRequest) -> str:
    """The page the user is on: for htmx requests not the fragment URL, and for a form
    post not its POST-only URL, but the page the form came from."""
    current = _same_site_page(request, request.headers.get("HX-Current-URL", ""))
    if current:
        return current
    if request.method == "POST":
        return _same_site_page(request, request.headers.get("Referer", "")) or "/"
    return request.get_full_path()


def _login_url(request: HttpRequest) -> str:
    return f"{resolve_url(settings.LOGIN_URL)}?{urlencode({'next': _current_page(request)})}"


def _keep_posted_form(request: HttpRequest) -> None:
    """A post whose sign-in expired: what was typed waits for the person's return to the
    page the form came from (see `memory_ui.web.context_processors`)."""
    if request.method != "POST" or not hasattr(request, "session"):
        return
    fields = [
        (name, value)
        for name, values in request.POST.lists()
        if name not in NOT_KEPT
        for value in values
    ]
    pending = PendingForm(
        request.path, _current_page(request), fields, had_files=bool(request.FILES)
    )
    if pending_form_keep(request.session, pending):
        messages.warning(request, "Your sign-in had expired. Nothing was sent; it is kept below.")


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
        _keep_posted_form(request)
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
