"""Support staff: a deletion request.

A deletion request takes the reason, the ticket and the memories once (every memory, or
some), then goes in two steps: the export (a .zip of those memories, handed to the staff
member) and the clear (the user's UPN typed again), which clears each memory only if it is
still the version the export handed over. Its result page gives the ticket, the time, the
sha256 of each memory before and after, and a link to its audit rows.

Every view checks the support role (`access.support_required`) and goes through
`support_pages.support_door` (a look-up of that user in this session first); each change
leaves an audit event (through `memory.operations`), and each confirmation is good once,
for the user and the action it was issued for.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from memory_ui.documents import count_entries
from memory_ui.documents.versions import Version
from memory_ui.history import versions_erase
from memory_ui.identity import Actor
from memory_ui.jobs import progress_erase
from memory_ui.memory.archive import ExportedDocument, build_manifest, zip_stream
from memory_ui.memory.everything import (
    OthersExport,
    others_erase,
    others_export,
    others_notes,
    others_plan,
)
from memory_ui.memory.receipts import receipt_write
from memory_ui.models import ErasureReceipt
from memory_ui.sources.agent_memory import Loaded, Target
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_store
from memory_ui.web.access import support_actor, support_required
from memory_ui.web.downloads import download_began
from memory_ui.web.forms.support import EVERY_MEMORY, ClearRequestForm, DeletionRequestForm
from memory_ui.web.stores.support import (
    DeletionRequest,
    Exported,
    nonce_issue,
    nonce_spend,
    request_get,
    request_save,
    request_start,
)
from memory_ui.web.support_clearing import clear_one, read_back
from memory_ui.web.support_pages import LookedUp, overview, support_door, user_targets

REQUEST_PAGE = "memory_ui/support/request.html"


@require_POST
@support_required
@support_door
def support_request_start(request: HttpRequest, user: LookedUp) -> HttpResponse:
    """Reason, ticket and memories, once; then the request's own page (export, clear)."""
    upn = user.upn
    actor = support_actor(request, upn)
    targets = user_targets(actor)
    form = DeletionRequestForm(request.POST, scope_choices=[(t.key, t.label) for t in targets])
    if not form.spend_nonce(request.session, upn=upn, action="request"):
        # The overview again, with what was typed and a fresh confirmation.
        return overview(request, user, actor, targets, form, 409 if form.replayed else 400)
    data = form.cleaned_data
    started = request_start(
        request.session,
        upn=upn,
        reason=data["reason"],
        ticket=data["ticket"],
        keys=data["scopes"],
        everything=EVERY_MEMORY in form.data.getlist("scopes"),
        when=timezone.now().isoformat(),
    )
    return redirect("support_request", subject=user.subject, request_id=started.id)


@dataclass
class Handling:
    """A deletion request being handled: for whom, the session's record of it, the actor
    (with its reason and ticket) and the chosen memories the user still has."""

    user: LookedUp
    record: DeletionRequest
    actor: Actor
    targets: list[Target]

    @property
    def upn(self) -> str:
        return self.user.upn

    @property
    def gone(self) -> list[str]:
        """Chosen memories CoreAPI no longer lists for the user (an agent removed since)."""
        present = {t.key for t in self.targets}
        return [key for key in self.record.keys if key not in present]


HandlingView = Callable[[HttpRequest, Handling], HttpResponse]


def _handling(view: HandlingView) -> Callable[..., HttpResponse]:
    """The view runs for a deletion request of this session (for a user the door let
    through), with the user's memories listed now."""

    @support_door
    @wraps(view)
    def wrapper(request: HttpRequest, user: LookedUp, request_id: str) -> HttpResponse:
        looked_up = user.upn
        record = request_get(request.session, looked_up, request_id)
        if record is None:
            messages.warning(
                request,
                "That deletion request is not open in this session; nothing was done. "
                "Start it again here.",
            )
            return redirect("support_user", subject=user.subject)
        actor = support_actor(request, looked_up, record.reason, record.ticket)
        targets = user_targets(actor)
        chosen = [t for t in targets if t.key in record.keys]
        return view(request, Handling(user, record, actor, chosen))

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
    loaded = memory_store().load_many(handling.actor, handling.targets)
    # A request for every memory covers the other systems too: shown before the clear.
    everything = record.everything
    context = {
        "upn": handling.upn,
        "subject": handling.user.subject,
        "handling": record,
        "rows": [RequestRow(item, record.exported.get(item.key)) for item in loaded],
        "gone": handling.gone,
        "problem": problem,
        "clear_form": clear_form
        or ClearRequestForm(upn=handling.upn, keys=[t.key for t in handling.targets]),
        "exported_at": _when(record.exported_at),
        "clear_nonce": nonce_issue(request.session, handling.upn, f"clear:{record.id}"),
        "other_systems": others_plan(handling.actor) if everything else [],
        "other_stores": " ".join(others_notes()),
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
    loaded = memory_store().load_many(actor, handling.targets)
    failed = next((item for item in loaded if item.error), None)
    try:
        if failed is not None and failed.error is not None:
            raise failed.error
        texts = memory_store().export_many(actor, handling.targets)
    except SourceError as exc:
        problem = f"Nothing was exported: {exc.message}"
        return _request_page(request, handling, status=exc.portal_status, problem=problem)
    memories = [item.memory for item in loaded if item.memory is not None]  # every read worked
    documents = [
        ExportedDocument(target, text, memory.updated_on)
        for target, text, memory in zip(handling.targets, texts, memories, strict=True)
    ]
    exported = {
        target.key: Exported(
            Version.of(memory).token(),
            len(memory.content_markdown.encode()),
            count_entries(memory.content_markdown),
        )
        for target, memory in zip(handling.targets, memories, strict=True)
    }
    now = timezone.now()
    record.exported, record.exported_at = exported, now.isoformat()
    # A request for every memory covers the other sources too (read before the first byte;
    # the versions handed over are what their erasure must still find).
    others = others_export(actor) if record.everything else OthersExport()
    record.others_exported = others.exported
    request_save(request.session, record)
    if others.message:
        messages.warning(request, others.message)
    manifest = build_manifest(documents, handling.upn, now, others.files, others.missing)
    stream = zip_stream(documents, manifest, now, others.files)
    response = StreamingHttpResponse(stream, content_type="application/zip")
    name = re.sub(r"[^A-Za-z0-9._-]", "_", f"memory-{handling.upn}-{record.ticket}")
    response["Content-Disposition"] = f'attachment; filename="{name}-{now:%Y-%m-%d}.zip"'
    return download_began(request, response)


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
    chosen = [target for target in handling.targets if target.key in keys]
    outcomes = [clear_one(handling.actor, target, record.exported[target.key]) for target in chosen]
    outcomes = read_back(handling.actor, chosen, outcomes)
    record.record_outcomes(outcomes, timezone.now().isoformat())
    if record.everything:
        record.other_sources = others_erase(handling.actor, record.others_exported)
    return _finished(request, handling)


def _finished(request: HttpRequest, handling: Handling) -> HttpResponse:
    """A clear (or an erase again) done: its signed receipt, then the result page."""
    record = handling.record
    # The earlier versions a History keeps, and jobs' rows naming the person, go too.
    versions_erase(handling.upn)
    progress_erase(handling.upn)
    receipt = receipt_write(
        handling.actor.who,
        ErasureReceipt.Kind.DELETION_REQUEST,
        record.receipt_rows,
        subject_upn=handling.upn,
        started_at=record.started_at,
        ticket=record.ticket,
    )
    record.receipt_id = str(receipt.id)
    request_save(request.session, record)
    return redirect("support_request_result", subject=handling.user.subject, request_id=record.id)


@require_POST
@support_required
@_handling
def support_request_erase_again(request: HttpRequest, handling: Handling) -> HttpResponse:
    """What a read-back found left, cleared again: each memory an agent wrote to after its
    clear (only while it is still the version that read found), and in the other systems
    what the export handed over and is still there. Read back again, with a new receipt."""
    record = handling.record
    nonce = request.POST.get("nonce", "")
    if not nonce_spend(request.session, nonce, handling.upn, f"clear:{record.id}"):
        messages.warning(request, "That form was used already; nothing was erased again.")
        return redirect(
            "support_request_result", subject=handling.user.subject, request_id=record.id
        )
    left = {o.key: o for o in record.outcomes if o.status == "left"}
    chosen = [target for target in handling.targets if target.key in left]
    outcomes = []
    for target in chosen:
        was = left[target.key]
        found = Exported(was.version_after, was.bytes_after or 0, was.entries_after)
        again = clear_one(handling.actor, target, found)
        # The receipt's "before" stays what the export handed over.
        before = {f: getattr(was, f) for f in ("bytes_before", "sha256_before", "entries_before")}
        outcomes.append(replace(again, **before))
    record.record_outcomes(read_back(handling.actor, chosen, outcomes), timezone.now().isoformat())
    if record.everything and record.others_left:
        record.other_sources = others_erase(handling.actor, record.others_exported)
    return _finished(request, handling)


@require_GET
@support_required
@support_door
def support_request_result(request: HttpRequest, user: LookedUp, request_id: str) -> HttpResponse:
    """What the clear did: a page of its own, so reloading it or coming back changes
    nothing. It needs no CoreAPI call: the session kept each memory's outcome."""
    looked_up = user.upn
    record = request_get(request.session, looked_up, request_id)
    if record is None or not record.cleared_at:
        return redirect("support_user", subject=user.subject)
    # The audit trail filtered by the same opaque id, never the UPN (support_audit).
    audit_query = urlencode({"subject": user.subject, "ticket": record.ticket})
    context: dict[str, Any] = {
        "upn": looked_up,
        "subject": user.subject,
        "handling": record,
        "cleared_at": _when(record.cleared_at),
        "exported_at": _when(record.exported_at),
        "audit_url": f"{reverse('support_audit')}?{audit_query}",
        "receipt_id": record.receipt_id,
        "retry_keys": record.retryable,
        "changed": [o for o in record.outcomes if o.status == "changed"],
        "erase_again": bool(record.left) or record.others_left,
        "other_stores": " ".join(others_notes()) if record.everything else "",
    }
    if record.retryable or record.left or record.others_left:
        context["nonce"] = nonce_issue(request.session, looked_up, f"clear:{record.id}")
    return render(request, "memory_ui/support/results.html", context)
