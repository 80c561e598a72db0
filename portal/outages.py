"""The page people get while the database does not answer: a 503 that says so and when to
try again (Retry-After), never a 500, and no restart needed once it is back.

Django turns an exception anywhere in a request (a view, the session middleware loading
or saving the session) into the 500 handler's response; `server_error` is that handler
(portal/urls.py). For a database that cannot be reached (OperationalError, InterfaceError:
refused, timed out, connection lost) it answers 503 and logs one short line, without the
traceback: the cause is an outage, reported by portal/health.py, not a bug. Everything
else is the 500 it was, logged once by Django. Rendered without the request, like 500.html:
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
    if isinstance(error, OperationalError | InterfaceError):
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
    return HttpResponseServerError(loader.get_template("500.html").render())
