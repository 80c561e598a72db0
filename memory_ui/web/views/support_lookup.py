"""Support staff: look a user up, see their overview, reveal one memory.

Every view here checks the support role itself (`access.support_required`), and every
read of content leaves an audit event (through `memory.operations`); a look-up is audited
once per visit (`lookup_audit_due`). A user's pages work only after a look-up of that user
in this session, always for the canonical (lower-case) UPN, and their addresses carry an
opaque id of this session instead of the UPN (`support_pages.support_door`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory_ui import auth
from memory_ui.audit import Action, agent_names_remember
from memory_ui.documents import Document
from memory_ui.resurfacing import deletions_of
from memory_ui.sources.agent_memory import all_targets
from memory_ui.sources.registry import memory_source, memory_store
from memory_ui.web.access import signed_in, support_actor, support_required
from memory_ui.web.forms.support import LookupForm, RevealForm
from memory_ui.web.stores.support import (
    lookup_audit_due,
    lookup_audit_is_due,
    lookup_remember,
    person_upn,
)
from memory_ui.web.support_pages import LookedUp, overview, support_door


@require_http_methods(["GET", "POST"])
@support_required
def support_home(request: HttpRequest) -> HttpResponse:
    """The look-up form. Only its POST (CSRF-checked) opens a user's overview, so a link
    from elsewhere can neither look anyone up nor write audit events in staff's names.
    A GET's `subject` (an id of this session, never a UPN) fills the form in."""
    if request.method == "POST":
        form = LookupForm(request.POST)
        if form.is_valid():
            upn = form.cleaned_data["upn"]
            subject = lookup_remember(request.session, upn)
            lookup_audit_due(request.session, upn)
            return redirect("support_user", subject=subject)
        return render(request, "memory_ui/support/home.html", {"form": form}, status=400)
    prefill = person_upn(request.session, request.GET.get("subject", "")) or ""
    return render(
        request, "memory_ui/support/home.html", {"form": LookupForm(initial={"upn": prefill})}
    )


@require_GET
@support_required
@support_door
def support_user(request: HttpRequest, user: LookedUp) -> HttpResponse:
    upn = user.upn
    # The look-up form's POST made one audit event due: this page records it, and coming
    # back to it later (from a result, with Back) records nothing more.
    due = lookup_audit_is_due(request.session, upn)
    try:
        actor = support_actor(request, upn)
        targets = memory_store().lookup(actor) if due else all_targets(memory_store().agents(actor))
    except auth.SignInFailed as exc:
        if due:
            memory_store().credentials_failed(signed_in(request), Action.LOOKUP, upn, exc.message)
        raise
    lookup_audit_due(request.session, upn, due=False)
    agent_names_remember(t.agent for t in targets if t.agent)
    return overview(request, user, actor, targets)


@require_POST
@support_required
@support_door
def support_reveal(request: HttpRequest, user: LookedUp) -> HttpResponse:
    upn = user.upn
    form = RevealForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give a reason (at least 5 characters) to reveal memory.")
        return redirect("support_user", subject=user.subject)
    reason = form.cleaned_data["reason"]
    try:
        revealed = memory_store().reveal(
            support_actor(request, upn, reason), form.cleaned_data["scope_key"]
        )
    except auth.SignInFailed as exc:
        memory_store().credentials_failed(
            signed_in(request), Action.REVEAL, upn, exc.message, reason=reason
        )
        raise
    if revealed is None:
        return render(request, "404.html", status=404)
    context = {
        "upn": upn,
        "subject": user.subject,
        "target": revealed.target,
        "memory": revealed.memory,
        "document": revealed.document,
        "came_back": _came_back(upn, revealed.document),
    }
    return render(request, "memory_ui/support/reveal.html", context)


@dataclass(frozen=True)
class CameBack:
    """An entry of a revealed memory that came back after the person deleted it, named as
    the markdown shows it (its heading line; "" for the text before the first heading)."""

    heading: str
    deleted_on: datetime


def _came_back(upn: str, document: Document | None) -> list[CameBack]:
    """The revealed memory's entries the person deleted before (one query): the page shows
    the markdown whole, so it lists them by heading rather than flag them in place."""
    deletions = deletions_of(upn)
    if document is None or not deletions.deleted:
        return []
    source = memory_source()
    found = []
    for entry in document.entries:
        when = deletions.came_back(source, entry.body)
        if when:
            heading = "" if entry.kind == "preamble" else entry.source.splitlines()[0]
            found.append(CameBack(heading, when))
    return found


def support_old_address(request: HttpRequest) -> HttpResponse:
    """An address from before support pages carried an opaque id (`/support/users/<upn>/…`,
    an old bookmark): still a 404, but support staff are told why and led to the look-up.
    Anyone else (signed out included) gets the ordinary 404, so the route tells them
    nothing. The UPN in the address is neither shown nor logged here."""
    identity = auth.current_identity(request)
    if request.method not in ("GET", "HEAD") or identity is None or not identity.is_support:
        return render(request, "404.html", status=404)
    return render(request, "memory_ui/support/old_address.html", status=404)
