"""What a signed-in person sees is theirs alone: no cache may keep it.

Pages and fragments with memory, the Activity page, support pages and CSV downloads all
answer signed-in requests; shared proxies and the browser's disk cache must not store them
(a shared computer, a later user behind the same proxy). Static files are served by
WhiteNoise before this middleware and keep their long-lived caching.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control

Handler = Callable[[HttpRequest], HttpResponse]


def private_when_signed_in(get_response: Handler) -> Handler:
    """`Cache-Control: no-store, private` on every response to a signed-in request, added to
    what the view set (never_cache's no-cache and max-age=0 stay; a `public` goes)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if request.user.is_authenticated:
            patch_cache_control(response, no_store=True, private=True)
        return response

    return middleware
