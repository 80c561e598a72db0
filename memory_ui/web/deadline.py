"""One overall deadline for the memory sources' calls of each request (memory_ui.budget)."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from memory_ui import budget


def request_deadline(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """However slow CoreAPI is, a request holds a worker thread for about
    PORTAL_REQUEST_DEADLINE_SECONDS at most (gunicorn's timeout is set above it)."""
    seconds = settings.PORTAL_REQUEST_DEADLINE_SECONDS

    def middleware(request: HttpRequest) -> HttpResponse:
        with budget.deadline(seconds):
            return get_response(request)

    return middleware
