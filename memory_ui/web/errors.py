"""Errors a view raises instead of returning, and the one place each is answered.

`AgentsUnlisted`: the memory a form names could not be worked out because CoreAPI did not
list the user's agents (`access.form_target` raises it). A view that takes such a form
says once, with `@answers_unlisted(handler)`, how its screen shows that (the form again as
posted, nothing lost), and then reads straight down with a `Target` in hand.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpResponse

from memory_ui.sources.protocol import SourceError
from memory_ui.web.forms import TargetForm
from memory_ui.web.htmx import HtmxHttpRequest


class AgentsUnlisted(Exception):
    """The user's agents could not be listed while resolving `form`'s memory."""

    def __init__(self, form: TargetForm, error: SourceError) -> None:
        super().__init__(error.message)
        self.form = form
        self.error = error


View = Callable[..., HttpResponse]
UnlistedHandler = Callable[[HtmxHttpRequest, AgentsUnlisted], HttpResponse]


def answers_unlisted(handler: UnlistedHandler) -> Callable[[View], View]:
    """The view's answer to `AgentsUnlisted`, wherever in the view it is raised."""

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapper(request: HtmxHttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                return view(request, *args, **kwargs)
            except AgentsUnlisted as unlisted:
                return handler(request, unlisted)

        return wrapper

    return decorator
