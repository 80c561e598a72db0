"""The CoreAPI failures every view is tested with, and reading responses the way a
browser would."""

from __future__ import annotations

import html as htmllib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache

from memory_ui.sources.coreapi import (
    CoreAPIBadRequest,
    CoreAPIConflict,
    CoreAPIError,
    CoreAPIForbidden,
    CoreAPINotFound,
    CoreAPIRateLimited,
    CoreAPIRejected,
    CoreAPIUnauthorized,
    CoreAPIUnavailable,
    CoreAPIUnexpectedResponse,
)
from tests.fake_coreapi import FakeCoreAPI

HTMX = {"HX-Request": "true"}

HEADERS = {"page": {}, "htmx": HTMX}  # a plain request, or htmx asking for a fragment

# Targets as the memory forms name them: the shared memory, and one agent's memory.
USER = {"scope": "user"}
TRAVEL = {"scope": "agent", "agent": "travel-planner"}

# The fake's agents (tests/fake_coreapi.py) by name, with the names pages show them by.
AGENTS = {
    "benefits-assistant": "Benefits Assistant",
    "it-helpdesk": "IT Helpdesk",
    "travel-planner": "Travel Planner",
}


@dataclass(frozen=True)
class Failure:
    """A CoreAPI failure: its class, the status CoreAPI answered with, the message users
    read (what CoreAPIClient makes of such an answer) and the portal's own status for it."""

    name: str
    error_class: type[CoreAPIError]
    coreapi_status: int
    message: str
    portal_status: int

    def error(self) -> CoreAPIError:
        return self.error_class(
            self.message,
            status=self.coreapi_status,
            retry_after=7 if self.coreapi_status == 429 else None,
            correlation_id="fake-correlation-id",
        )


FAILURES = (
    Failure("bad-request", CoreAPIBadRequest, 400,
            "CoreAPI rejected the request: the fake says no.", 400),
    Failure("unauthorized", CoreAPIUnauthorized, 401,
            "Your session with CoreAPI has expired; sign in again.", 401),
    Failure("forbidden", CoreAPIForbidden, 403, "You do not have access to this memory.", 403),
    Failure("not-found", CoreAPINotFound, 404, "CoreAPI could not find this agent or memory.", 404),
    Failure("conflict", CoreAPIConflict, 409,
            "The memory was changed elsewhere; reload it and try again.", 409),
    Failure("rate-limited", CoreAPIRateLimited, 429, "CoreAPI is busy; try again in 7 s.", 429),
    Failure("rejected-413", CoreAPIRejected, 413,
            "CoreAPI refused the request (HTTP 413): the body is too large.", 502),
    Failure("unavailable", CoreAPIUnavailable, 503, "CoreAPI is unavailable, try again.", 503),
    Failure("unexpected-response", CoreAPIUnexpectedResponse, 200,
            "CoreAPI returned an unexpected response; try again later.", 502),
)  # fmt: skip


def each_failure(*dimensions: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
    """Every failure in turn, each with the next value of every other dimension (the j-th
    dimension advances every j+1 failures): all failure classes and all values of each
    dimension are tried, without their full product. Tests run each as a subtest:

        for failure, mode in each_failure(["page", "htmx"]):
            with subtests.test(failure.name, mode=mode):
                fail(fake, "get_memory", failure)
                ...
    """
    for i, failure in enumerate(FAILURES):
        picks = (values[(i // (j + 1)) % len(values)] for j, values in enumerate(dimensions))
        yield (failure, *picks)


def fail(fake: FakeCoreAPI, method: str, failure: Failure, *, agent: str | None = None) -> None:
    """A fresh start for one failure (nothing failing, no calls recorded, Django's cache
    and with it the user's agent list empty), then calls of `method` fail with it."""
    fake.heal()
    fake.calls.clear()
    cache.clear()
    fake.fail(method, failure.error(), agent=agent)


# --- reading responses ----------------------------------------------------------------------


def body(response) -> str:
    return response.content.decode()


def is_page(response) -> bool:
    """A whole page (base.html), not an htmx fragment."""
    return "<html" in body(response)


def starts_with(response, prefix: str) -> bool:
    return body(response).lstrip().startswith(prefix)


def varies_on_htmx(response) -> bool:
    return "HX-Request" in response.get("Vary", "")


REFUSALS = {
    400: "The portal could not accept that request",  # templates/400.html
    403: "This page is for support staff.",  # templates/403.html
    404: "There is nothing here, or it is not yours to see.",  # templates/404.html
}


def refused(response, status: int) -> bool:
    """The portal's own error page for `status`."""
    return response.status_code == status and REFUSALS[status] in page_text(response)


def page_text(response) -> str:
    """What a person reads: tags dropped, entities decoded, whitespace collapsed."""
    text = htmllib.unescape(re.sub(r"<[^>]+>", "", body(response)))
    return re.sub(r"[ \t\r\n]+", " ", text)  # not \s: keep no-break spaces as they are


def field_value(html: str, name: str) -> str:
    """The value of the first input called `name`."""
    match = re.search(rf'name="{re.escape(name)}" value="([^"]*)"', html)
    assert match, f"no input {name!r} in the page"
    return htmllib.unescape(match[1])


def fields_of(html: str, *names: str) -> dict[str, str]:
    """The values of the inputs called `names` (the first of each), by name."""
    return {name: field_value(html, name) for name in names}


def field_values(html: str, name: str) -> list[str]:
    pattern = rf'name="{re.escape(name)}" value="([^"]*)"'
    return [htmllib.unescape(value) for value in re.findall(pattern, html)]


def textarea(html: str, name: str) -> str:
    """The text of the textarea called `name`, as a browser would send it."""
    pattern = rf'<textarea[^>]*name="{re.escape(name)}"[^>]*>\n(.*?)</textarea>'
    match = re.search(pattern, html, re.S)
    assert match, f"no textarea {name!r} in the page"
    return htmllib.unescape(match[1])
