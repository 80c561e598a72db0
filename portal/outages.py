"""The page people get while the database does not answer: a 503 that says so and when to
try again (Retry-After), never a 500, and no restart needed once it is back.

Django turns an exception anywhere in a request (a view, the session middleware loading
or saving the session) into the 500 handler's response; `server_error` is that handler
(portal/urls.py). For a database that cannot be reached (OperationalError, InterfaceError:
refused, timed out, connection lost) it answers 503 and logs one short line, without the
traceback: the cause is an outage, reported by portal/health.py, not a bug. Everything
else is the 500 it was, logged by Django with its traceback, once per request even when
the failure raises again on the way out (the session middleware saving). Rendered without the request, like 500.html:
nothing on the page needs the database.
"""

from __future__ import annotations

import logging
import sys

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseServerError
from django.template import loader

logger = logging.getLogger("portal.outages")


def server_error(request: HttpRequest) -> HttpResponse:
    error = sys.exc_info()[1]
    # One failure often raises twice in a request: the view (or the session's load), then
    # the session middleware saving on the way out. One log line per request.
    logged_before = getattr(request, "_failure_logged", False)
    request._failure_logged = True  # type: ignore[attr-defined]
    if isinstance(error, OperationalError | InterfaceError):
        if not logged_before:
            logger.warning(
                "The database did not answer (%s): 503 for %s %s",
                type(error).__name__,
                request.method,
                request.path,
            )
        response = HttpResponse(loader.get_template("503.html").render(), status=503)
        response["Retry-After"] = str(settings.PORTAL_RETRY_AFTER_SECONDS)
        response["Cache-Control"] = "no-store"
        response._has_been_logged = True  # type: ignore[attr-defined]  # logged above
        return response
    response = HttpResponseServerError(loader.get_template("500.html").render())
    # Django logs the 500 with its traceback unless this flag says it was logged already.
    response._has_been_logged = logged_before  # type: ignore[attr-defined]
    return response
