"""Support staff: look a user up, reveal, export or clear their memory on request.

Every view here checks the support role itself (`access.support_required`), and every
action leaves an audit event (through `memory.operations`). A user's overview, reveal,
export and clear work only after a look-up of that user in this session, always for the
canonical (lower-case) UPN (`forms.valid_upn`), and each export or clear confirmation is
good once, for the user and the action it was issued for. Calls to CoreAPI use the
portal's own app token plus X-USER-IDENTITY for the looked-up user
(docs/architecture.md, Identity and authorization); end-user calls never do.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory_ui import auth
from memory_ui.audit import Action
from memory_ui.coreapi import CoreAPIError
from memory_ui.memory.exports import export_archive
from memory_ui.memory.operations import (
    Actor,
    agents_list,
    credentials_failed,
    memory_clear_many,
    memory_load_many,
    memory_reveal,
    user_lookup,
)
from memory_ui.memory.targets import Target, all_targets
from memory_ui.web import stores
from memory_ui.web.access import View, signed_in, support_actor, support_required
from memory_ui.web.forms import LookupForm, OnBehalfForm, RevealForm, valid_upn


@require_http_methods(["GET", "POST"])
@support_required
def support_home(request: HttpRequest) -> HttpResponse:
    """The look-up form. Only its POST (CSRF-checked) opens a user's overview, so a link
    from elsewhere can neither look anyone up nor write audit events in staff's names."""
    if request.method == "POST":
        form = LookupForm(request.POST)
        if form.is_valid():
            stores.lookup_remember(request.session, form.cleaned_data["upn"])
            return redirect("support_user", upn=form.cleaned_data["upn"])
        return render(request, "memory_ui/support/home.html", {"form": form}, status=400)
    prefill = request.GET.get("upn", "")[:254]
    return render(
        request, "memory_ui/support/home.html", {"form": LookupForm(initial={"upn": prefill})}
    )


def _not_a_upn(request: HttpRequest, upn: str) -> HttpResponse:
    context = {"form": LookupForm({"upn": upn})}
    return render(request, "memory_ui/support/home.html", context, status=400)


def _look_up_first(upn: str) -> HttpResponse:
    """The look-up form, filled in: a user's pages open, and act, only after a look-up in
    this session."""
    return redirect(f"{reverse('support_home')}?{urlencode({'upn': upn})}")


def _looked_up_upn(request: HttpRequest, upn: str) -> str | HttpResponse:
    """The canonical form of the URL's UPN (`valid_upn`) when this session looked that user
    up; otherwise the answer: 400 for a malformed UPN, the look-up form for the others.
    Reveal, export and clear check this before anything else, so nothing is done or
    audited without a look-up."""
    canonical = valid_upn(upn)
    if canonical is None:
        return _not_a_upn(request, upn)
    if not stores.looked_up(request.session, canonical):
        if request.method == "POST":
            messages.warning(request, f"Look {canonical} up first; nothing was done.")
        return _look_up_first(canonical)
    return canonical


def _overview_context(
    request: HttpRequest, upn: str, actor: Actor, targets: list[Target]
) -> dict[str, Any]:
    summaries = memory_load_many(actor, targets)
    return {
        "upn": upn,
        "summaries": summaries,
        "scope_choices": [(s.key, s.target.label) for s in summaries],
        "export_nonce": stores.nonce_issue(request.session, upn, "export"),
        "clear_nonce": stores.nonce_issue(request.session, upn, "clear"),
    }


def _refused(
    request: HttpRequest, upn: str, error: CoreAPIError | auth.SignInFailed
) -> HttpResponse:
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
    context = {"upn": upn, "refusal": message}
    return render(request, "memory_ui/support/user.html", context, status=status)


@require_GET
@support_required
def support_user(request: HttpRequest, upn: str) -> HttpResponse:
    checked = _looked_up_upn(request, upn)
    if isinstance(checked, HttpResponse):
        return checked
    if checked != upn:
        # One address per user: the canonical UPN (a link may spell it otherwise).
        return redirect("support_user", upn=checked)
    try:
        actor = support_actor(request, upn)
        targets = user_lookup(actor)
    except auth.SignInFailed as exc:
        credentials_failed(signed_in(request), Action.LOOKUP, upn, exc.message)
        return _refused(request, upn, exc)
    except CoreAPIError as exc:
        return _refused(request, upn, exc)
    context = _overview_context(request, upn, actor, targets)
    return render(request, "memory_ui/support/user.html", context)


@require_POST
@support_required
def support_reveal(request: HttpRequest, upn: str) -> HttpResponse:
    checked = _looked_up_upn(request, upn)
    if isinstance(checked, HttpResponse):
        return checked
    upn = checked
    form = RevealForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give a reason (at least 5 characters) to reveal memory.")
        return redirect("support_user", upn=upn)
    reason = form.cleaned_data["reason"]
    try:
        revealed = memory_reveal(
            support_actor(request, upn, reason), form.cleaned_data["scope_key"]
        )
    except auth.SignInFailed as exc:
        credentials_failed(signed_in(request), Action.REVEAL, upn, exc.message, reason=reason)
        return _refused(request, upn, exc)
    except CoreAPIError as exc:
        return _refused(request, upn, exc)
    if revealed is None:
        return render(request, "404.html", status=404)
    context = {
        "upn": upn,
        "target": revealed.target,
        "memory": revealed.memory,
        "document": revealed.document,
    }
    return render(request, "memory_ui/support/reveal.html", context)


def _on_behalf(
    request: HttpRequest, upn: str, action: str
) -> tuple[Actor, list[Target], list[str]] | HttpResponse:
    """Check an export/clear request: the actor (with reason and ticket), the user's
    memories and the chosen ones; or the response when it can't go ahead. `upn` is
    canonical (`_on_behalf_of`)."""
    try:
        actor = support_actor(request, upn)
        targets = all_targets(agents_list(actor))
    except (auth.SignInFailed, CoreAPIError) as exc:
        return _refused(request, upn, exc)
    choices = [(t.key, t.label) for t in targets]
    form = OnBehalfForm(
        request.POST, upn=upn, scope_choices=choices, scopes_required=action == "clear"
    )
    if not form.spend_nonce(request.session, upn=upn, action=action):
        # The overview again, with what was typed and a fresh confirmation.
        context = {**_overview_context(request, upn, actor, targets), f"{action}_form": form}
        status = 409 if form.replayed else 400
        return render(request, "memory_ui/support/user.html", context, status=status)
    data = form.cleaned_data
    actor = dataclasses.replace(actor, reason=data["reason"], ticket=data["ticket"])
    return actor, targets, data["scopes"]


def _on_behalf_of(action: str) -> Callable[[View], View]:
    """The view runs only for a user looked up in this session and a checked request
    (`_on_behalf`), with the canonical UPN, its actor, the user's memories and the chosen
    ones."""

    def decorate(view: View) -> View:
        @wraps(view)
        def wrapper(request: HttpRequest, upn: str) -> HttpResponse:
            looked_up = _looked_up_upn(request, upn)
            if isinstance(looked_up, HttpResponse):
                return looked_up
            upn = looked_up
            checked = _on_behalf(request, upn, action)
            if isinstance(checked, HttpResponse):
                return checked
            return view(request, upn, *checked)

        return wrapper

    return decorate


@require_POST
@support_required
@_on_behalf_of("clear")
def support_clear(
    request: HttpRequest, upn: str, actor: Actor, targets: list[Target], keys: list[str]
) -> HttpResponse:
    results = memory_clear_many(actor, [t for t in targets if t.key in keys])
    context = {
        "upn": upn,
        "results": results,
        "failed_keys": [r.key for r in results if r.error],
        "reason": actor.reason,
        "ticket": actor.ticket,
        "nonce": stores.nonce_issue(request.session, upn, "clear"),
    }
    # 200 even when some failed: the page reports each one, and Django would not save the
    # session (the spent confirmation, the retry's new one) on a 5xx response.
    return render(request, "memory_ui/support/results.html", context)


@require_POST
@support_required
@_on_behalf_of("export")
def support_export(
    request: HttpRequest, upn: str, actor: Actor, targets: list[Target], keys: list[str]
) -> HttpResponse:
    try:
        stream = export_archive(actor, [t.agent for t in targets if t.agent], upn)
    except CoreAPIError as exc:
        return _refused(request, upn, exc)
    response = StreamingHttpResponse(stream, content_type="application/zip")
    safe_name = re.sub(r"[^A-Za-z0-9._-]", "_", upn)
    stamp = timezone.now().strftime("%Y-%m-%d")
    response["Content-Disposition"] = f'attachment; filename="memory-{safe_name}-{stamp}.zip"'
    return response
