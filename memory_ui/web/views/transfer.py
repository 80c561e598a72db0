"""Export and import one memory: markdown downloads per memory, "Export everything" as a
zip, and importing markdown into one memory with a preview.

Importing one document is stateless: the preview carries the validated text back in the
confirmation form (a hidden textarea), and the confirmation validates it again. A replace
is checked against the version the preview showed, so a change made meanwhile answers 409
with the differences and the import still in the form.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.http import content_disposition_header
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from memory_ui.audit import Action
from memory_ui.documents import appended, entry_heading, neutralise_provenance
from memory_ui.documents.diffs import diff_lines
from memory_ui.documents.versions import Version
from memory_ui.memory import uploads
from memory_ui.memory.everything import others_export
from memory_ui.memory.exports import export_archive
from memory_ui.memory.uploads import ImportText
from memory_ui.sources.agent_memory import AlreadyAdded, Memory, MemoryChanged, Target
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_store
from memory_ui.web import forms
from memory_ui.web.access import signed_in, target_for, user_actor, user_agents
from memory_ui.web.downloads import download_began
from memory_ui.web.htmx import HtmxHttpRequest, render_page
from memory_ui.web.links import target_url
from memory_ui.web.screens import failure_page, not_done
from memory_ui.web.stores.claims import (
    submission_claim,
    submission_release,
    submission_unknown,
    submission_unsettled,
)


def _today() -> str:
    return timezone.now().astimezone(UTC).strftime("%Y-%m-%d")


# --- export ------------------------------------------------------------------------------


def _attachment(
    request: HtmxHttpRequest, response: HttpResponseBase, filename: str
) -> HttpResponseBase:
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return download_began(request, response)


@require_GET
@login_required
@never_cache
def export(request: HtmxHttpRequest, scope: str, agent_name: str = "") -> HttpResponseBase:
    """One memory as a .md file (combined: what the agent reads); the route names the
    scope."""
    back = reverse(f"memory_{scope}", args=[agent_name] if agent_name else [])
    try:
        target = target_for(request, scope, agent_name)
        text = memory_store().export(user_actor(request), target)
    except SourceError as exc:
        return failure_page(request, exc, back, "export")
    response = HttpResponse(text.encode("utf-8"), content_type="text/markdown; charset=utf-8")
    return _attachment(request, response, f"{target.download_stem}-{_today()}.md")


@require_GET
@login_required
@never_cache
def export_everything(request: HtmxHttpRequest) -> HttpResponseBase:
    """A zip of every document. All of them are fetched before the first byte is sent, so
    a CoreAPI failure is still an error page (and nothing half-done is downloaded)."""
    upn = signed_in(request).upn
    actor = user_actor(request)
    # Every other source's files too (<source>/<file>.md), read before the first byte and
    # at the same time as CoreAPI's; a source that cannot be reached in time is left out,
    # and the file and the page say so.
    try:
        stream, others = export_archive(
            actor, user_agents(request), upn, others=partial(others_export, actor)
        )
    except SourceError as exc:
        return failure_page(request, exc, reverse("dashboard"), "export")
    if others.message:
        messages.warning(request, others.message)  # shown by the next page
    response = StreamingHttpResponse(stream, content_type="application/zip")
    return _attachment(request, response, f"memory-export-{_today()}.zip")


# --- import one document ---------------------------------------------------------------


def _import_target(request: HtmxHttpRequest, agent_name: str | None) -> Target:
    """404 for an agent name that is not one of the user's (SourceError if unlisted)."""
    return target_for(request, "agent" if agent_name else "user", agent_name)


def _render_flow(
    request: HtmxHttpRequest, target: Target, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    urls = {
        page: target_url(target, route)
        for page, route in (
            ("form", "import"),
            ("preview", "import_preview"),
            ("confirm", "import_confirm"),
            ("backup", "export"),
            ("memory", "memory"),
        )
    }
    context = {
        "title": f"Import into {target.name}",
        "target": target,
        "urls": urls,
        "max_bytes": uploads.max_bytes(),
        **context,
    }
    return render_page(request, "memory_ui/import.html", "flow", context, status=status)


def _form(
    request: HtmxHttpRequest, target: Target, *, error: str = "", pasted: str = "", status: int
) -> HttpResponse:
    context = {"stage": "form", "error": error, "pasted": pasted}
    return _render_flow(request, target, context, status=status)


def _preview(
    request: HtmxHttpRequest,
    target: Target,
    imported: ImportText,
    current: Memory | None,
    version: str,
    *,
    mode: str = "append",
    status: int = 200,
    **context: Any,
) -> HttpResponse:
    context = {
        "stage": "preview",
        "imported": imported,
        "line_count": len(imported.text.splitlines()),
        "current": current,
        "current_bytes": len(current.content_markdown.encode()) if current else None,
        "version": version,
        "mode": mode if mode in ("append", "replace") else "append",
        **context,
    }
    if current is not None:
        now = current.content_markdown
        heading = entry_heading("Imported", timezone.now())
        added = neutralise_provenance(imported.text)  # as memory_store().import_append writes it
        context["append_diff"] = diff_lines(now, appended(now, heading, added))
        # Either is None when the texts are too large to compare; import.html says so.
        context["replace_diff"] = diff_lines(now, imported.text)
    return _render_flow(request, target, context, status=status)


@require_GET
@login_required
def import_form(request: HtmxHttpRequest, agent_name: str | None = None) -> HttpResponse:
    try:
        target = _import_target(request, agent_name)
    except SourceError as exc:
        return failure_page(request, exc, reverse("dashboard"), "import")
    return _form(request, target, status=200)


@require_POST
@login_required
def import_preview(request: HtmxHttpRequest, agent_name: str | None = None) -> HttpResponse:
    form = forms.ImportUploadForm(request.POST, request.FILES, request=request)
    pasted = form.data.get("pasted", "")
    try:
        target = _import_target(request, agent_name)
    except SourceError as exc:
        return failure_page(request, exc, reverse("dashboard"), "import", pasted)
    if not form.is_valid():
        error = forms.first_error(form)
        return _form(request, target, error=error, pasted=pasted, status=form.status)
    try:
        current = memory_store().read(user_actor(request), target)
    except SourceError as exc:
        return _form(request, target, error=exc.message, pasted=pasted, status=exc.portal_status)
    imported = form.cleaned_data["imported"]
    return _preview(request, target, imported, current, Version.of(current).token())


@require_POST
@login_required
def import_confirm(request: HtmxHttpRequest, agent_name: str | None = None) -> HttpResponse:
    form = forms.ImportConfirmForm(request.POST)
    text = form.data.get("text", "")
    try:
        target = _import_target(request, agent_name)
    except SourceError as exc:
        return failure_page(request, exc, reverse("dashboard"), "import", text)
    if "text" in form.errors:
        error = forms.first_error(form)
        return _form(request, target, error=error, pasted=text, status=form.status)
    if not form.is_valid():
        return _confirm_again(request, target, form, forms.first_error(form))
    owner, submission = signed_in(request).oid, form.cleaned_data["submission"]
    earlier = None
    if not submission_claim(owner, submission):
        # Sent before: settle an attempt that got no answer, else it was imported already.
        earlier = submission_unsettled(owner, submission)
        if earlier is None:
            messages.info(request, "That import was sent twice; it was imported once.")
            return redirect(target_url(target))
    return _import(request, target, form, earlier)


def _confirm_again(
    request: HtmxHttpRequest, target: Target, form: forms.ImportConfirmForm, error: str, status=400
) -> HttpResponse:
    """The preview again, with what the user chose and why it did not go ahead."""
    current = memory_store().load(user_actor(request), target).memory
    return _preview(
        request,
        target,
        form.cleaned_data["text"],
        current,
        form.data.get("version", ""),
        mode=form.data.get("mode", ""),
        error=error,
        status=status,
        submission=form.data.get("submission", ""),  # sent again, it settles this attempt
    )


def _import(
    request: HtmxHttpRequest,
    target: Target,
    form: forms.ImportConfirmForm,
    earlier: datetime | None = None,
) -> HttpResponse:
    imported: ImportText = form.cleaned_data["text"]
    mode, submission = form.cleaned_data["mode"], form.cleaned_data["submission"]
    actor, owner = user_actor(request), signed_in(request).oid
    began = timezone.now()
    try:
        if mode == "append":
            memory_store().import_append(actor, target, imported.text, earlier=earlier)
            done = "added at the end under an “Imported” heading"
        else:
            version = form.cleaned_data["version"]
            memory_store().replace(
                actor, target, imported.text, started_from=version, action=Action.IMPORT
            )
            done = "it replaced what was there"
    except MemoryChanged as changed:
        return _preview(
            request,
            target,
            imported,
            changed.current,
            Version.of(changed.current).token(),
            mode=mode,
            error=(
                "Your memory changed since the preview, so nothing was replaced. "
                "Below is how your import differs from your memory now; "
                "confirm again to replace it anyway."
            ),
            conflict=True,
            status=409,
        )
    except AlreadyAdded:
        messages.success(
            request,
            f"{imported.source} was already imported into {target.name}: the earlier attempt "
            "went through, so it was not sent again.",
        )
        return redirect(target_url(target))
    except SourceError as exc:
        if exc.outcome_unknown or earlier is not None:  # an attempt is still unsettled
            submission_unknown(owner, submission, earlier or began)
        else:
            submission_release(owner, submission)
        error = not_done("Nothing was imported.", exc)
        return _confirm_again(request, target, form, error, exc.portal_status)
    messages.success(request, f"Imported {imported.source} into {target.name}: {done}.")
    return redirect(target_url(target))
