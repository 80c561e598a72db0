"""Support staff: look a user up, reveal one memory, and handle a deletion request.

A deletion request takes the reason, the ticket and the memories once (every memory, or
some), then goes in two steps: the export (a .zip of those memories, handed to the staff
member) and the clear (the user's UPN typed again), which clears each memory only if it is
still the version the export handed over. Its result page gives the ticket, the time, the
sha256 of each memory before and after, and a link to its audit rows.

Every view here checks the support role itself (`access.support_required`), and every
read of content and every change leaves an audit event (through `memory.operations`); a
look-up is audited once per visit (`support_requests.lookup_audit_due`). A user's pages
work only after a look-up of that user in this session, always for the canonical
(lower-case) UPN (`support_forms.valid_upn`), and each confirmation is good once, for the
user and the action it was issued for. Calls to CoreAPI use the portal's own app token
plus X-USER-IDENTITY for the looked-up user (docs/architecture.md, Identity and
authorization); end-user calls never do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
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
from memory_ui.audit import Action, agent_names_remember
from memory_ui.coreapi import CoreAPIError
from memory_ui.memory.archive import ExportedDocument, build_manifest, zip_stream
from memory_ui.memory.documents import content_hash
from memory_ui.memory.exports import memory_export_many
from memory_ui.memory.operations import (
    Actor,
    Loaded,
    MemoryChanged,
    Version,
    agents_list,
    credentials_failed,
    memory_clear,
    memory_load_many,
    memory_reveal,
    user_lookup,
)
from memory_ui.memory.targets import Target, all_targets
from memory_ui.web import stores, support_requests
from memory_ui.web.access import signed_in, support_actor, support_required
from memory_ui.web.support_forms import (
    EVERY_MEMORY,
    ClearRequestForm,
    DeletionRequestForm,
    LookupForm,
    RevealForm,
    valid_upn,
)
from memory_ui.web.support_requests import DeletionRequest, Exported, Outcome

OVERVIEW = "memory_ui/support/user.html"
REQUEST_PAGE = "memory_ui/support/request.html"


@require_http_methods(["GET", "POST"])
@support_required
def support_home(request: HttpRequest) -> HttpResponse:
    """The look-up form. Only its POST (CSRF-checked) opens a user's overview, so a link
    from elsewhere can neither look anyone up nor write audit events in staff's names."""
    if request.method == "POST":
        form = LookupForm(request.POST)
        if form.is_valid():
            upn = form.cleaned_data["upn"]
            stores.lookup_remember(request.session, upn)
            support_requests.lookup_audit_due(request.session, upn)
            return redirect("support_user", upn=upn)
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
    Every view of a user checks this before anything else, so nothing is done or audited
    without a look-up."""
    canonical = valid_upn(upn)
    if canonical is None:
        return _not_a_upn(request, upn)
    if not stores.looked_up(request.session, canonical):
        if request.method == "POST":
            messages.warning(request, f"Look {canonical} up first; nothing was done.")
        return _look_up_first(canonical)
    return canonical


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
    return render(request, OVERVIEW, context, status=status)


def _user_targets(actor: Actor) -> list[Target]:
    """Every memory of the user the portal may act on, as the portal's service principal
    sees them for that user; their agents' display names are kept for the audit pages."""
    targets = all_targets(agents_list(actor))
    agent_names_remember(t.agent for t in targets if t.agent)
    return targets


# --- look-up and overview ---------------------------------------------------------------


def _overview(
    request: HttpRequest,
    upn: str,
    actor: Actor,
    targets: list[Target],
    form: DeletionRequestForm | None = None,
    status: int = 200,
) -> HttpResponse:
    summaries = memory_load_many(actor, targets)
    context = {
        "upn": upn,
        "summaries": summaries,
        "request_form": form,
        "every_memory": EVERY_MEMORY,
        "chosen": form.data.getlist("scopes") if form is not None else [EVERY_MEMORY],
        "request_nonce": stores.nonce_issue(request.session, upn, "request"),
    }
    return render(request, OVERVIEW, context, status=status)


@require_GET
@support_required
def support_user(request: HttpRequest, upn: str) -> HttpResponse:
    checked = _looked_up_upn(request, upn)
    if isinstance(checked, HttpResponse):
        return checked
    if checked != upn:
        # One address per user: the canonical UPN (a link may spell it otherwise).
        return redirect("support_user", upn=checked)
    # The look-up form's POST made one audit event due: this page records it, and coming
    # back to it later (from a result, with Back) records nothing more.
    due = support_requests.lookup_audit_is_due(request.session, upn)
    try:
        actor = support_actor(request, upn)
        targets = user_lookup(actor) if due else all_targets(agents_list(actor))
    except auth.SignInFailed as exc:
        if due:
            credentials_failed(signed_in(request), Action.LOOKUP, upn, exc.message)
        return _refused(request, upn, exc)
    except CoreAPIError as exc:
        return _refused(request, upn, exc)
    support_requests.lookup_audit_due(request.session, upn, due=False)
    agent_names_remember(t.agent for t in targets if t.agent)
    return _overview(request, upn, actor, targets)


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


# --- a deletion request -----------------------------------------------------------------


@require_POST
@support_required
def support_request_start(request: HttpRequest, upn: str) -> HttpResponse:
    """Reason, ticket and memories, once; then the request's own page (export, clear)."""
    checked = _looked_up_upn(request, upn)
    if isinstance(checked, HttpResponse):
        return checked
    upn = checked
    try:
        actor = support_actor(request, upn)
        targets = _user_targets(actor)
    except (auth.SignInFailed, CoreAPIError) as exc:
        return _refused(request, upn, exc)
    form = DeletionRequestForm(request.POST, scope_choices=[(t.key, t.label) for t in targets])
    if not form.spend_nonce(request.session, upn=upn, action="request"):
        # The overview again, with what was typed and a fresh confirmation.
        return _overview(request, upn, actor, targets, form, 409 if form.replayed else 400)
    data = form.cleaned_data
    started = support_requests.request_start(
        request.session,
        upn=upn,
        reason=data["reason"],
        ticket=data["ticket"],
        keys=data["scopes"],
        everything=EVERY_MEMORY in form.data.getlist("scopes"),
        when=timezone.now().isoformat(),
    )
    return redirect("support_request", upn=upn, request_id=started.id)


@dataclass
class Handling:
    """A deletion request being handled: for whom, the session's record of it, the actor
    (with its reason and ticket) and the chosen memories the user still has."""

    upn: str
    record: DeletionRequest
    actor: Actor
    targets: list[Target]

    @property
    def gone(self) -> list[str]:
        """Chosen memories CoreAPI no longer lists for the user (an agent removed since)."""
        present = {t.key for t in self.targets}
        return [key for key in self.record.keys if key not in present]


HandlingView = Callable[[HttpRequest, Handling], HttpResponse]


def _handling(view: HandlingView) -> Callable[..., HttpResponse]:
    """The view runs for a deletion request of this session, for a user looked up in this
    session, with the user's memories listed now."""

    @wraps(view)
    def wrapper(request: HttpRequest, upn: str, request_id: str) -> HttpResponse:
        looked_up = _looked_up_upn(request, upn)
        if isinstance(looked_up, HttpResponse):
            return looked_up
        record = support_requests.request_get(request.session, looked_up, request_id)
        if record is None:
            messages.warning(
                request,
                "That deletion request is not open in this session; nothing was done. "
                "Start it again here.",
            )
            return redirect("support_user", upn=looked_up)
        try:
            actor = support_actor(request, looked_up, record.reason, record.ticket)
            targets = _user_targets(actor)
        except (auth.SignInFailed, CoreAPIError) as exc:
            return _refused(request, looked_up, exc)
        chosen = [t for t in targets if t.key in record.keys]
        return view(request, Handling(looked_up, record, actor, chosen))

    return wrapper


@dataclass(frozen=True)
class RequestRow:
    """One chosen memory on the request page: as it is now, and as the export handed it."""

    loaded: Loaded
    exported: Exported | None

    @property
    def now(self) -> Version | None:
        return Version.of(self.loaded.memory) if self.loaded.memory else None

    @property
    def changed_since_export(self) -> bool:
        return bool(self.exported and self.now and self.now.token() != self.exported.version)

    @property
    def exported_sha256(self) -> str:
        version = Version.parse(self.exported.version) if self.exported else None
        return version.sha256 if version else ""


def _request_page(
    request: HttpRequest,
    handling: Handling,
    *,
    status: int = 200,
    problem: str = "",
    clear_form: ClearRequestForm | None = None,
) -> HttpResponse:
    record = handling.record
    loaded = memory_load_many(handling.actor, handling.targets)
    context = {
        "upn": handling.upn,
        "handling": record,
        "rows": [RequestRow(item, record.exported.get(item.key)) for item in loaded],
        "gone": handling.gone,
        "problem": problem,
        "clear_form": clear_form,
        "exported_at": _when(record.exported_at),
        "clear_nonce": stores.nonce_issue(request.session, handling.upn, f"clear:{record.id}"),
    }
    return render(request, REQUEST_PAGE, context, status=status)


def _when(stamp: str) -> datetime | None:
    return datetime.fromisoformat(stamp) if stamp else None


@require_GET
@support_required
@_handling
def support_request(request: HttpRequest, handling: Handling) -> HttpResponse:
    return _request_page(request, handling)


@require_POST
@support_required
@_handling
def support_request_export(request: HttpRequest, handling: Handling) -> HttpResponse:
    """The chosen memories as an "Export everything" zip. Each is read before it is
    exported: that read is the version a clear must still find, so anything added after
    it (in the export or not) makes the clear refuse rather than erase unexported text."""
    record, actor = handling.record, handling.actor
    loaded = memory_load_many(actor, handling.targets)
    failed = next((item for item in loaded if item.error), None)
    try:
        if failed is not None and failed.error is not None:
            raise failed.error
        texts = memory_export_many(actor, handling.targets)
    except CoreAPIError as exc:
        problem = f"Nothing was exported: {exc.message}"
        return _request_page(request, handling, status=exc.portal_status, problem=problem)
    memories = [item.memory for item in loaded if item.memory is not None]  # every read worked
    documents = [
        ExportedDocument(target, text, memory.updated_on)
        for target, text, memory in zip(handling.targets, texts, memories, strict=True)
    ]
    exported = {
        target.key: Exported(Version.of(memory).token(), len(memory.content_markdown.encode()))
        for target, memory in zip(handling.targets, memories, strict=True)
    }
    now = timezone.now()
    record.exported, record.exported_at = exported, now.isoformat()
    support_requests.request_save(request.session, record)
    stream = zip_stream(documents, build_manifest(documents, handling.upn, now), now)
    response = StreamingHttpResponse(stream, content_type="application/zip")
    name = re.sub(r"[^A-Za-z0-9._-]", "_", f"memory-{handling.upn}-{record.ticket}")
    response["Content-Disposition"] = f'attachment; filename="{name}-{now:%Y-%m-%d}.zip"'
    return response


def _clear_one(actor: Actor, target: Target, exported: Exported) -> Outcome:
    """Clear one memory if it is still the version its export handed over."""
    version = Version.parse(exported.version)
    before = {"bytes_before": exported.size, "sha256_before": version.sha256 if version else ""}
    outcome = {"key": target.key, "label": target.label, **before}
    if version is None:
        return Outcome(**outcome, status="changed", message="Export it again, then clear.")
    try:
        after = memory_clear(actor, target, started_from=version)
    except MemoryChanged as exc:
        if exc.current.content_markdown == "":
            # Emptied meanwhile (a retry of a clear whose answer was lost, or the user).
            after = exc.current
        else:
            message = (
                "It changed since the export, so nothing was cleared: download the export "
                "again, then clear."
            )
            return Outcome(**outcome, status="changed", message=message)
    except CoreAPIError as exc:
        status = "unknown" if exc.outcome_unknown else "failed"
        return Outcome(**outcome, status=status, message=exc.message)
    size_after = len(after.content_markdown.encode())
    return Outcome(
        **outcome,
        status="cleared",
        bytes_after=size_after,
        sha256_after=content_hash(after.content_markdown),
    )


@require_POST
@support_required
@_handling
def support_request_clear(request: HttpRequest, handling: Handling) -> HttpResponse:
    record = handling.record
    form = ClearRequestForm(request.POST, upn=handling.upn, keys=[t.key for t in handling.targets])
    if not form.spend_nonce(request.session, upn=handling.upn, action=f"clear:{record.id}"):
        status = 409 if form.replayed else 400
        return _request_page(request, handling, status=status, clear_form=form)
    keys = form.cleaned_data["scopes"]
    if any(key not in record.exported for key in keys):
        problem = (
            "Nothing was cleared: download the export first. A memory is cleared only "
            "once its export is in your hands."
        )
        return _request_page(request, handling, status=409, problem=problem)
    outcomes = [
        _clear_one(handling.actor, target, record.exported[target.key])
        for target in handling.targets
        if target.key in keys
    ]
    record.record_outcomes(outcomes, timezone.now().isoformat())
    support_requests.request_save(request.session, record)
    return redirect("support_request_result", upn=handling.upn, request_id=record.id)


@require_GET
@support_required
def support_request_result(request: HttpRequest, upn: str, request_id: str) -> HttpResponse:
    """What the clear did: a page of its own, so reloading it or coming back changes
    nothing. It needs no CoreAPI call: the session kept each memory's outcome."""
    looked_up = _looked_up_upn(request, upn)
    if isinstance(looked_up, HttpResponse):
        return looked_up
    record = support_requests.request_get(request.session, looked_up, request_id)
    if record is None or not record.cleared_at:
        return redirect("support_user", upn=looked_up)
    audit_query = urlencode({"subject": looked_up, "ticket": record.ticket})
    context: dict[str, Any] = {
        "upn": looked_up,
        "handling": record,
        "cleared_at": _when(record.cleared_at),
        "exported_at": _when(record.exported_at),
        "audit_url": f"{reverse('support_audit')}?{audit_query}",
        "retry_keys": record.retryable,
        "changed": [o for o in record.outcomes if o.status == "changed"],
    }
    if record.retryable:
        context["nonce"] = stores.nonce_issue(request.session, looked_up, f"clear:{record.id}")
    return render(request, "memory_ui/support/results.html", context)
