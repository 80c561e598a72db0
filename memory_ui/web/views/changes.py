"""Changing memory: add a note, clear one memory or everything.

Every flow works as plain form posts (PRG) and, with htmx, swaps fragments in place.
Every change goes through the primary source's store (`registry.memory_store()`), which
checks versions and audits.
Which memory a request is about comes from hidden `scope`/`agent` fields, resolved against
the user's own agents (unknown agent: 404; forged scope: 400).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from memory_ui.documents import parse_document
from memory_ui.history import versions_erase
from memory_ui.identity import Actor
from memory_ui.memory.receipts import memory_erasure, receipt_write
from memory_ui.models import ErasureReceipt
from memory_ui.sources.agent_memory import (
    AlreadyAdded,
    Loaded,
    Memory,
    MemoryChanged,
    Target,
    all_targets,
)
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_store
from memory_ui.web import forms
from memory_ui.web.access import (
    as_named,
    on_memory,
    user_actor,
    user_agents,
)
from memory_ui.web.errors import AgentsUnlisted
from memory_ui.web.htmx import (
    HtmxHttpRequest,
    into_change_panel,
    redirect_to,
    render_page,
    trigger,
)
from memory_ui.web.links import target_url
from memory_ui.web.screens import (
    agents_unavailable,
    changed,
    not_done,
)
from memory_ui.web.stores.claims import (
    submission_claim,
    submission_release,
    submission_unknown,
    submission_unsettled,
)
from memory_ui.web.stores.undo import (
    undo_forget_target,
)

# --- append ------------------------------------------------------------------------------


def _render_panel(
    request: HtmxHttpRequest, template: str, target: Target, *, status: int = 200, **context: Any
) -> HttpResponse:
    """A change form: inline in the memory page's #change-panel for htmx, else a page."""
    context = {"target": target, **context}
    return into_change_panel(
        request, render_page(request, template, "panel", context, status=status)
    )


def _append_unlisted(request: HtmxHttpRequest, unlisted: AgentsUnlisted) -> HttpResponse:
    """Without the agent list: on opening, as for any change; after a POST, the note panel
    again with what was typed."""
    if request.method == "GET":
        return agents_unavailable(request, unlisted)
    form, error = forms.AppendForm(request.POST), unlisted.error
    message = f"Nothing was added. {error.message}"
    return _append_panel(request, as_named(unlisted.form), form, error.portal_status, message)


@on_memory(_append_unlisted)
def append(request: HtmxHttpRequest, actor: Actor, target: Target) -> HttpResponse:
    """The note form (GET, or a POST it refused), or the note added at the end."""
    form = forms.AppendForm(request.POST if request.method == "POST" else None)
    if not form.is_valid():
        return _append_panel(request, target, form, 400 if form.errors else 200)
    data, owner = form.cleaned_data, actor.who.oid
    earlier = None
    if not submission_claim(owner, data["submission"]):
        # Sent before: settle an attempt that got no answer, else it was added already.
        earlier = submission_unsettled(owner, data["submission"])
        if earlier is None:
            messages.info(request, "That note was sent twice; it was added once.")
            return redirect_to(request, target_url(target))
    began = timezone.now()
    try:
        result = memory_store().append(
            actor, target, data["content"], data["reason"], earlier=earlier
        )
    except AlreadyAdded as exc:
        messages.success(
            request,
            f"Your note was already added to {target.name}: the earlier attempt went "
            "through, so it was not sent again.",
        )
        return _appended(request, target, exc.current)
    except SourceError as exc:
        if exc.outcome_unknown or earlier is not None:  # an attempt is still unsettled
            submission_unknown(owner, data["submission"], earlier or began)
        else:
            submission_release(owner, data["submission"])
        error = not_done("Nothing was added.", exc)
        return _append_panel(request, target, form, exc.portal_status, error)
    messages.success(request, f"Added your note to {target.name}.")
    return _appended(request, target, result)


def _append_panel(
    request: HtmxHttpRequest, target: Target, form: forms.AppendForm, status: int, error: str = ""
) -> HttpResponse:
    """The note form, again with what was typed and why it was not added."""
    if error:
        form.focus_alert()
    # The same key goes back: sending the form again settles this attempt first.
    submission = form.data.get("submission", "")
    return _render_panel(
        request,
        "memory_ui/append.html",
        target,
        status=status,
        form=form,
        error=error,
        submission=submission,
    )


def _appended(request: HtmxHttpRequest, target: Target, result: Memory) -> HttpResponse:
    """For htmx the memory as it is now, with the new note marked; else its page."""
    if not request.htmx:
        return redirect(target_url(target))
    entries = parse_document(result.content_markdown).entries
    return changed(request, target, result, added_entry=entries[-1].index if entries else None)


# --- clear ---------------------------------------------------------------------------


def _clear_panel(
    request: HtmxHttpRequest, target: Target, *, status: int = 200, **context: Any
) -> HttpResponse:
    """The confirmation: what clearing would remove, read fresh from CoreAPI."""
    loaded = memory_store().load(user_actor(request), target)
    if loaded.error is not None:
        context.setdefault("load_error", loaded.error)
        status = max(status, loaded.error.portal_status)
    return _render_panel(
        request,
        "memory_ui/clear.html",
        target,
        status=status,
        memory=loaded.memory,
        document=loaded.document,
        export_url=target_url(target, "export"),
        **context,
    )


@on_memory(agents_unavailable)
def clear(request: HtmxHttpRequest, actor: Actor, target: Target) -> HttpResponse:
    """The confirmation (GET), then the clear."""
    if request.method == "GET":
        return _clear_panel(request, target)
    form = forms.ClearForm(request.POST)
    if form.errors:
        return _clear_panel(request, target, status=400, error=forms.first_error(form))
    try:
        result = memory_store().clear(actor, target, form.cleaned_data["version"])
    except MemoryChanged:
        error = (
            "This memory changed since you opened this confirmation, so nothing was cleared. "
            "Check what it holds now, then confirm again."
        )
        return _clear_panel(request, target, status=409, error=error)
    except SourceError as exc:
        error = not_done("Nothing was cleared.", exc)
        return _clear_panel(request, target, status=exc.portal_status, error=error)
    undo_forget_target(request.session, target)
    messages.success(request, f"Cleared {target.name}.")
    if not request.htmx:
        return redirect(target_url(target))
    response = changed(request, target, result)
    return trigger(response, "memoryCleared", {"scope": target.scope, "agent": target.agent_name})


# --- clear everything ------------------------------------------------------------------


def _render_everything(
    request: HtmxHttpRequest, *, status: int = 200, **context: Any
) -> HttpResponse:
    context = {
        "phrase": forms.CLEAR_EVERYTHING_PHRASE,
        "export_url": reverse("export_everything"),
        **context,
    }
    return render_page(
        request, "memory_ui/clear_everything.html", "everything", context, status=status
    )


@require_http_methods(["GET", "POST"])
@login_required
def clear_everything(request: HtmxHttpRequest) -> HttpResponse:
    """Every memory the user has: their own and each agent's they can read."""
    form = forms.ClearEverythingForm(request.POST or None, keys=[])
    try:
        targets = all_targets(user_agents(request))
    except SourceError as exc:
        return _render_everything(request, status=exc.portal_status, load_error=exc)
    if request.method == "GET":
        return _render_everything(request, targets=targets, form=form)
    form = forms.ClearEverythingForm(request.POST, keys=[target.key for target in targets])
    if "scopes" in form.errors:  # a retry names the failed ones: each must be the user's
        raise BadRequest("Unknown memory scope.")
    if not form.is_valid():
        return _render_everything(request, status=400, targets=targets, form=form)
    chosen = [t for t in targets if t.key in form.cleaned_data["scopes"]] or targets
    actor, started_at = user_actor(request), timezone.now().isoformat()
    store = memory_store()
    before = store.load_many(actor, chosen)
    results = store.clear_many(actor, chosen)
    # Read back: a memory an agent wrote to right after its clear is not called cleared.
    read = store.load_many(actor, [result.target for result in results if result.error is None])
    erasure = memory_erasure(before, results, read, timezone.now().isoformat())
    # The earlier versions a History keeps are erased too. Not a tenant job's rows: they say
    # the person's legacy copies were moved, and without them a rerun of the move would bring
    # back into CoreAPI what was just cleared (a deletion request erases those copies too).
    versions_erase(actor.who.upn)
    receipt = receipt_write(
        actor.who,
        ErasureReceipt.Kind.CLEAR_EVERYTHING,
        erasure.rows,
        subject_upn=actor.who.upn,
        started_at=started_at,
    )
    return _cleared_everything(request, targets, results, erasure.left, receipt)


def _cleared_everything(
    request: HtmxHttpRequest,
    targets: list[Target],
    results: list[Loaded],
    left: list[str],
    receipt: ErasureReceipt,
) -> HttpResponse:
    for result in results:
        if result.error is None:
            undo_forget_target(request.session, result.target)
    failed = [result for result in results if result.error]
    status = failed[0].error.portal_status if failed and failed[0].error else 200
    if failed:
        messages.error(
            request, f"{len(failed)} of {len(results)} could not be cleared; you can retry them."
        )
    elif left:
        messages.warning(
            request,
            f"{len(left)} of {len(results)} held something again when read back; erase again.",
        )
        if status >= 500 and request.session.modified:
            # Django skips saving the session on a 5xx; the cleared ones' Undo copies
            # must still go.
            request.session.save()
    else:
        messages.success(request, "Cleared everything agents remembered about you.")
    response = _render_everything(
        request,
        status=status,
        targets=targets,
        results=results,
        failed=failed,
        left=left,
        again=[r.key for r in results if r.error or r.key in left],
        receipt=receipt,
    )
    if request.htmx and len(failed) < len(results):
        cleared = [result.key for result in results if not result.error]
        trigger(response, "memoryCleared", {"scopes": cleared})
    return response
