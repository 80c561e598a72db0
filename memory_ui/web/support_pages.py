"""What every support screen shares: the door each view of a looked-up user goes
through (`support_door`: the opaque id in the address resolved to the canonical UPN, only
after a look-up in this session), the page CoreAPI's or the sign-in's refusal shows, the
user's memories, and the overview.

Calls to CoreAPI use the portal's own app token plus X-USER-IDENTITY for the looked-up
user (docs/architecture.md, Identity and authorization); end-user calls never do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from memory_ui import auth
from memory_ui.audit import agent_names_remember
from memory_ui.identity import Actor
from memory_ui.memory.overview import overview_everywhere
from memory_ui.resurfacing import deletions_of
from memory_ui.sources.agent_memory import Target, all_targets
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_source, memory_store, title
from memory_ui.web.forms.support import (
    DeletionRequestForm,
    RevealForm,
)
from memory_ui.web.stores.support import looked_up, nonce_issue, person_upn

OVERVIEW = "memory_ui/support/user.html"


@dataclass(frozen=True)
class LookedUp:
    """The user a support view acts for: `upn` canonical (lower-case), `subject` the
    opaque id that stands for them in this session's addresses (never the UPN: URLs end
    up in access logs, browser history and Referer headers)."""

    upn: str
    subject: str


class Turned(Exception):
    """The door's answer instead of the view's (an unknown id, no look-up yet)."""

    def __init__(self, response: HttpResponse) -> None:
        super().__init__()
        self.response = response


def _looked_up_user(request: HttpRequest, subject: str) -> LookedUp:
    """The user `subject` stands for when this session looked them up; otherwise `Turned`
    to the look-up form with a message: for an id this session does not know (expired,
    signed out since, or another person's session), or for someone not looked up yet
    (an id the audit trail's filter made), with their UPN filled in. Nothing is done or
    audited without a look-up."""
    upn = person_upn(request.session, subject)
    nothing_done = "; nothing was done" if request.method == "POST" else ""
    if upn is None:
        messages.warning(
            request,
            f"That user is not looked up in this session any more{nothing_done}. "
            "Look them up again.",
        )
        raise Turned(redirect("support_home"))
    if not looked_up(request.session, upn):
        messages.warning(request, f"Look {upn} up first{nothing_done}.")
        raise Turned(redirect(f"{reverse('support_home')}?subject={subject}"))
    return LookedUp(upn, subject)


SupportView = Callable[..., HttpResponse]


def support_door(view: SupportView) -> SupportView:
    """The view runs for a user looked up in this session, handed over as `LookedUp`; a
    refusal by the sign-in or CoreAPI anywhere in it becomes the refusal page."""

    @wraps(view)
    def wrapper(
        request: HttpRequest, subject: str, *args: object, **kwargs: object
    ) -> HttpResponse:
        try:
            user = _looked_up_user(request, subject)
        except Turned as turned:
            return turned.response
        try:
            return view(request, user, *args, **kwargs)
        except (auth.SignInFailed, SourceError) as exc:
            return refused(request, user, exc)

    return wrapper


def refused(
    request: HttpRequest, user: LookedUp, error: SourceError | auth.SignInFailed
) -> HttpResponse:
    """The refusal page; a deletion request being started comes back with what was typed,
    to send again."""
    if isinstance(error, auth.SignInFailed):
        message, status = error.message, 503
    elif error.status == 403:
        message = (
            "CoreAPI refused to act for this user. Check the instance's identity substitution "
            "settings (README: Connecting real Entra ID and CoreAPI) and that the UPN is allowed."
        )
        status = 403
    else:
        message, status = error.message, error.portal_status
    context: dict[str, Any] = {"upn": user.upn, "subject": user.subject, "refusal": message}
    match = request.resolver_match
    if request.method == "POST" and match and match.url_name == "support_request_start":
        context["typed"] = DeletionRequestForm.typed_again(request.POST)
        context["request_nonce"] = nonce_issue(request.session, user.upn, "request")
        if status >= 500:
            request.session.save()  # Django skips it on a 5xx; the new confirmation must last
    return render(request, OVERVIEW, context, status=status)


def user_targets(actor: Actor) -> list[Target]:
    """Every memory of the user the portal may act on, as the portal's service principal
    sees them for that user; their agents' display names are kept for the audit pages."""
    targets = all_targets(memory_store().agents(actor))
    agent_names_remember(t.agent for t in targets if t.agent)
    return targets


def overview(
    request: HttpRequest,
    user: LookedUp,
    actor: Actor,
    targets: list[Target],
    form: DeletionRequestForm | None = None,
    status: int = 200,
) -> HttpResponse:
    """What exists of the user's memory in every system, without content, with what came
    back after they deleted it; the other systems are read at once with CoreAPI, each
    within its own deadline, so a slow one is named rather than holding the page."""
    deletions, source = deletions_of(user.upn), memory_source()
    summaries, systems = overview_everywhere(actor, targets, deletions)
    came_back = [
        deletions.count(source, (e.body for e in summary.document.entries))
        if deletions.deleted and summary.document is not None
        else 0
        for summary in summaries
    ]
    # What came back, per system, in its own words ("1 file in Legacy memory stores"): the
    # total's sentence names each system that has any.
    came_back_in = [(sum(came_back), ("entry", "entries"), title(source))] + [
        (system.came_back, system.source.items, system.source.title) for system in systems
    ]
    if form is None:
        form = DeletionRequestForm(scope_choices=[(t.key, t.label) for t in targets])
    context = {
        "upn": user.upn,
        "subject": user.subject,
        "summaries": summaries,
        "reveal_rows": [
            (summary, RevealForm.for_row(summary.target, row), back)
            for row, (summary, back) in enumerate(zip(summaries, came_back, strict=True), 1)
        ],
        "came_back": sum(back for back, _, _ in came_back_in),
        "came_back_in": [
            (back, words[back != 1], system) for back, words, system in came_back_in if back
        ],
        "systems": [system for system in systems if not system.why],
        "not_counted": [system for system in systems if system.why],
        "request_form": form,
        "request_nonce": nonce_issue(request.session, user.upn, "request"),
    }
    return render(request, OVERVIEW, context, status=status)
