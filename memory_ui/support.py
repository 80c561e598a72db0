"""Support staff: look a user up, reveal, export or clear their memory on request.

Every view here checks the support role itself (fragments included), and every action
leaves an audit event. Calls to CoreAPI use the portal's own app token plus
X-USER-IDENTITY for the looked-up user (DESIGN 4); end-user calls never do.
"""

from __future__ import annotations

import csv
import re
import secrets
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, time
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory_ui import auth
from memory_ui.access import HtmxHttpRequest, error_status
from memory_ui.archive import export_archive
from memory_ui.audit import Action, audit_record
from memory_ui.coreapi import (
    CallerAuth,
    CoreAPIError,
    CoreAPIUnavailable,
    Memory,
    UserIdentity,
    get_client,
)
from memory_ui.documents import parse_document
from memory_ui.models import AuditEvent
from memory_ui.operations import Actor, ScopeResult, Target, memory_clear, memory_read

UPN_PATTERN = re.compile(r"^[A-Za-z0-9._%+'-]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
SESSION_NONCES = "support_nonces"
View = Callable[..., HttpResponse]


def support_required(view: View) -> View:
    """Signed in and holding the support app role (from the id_token), or 403."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        identity = auth.current_identity(request)
        if identity is None or not identity.is_support:
            return render(request, "403.html", status=403)
        return view(request, *args, **kwargs)

    return wrapper


def valid_upn(value: str) -> str | None:
    value = value.strip()
    return value if len(value) <= 254 and UPN_PATTERN.match(value) else None


def support_actor(request: HttpRequest, upn: str, reason: str = "", ticket: str = "") -> Actor:
    """The portal's service principal acting for `upn`. The portal only knows the UPN of
    the looked-up user, so that is what the UnifiedUserIdentity carries."""
    identity = UserIdentity(name=upn, user_name=upn, user_id="", upn=upn)
    return Actor(
        request,
        CallerAuth(access_token=auth.app_token(), user_identity=identity),
        subject_upn=upn,
        reason=reason,
        ticket=ticket,
    )


def _issue_nonce(request: HttpRequest) -> str:
    """A single-use token for one confirmation form, so a replayed POST does nothing."""
    nonce = secrets.token_urlsafe(16)
    nonces = request.session.get(SESSION_NONCES, [])[-20:]
    request.session[SESSION_NONCES] = [*nonces, nonce]
    return nonce


def _spend_nonce(request: HttpRequest, nonce: str) -> bool:
    nonces = request.session.get(SESSION_NONCES, [])
    if nonce not in nonces:
        return False
    nonces.remove(nonce)
    request.session[SESSION_NONCES] = nonces
    return True


@dataclass(frozen=True)
class ScopeSummary:
    target: Target
    memory: Memory | None
    error: CoreAPIError | None

    @property
    def key(self) -> str:
        return self.target.key

    @property
    def document(self) -> Any:
        return parse_document(self.memory.content_markdown) if self.memory else None


def _targets(actor: Actor) -> list[Target]:
    agents = get_client().list_agents(actor.auth)
    return [Target("user"), *(Target("agent", agent) for agent in agents)]


def _summaries(actor: Actor, targets: list[Target]) -> list[ScopeSummary]:
    def one(target: Target) -> ScopeSummary:
        try:
            return ScopeSummary(target, memory_read(actor, target), None)
        except CoreAPIError as exc:
            return ScopeSummary(target, None, exc)

    # A few at a time: an overview costs about one round trip, not one per agent.
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(one, targets))


def _target_for(targets: list[Target], key: str) -> Target | None:
    return next((t for t in targets if t.key == key), None)


# --- forms ---------------------------------------------------------------------------


class LookupForm(forms.Form):
    upn = forms.CharField(label="User principal name", max_length=254, strip=True)

    def clean_upn(self) -> str:
        upn = valid_upn(self.cleaned_data["upn"])
        if upn is None:
            raise forms.ValidationError("Enter a user principal name such as alice@contoso.com.")
        return upn


class RevealForm(forms.Form):
    scope_key = forms.CharField(max_length=220)
    reason = forms.CharField(
        label="Why do you need to read it?", max_length=500, min_length=5, strip=True
    )


class OnBehalfForm(forms.Form):
    """Export or clear for a user: reason, ticket and the user's UPN typed again."""

    reason = forms.CharField(label="Reason", max_length=500, min_length=5, strip=True)
    ticket = forms.RegexField(
        label="Ticket reference",
        max_length=100,
        regex=r"^[A-Za-z0-9][A-Za-z0-9._#/:-]*$",
        error_messages={"invalid": "Use letters, digits and . _ # / : - only."},
    )
    confirm_upn = forms.CharField(label="Type the user's UPN to confirm", max_length=254)
    nonce = forms.CharField(widget=forms.HiddenInput, max_length=64)
    scopes = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args: Any, upn: str, scope_choices: list[tuple[str, str]], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.upn = upn
        self.fields["scopes"].choices = scope_choices

    def clean_confirm_upn(self) -> str:
        typed = self.cleaned_data["confirm_upn"].strip()
        if typed.casefold() != self.upn.casefold():
            raise forms.ValidationError(f"Type {self.upn} exactly to confirm.")
        return typed


# --- views ---------------------------------------------------------------------------


SESSION_LOOKUPS = "support_lookups"


def _remember_lookup(request: HttpRequest, upn: str) -> None:
    recent = [u for u in request.session.get(SESSION_LOOKUPS, []) if u != upn.casefold()]
    request.session[SESSION_LOOKUPS] = [*recent[-19:], upn.casefold()]


def _looked_up(request: HttpRequest, upn: str) -> bool:
    return upn.casefold() in request.session.get(SESSION_LOOKUPS, [])


@require_http_methods(["GET", "POST"])
@support_required
def support_home(request: HttpRequest) -> HttpResponse:
    """The look-up form. Only its POST (CSRF-checked) opens a user's overview, so a link
    from elsewhere can neither look anyone up nor write audit events in staff's names."""
    if request.method == "POST":
        form = LookupForm(request.POST)
        if form.is_valid():
            _remember_lookup(request, form.cleaned_data["upn"])
            return redirect("support_user", upn=form.cleaned_data["upn"])
        return render(request, "memory_ui/support/home.html", {"form": form}, status=400)
    prefill = request.GET.get("upn", "")[:254]
    return render(
        request, "memory_ui/support/home.html", {"form": LookupForm(initial={"upn": prefill})}
    )


def _overview_context(
    request: HttpRequest, upn: str, actor: Actor, targets: list[Target]
) -> dict[str, Any]:
    summaries = _summaries(actor, targets)
    return {
        "upn": upn,
        "summaries": summaries,
        "scope_choices": [(s.key, s.target.label) for s in summaries],
        "export_nonce": _issue_nonce(request),
        "clear_nonce": _issue_nonce(request),
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
        message, status = error.message, error_status(error)
    return render(
        request, "memory_ui/support/user.html", {"upn": upn, "refusal": message}, status=status
    )


@require_GET
@support_required
def support_user(request: HttpRequest, upn: str) -> HttpResponse:
    if valid_upn(upn) is None:
        return render(
            request,
            "memory_ui/support/home.html",
            {"form": LookupForm({"upn": upn})},
            status=400,
        )
    if not _looked_up(request, upn):
        return redirect(f"{reverse('support_home')}?{urlencode({'upn': upn})}")
    try:
        actor = support_actor(request, upn)
        targets = _targets(actor)
    except auth.SignInFailed as exc:
        audit_record(request, Action.LOOKUP, subject_upn=upn, error=CoreAPIUnavailable(exc.message))
        return _refused(request, upn, exc)
    except CoreAPIError as exc:
        audit_record(request, Action.LOOKUP, subject_upn=upn, error=exc)
        return _refused(request, upn, exc)
    audit_record(request, Action.LOOKUP, subject_upn=upn)
    return render(
        request, "memory_ui/support/user.html", _overview_context(request, upn, actor, targets)
    )


@require_POST
@support_required
def support_reveal(request: HttpRequest, upn: str) -> HttpResponse:
    form = RevealForm(request.POST)
    if valid_upn(upn) is None or not form.is_valid():
        messages.error(request, "Give a reason (at least 5 characters) to reveal memory.")
        return redirect("support_user", upn=upn) if valid_upn(upn) else redirect("support_home")
    try:
        actor = support_actor(request, upn, reason=form.cleaned_data["reason"])
        target = _target_for(_targets(actor), form.cleaned_data["scope_key"])
        if target is None:
            return render(request, "404.html", status=404)
        memory = memory_read(actor, target)
    except (auth.SignInFailed, CoreAPIError) as exc:
        error = CoreAPIUnavailable(exc.message) if isinstance(exc, auth.SignInFailed) else exc
        audit_record(
            request, Action.REVEAL, subject_upn=upn, reason=form.cleaned_data["reason"], error=error
        )
        return _refused(request, upn, exc)
    audit_record(
        request,
        Action.REVEAL,
        subject_upn=upn,
        scope=target.scope,
        agent=target.agent,
        before=memory.content_markdown,
        reason=form.cleaned_data["reason"],
    )
    return render(
        request,
        "memory_ui/support/reveal.html",
        {
            "upn": upn,
            "target": target,
            "memory": memory,
            "document": parse_document(memory.content_markdown),
        },
    )


def _on_behalf(
    request: HttpRequest, upn: str, action: str
) -> tuple[OnBehalfForm, Actor, list[Target]] | HttpResponse:
    """Validate an export/clear request; the response when it can't go ahead."""
    if valid_upn(upn) is None:
        return render(
            request, "memory_ui/support/home.html", {"form": LookupForm({"upn": upn})}, status=400
        )
    try:
        lookup_actor = support_actor(request, upn)
        targets = _targets(lookup_actor)
    except auth.SignInFailed as exc:
        return _refused(request, upn, exc)
    except CoreAPIError as exc:
        return _refused(request, upn, exc)
    choices = [(t.key, t.label) for t in targets]
    form = OnBehalfForm(request.POST, upn=upn, scope_choices=choices)
    if action == "clear":
        form.fields["scopes"].required = True
        form.fields["scopes"].error_messages["required"] = "Choose at least one memory to clear."
    replayed = form.is_valid() and not _spend_nonce(request, form.cleaned_data["nonce"])
    if replayed:
        form.add_error(
            None,
            "That confirmation was already used or has expired; nothing was done. "
            "Check the details and submit again.",
        )
    if not form.is_valid():
        # The overview again, with what was typed and a fresh confirmation.
        context = _overview_context(request, upn, lookup_actor, targets)
        return render(
            request,
            "memory_ui/support/user.html",
            {**context, f"{action}_form": form},
            status=409 if replayed else 400,
        )
    actor = Actor(
        request,
        lookup_actor.auth,
        subject_upn=upn,
        reason=form.cleaned_data["reason"],
        ticket=form.cleaned_data["ticket"],
    )
    return form, actor, targets


@require_POST
@support_required
def support_clear(request: HttpRequest, upn: str) -> HttpResponse:
    checked = _on_behalf(request, upn, "clear")
    if isinstance(checked, HttpResponse):
        return checked
    form, actor, targets = checked
    chosen = [t for t in targets if t.key in form.cleaned_data["scopes"]]
    results = []
    for target in chosen:
        try:
            memory_clear(actor, target)
            results.append(ScopeResult(target, None))
        except CoreAPIError as exc:
            results.append(ScopeResult(target, exc))
    failed = [r for r in results if r.error]
    return render(
        request,
        "memory_ui/support/results.html",
        {
            "upn": upn,
            "results": results,
            "failed_keys": [r.target.key for r in failed],
            "reason": actor.reason,
            "ticket": actor.ticket,
            "nonce": _issue_nonce(request),
        },
    )  # 200 even when some failed: the page reports each one, and Django would not save
    # the session (the spent confirmation, the retry's new one) on a 5xx response.


@require_POST
@support_required
def support_export(request: HttpRequest, upn: str) -> HttpResponse:
    checked = _on_behalf(request, upn, "export")
    if isinstance(checked, HttpResponse):
        return checked
    _, actor, targets = checked

    agents = [t.agent for t in targets if t.agent]
    stamp = timezone.now().strftime("%Y-%m-%d")
    response = StreamingHttpResponse(
        export_archive(actor, agents, upn), content_type="application/zip"
    )
    safe_name = re.sub(r"[^A-Za-z0-9._-]", "_", upn)
    response["Content-Disposition"] = f'attachment; filename="memory-{safe_name}-{stamp}.zip"'
    return response


# --- audit and activity ----------------------------------------------------------------


class AuditFilterForm(forms.Form):
    subject = forms.CharField(required=False, max_length=254)
    actor = forms.CharField(required=False, max_length=254)
    action = forms.ChoiceField(required=False, choices=[("", "Any"), *Action.choices])
    date_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))


def _filtered(form: AuditFilterForm) -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.all()
    if not form.is_valid():
        return events.none()
    data = form.cleaned_data
    if data["subject"]:
        events = events.filter(subject_upn__iexact=data["subject"].strip())
    if data["actor"]:
        events = events.filter(actor_upn__iexact=data["actor"].strip())
    if data["action"]:
        events = events.filter(action=data["action"])
    tz = timezone.get_current_timezone()
    if data["date_from"]:
        events = events.filter(created_at__gte=datetime.combine(data["date_from"], time.min, tz))
    if data["date_to"]:
        events = events.filter(created_at__lte=datetime.combine(data["date_to"], time.max, tz))
    return events


CSV_FIELDS = (
    "created_at", "actor_upn", "actor_oid", "actor_is_support", "subject_upn", "action",
    "scope", "agent_name", "agent_object_id", "reason", "ticket", "outcome", "error_status",
    "error_message", "bytes_before", "sha256_before", "bytes_after", "sha256_after",
    "correlation_id",
)  # fmt: skip


class _Echo:
    def write(self, value: str) -> str:
        return value


def _csv_rows(events: QuerySet[AuditEvent]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(CSV_FIELDS)
    for event in events.iterator(chunk_size=500):
        yield writer.writerow([_csv_cell(getattr(event, name)) for name in CSV_FIELDS])


def _csv_cell(value: object) -> object:
    # Reasons are typed by people: keep spreadsheets from running them as formulas.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


@require_GET
@support_required
def support_audit(request: HttpRequest) -> HttpResponse:
    form = AuditFilterForm(request.GET or None)
    events = _filtered(form) if request.GET else AuditEvent.objects.all()
    if request.GET.get("format") == "csv":
        response = StreamingHttpResponse(_csv_rows(events), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="memory-audit.csv"'
        return response
    page = Paginator(events, 50).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "memory_ui/support/audit.html",
        {"form": form, "page": page, "query": query.urlencode()},
    )


@require_GET
@login_required
def activity(request: HtmxHttpRequest) -> HttpResponse:
    """What happened to my memory, by me or by support staff (with reason and ticket)."""
    identity = auth.current_identity(request)
    if identity is None:
        raise auth.SignInRequired
    events = AuditEvent.objects.filter(subject_upn__iexact=identity.upn)
    page = Paginator(events, 50).get_page(request.GET.get("page"))
    return render(
        request,
        "memory_ui/activity.html",
        {"page": page, "show_support_actor": settings.PORTAL_SHOW_SUPPORT_ACTOR},
    )


urlpatterns = [
    path("support/", support_home, name="support_home"),
    path("support/audit", support_audit, name="support_audit"),
    path("support/users/<str:upn>/", support_user, name="support_user"),
    path("support/users/<str:upn>/reveal", support_reveal, name="support_reveal"),
    path("support/users/<str:upn>/clear", support_clear, name="support_clear"),
    path("support/users/<str:upn>/export", support_export, name="support_export"),
    path("activity", activity, name="activity"),
]
