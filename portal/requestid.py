"""A request id for every request: taken from a well-formed incoming X-Request-ID (a
proxy's, e.g. nginx's $request_id or Front Door's) or made here, sent back as X-Request-ID
(gunicorn's access log records it from there), put on every log line of the request
(portal/logs.py) and sent to CoreAPI as X-Correlation-ID (memory_ui.calls)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from memory_ui import calls

# What CoreAPI's client accepts as a correlation id: header-safe and bounded.
REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def request_ids(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable:
    def middleware(request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get("X-Request-ID", "")
        request_id = incoming if REQUEST_ID.fullmatch(incoming) else uuid.uuid4().hex
        request.request_id = request_id  # for log lines written after this returns
        token = calls.correlation_id.set(request_id)
        try:
            response = get_response(request)
        finally:
            calls.correlation_id.reset(token)
        response["X-Request-ID"] = request_id
        return response

    return middleware
