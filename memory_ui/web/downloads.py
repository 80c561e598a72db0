"""Telling a page that its download has begun: a link or form marked `data-download`
(static/js/portal.js) sends a one-off `download_token`, and the answer carrying the file
sets a cookie with that token, which ends its "Preparing your download…" (and lets
support's request page show the export as handed over). The cookie holds no secret."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

from memory_ui.web.forms import DownloadForm

DOWNLOAD_COOKIE = "download_ready"  # read by static/js/portal.js


def download_began(request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
    """`response` (a file), marked for the page that asked with a `download_token` (a GET
    link or form, or a POST form such as support's export)."""
    form = DownloadForm(request.POST if request.method == "POST" else request.GET)
    if form.is_valid() and form.cleaned_data["download_token"]:
        response.set_cookie(
            DOWNLOAD_COOKIE,
            form.cleaned_data["download_token"],
            max_age=120,
            secure=settings.SESSION_COOKIE_SECURE,
            httponly=False,
            samesite="Strict",
        )
    return response
