"""Editing a whole memory as markdown: a live preview, a version check before saving,
and after a conflict the choice to re-apply the draft onto the new version (a line
three-way merge) or to overwrite deliberately."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import fields as dataclass_fields

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from memory_ui.documents import content_hash
from memory_ui.documents.diffs import DiffLine, diff_lines, merge_changes
from memory_ui.documents.versions import Version
from memory_ui.identity import Actor
from memory_ui.sources.agent_memory import MemoryChanged, Target
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_store
from memory_ui.web import forms
from memory_ui.web.access import as_named, on_memory, signed_in
from memory_ui.web.errors import AgentsUnlisted
from memory_ui.web.htmx import HtmxHttpRequest, redirect_to, render_page
from memory_ui.web.links import target_url
from memory_ui.web.screens import not_done, saved_notices
from memory_ui.web.stores.claims import preview_turn


@dataclass
class EditPage:
    """What edit.html shows of one memory: the draft (started from `base`, stored at
    `version`; `current_version` once a conflict showed a newer one) and at most one of:
    why the memory could not be loaded, why nothing was saved (`error`, with the `form`'s
    field errors), a conflict and its `diff`, a `notice` after re-applying, or that it is
    too large (`too_large` bytes) to edit here."""

    target: Target
    draft: str = ""
    base: str = ""
    version: str = ""
    current_version: str = ""
    form: forms.EditForm | None = None
    load_error: SourceError | None = None
    error: str = ""
    conflict: bool = False
    diff: list[DiffLine] | None = None
    notice: str = ""
    too_large: int | None = None

    def context(self) -> dict[str, object]:
        # The template reads the fields by name; the preview starts as the draft, and the
        # textarea shows the form as posted (with its errors) or else the draft.
        fields = {field.name: getattr(self, field.name) for field in dataclass_fields(self)}
        form = (
            self.form if self.form is not None else forms.EditForm(initial={"content": self.draft})
        )
        return {
            **fields,
            "form": form,
            "preview": self.draft,
            "memory_url": target_url(self.target),
        }


def _render_edit(request: HtmxHttpRequest, page: EditPage, *, status: int = 200) -> HttpResponse:
    return render_page(request, "memory_ui/edit.html", "editor", page.context(), status=status)


def _edit_unlisted(request: HtmxHttpRequest, unlisted: AgentsUnlisted) -> HttpResponse:
    """Without the agent list: the editor for the memory as the request named it, with
    what was typed (after a POST) and why nothing was saved."""
    target, error = as_named(unlisted.form), unlisted.error
    if request.method == "GET":
        return _render_edit(request, EditPage(target, load_error=error), status=error.portal_status)
    typed = forms.EditForm(request.POST).typed()
    page = EditPage(target, error=f"Nothing was saved. {error.message}", **typed)
    return _render_edit(request, page, status=error.portal_status)


@on_memory(_edit_unlisted)
def edit(request: HtmxHttpRequest, actor: Actor, target: Target) -> HttpResponse:
    """The editor (GET), then a preview, a save, or after a conflict a re-apply or an
    overwrite."""
    if request.method == "GET":
        return _edit_start(request, actor, target)
    form = forms.EditForm(request.POST)
    # Whatever happens below, what the user typed goes back to them as they typed it.
    typed = form.typed()
    if form.errors:
        error = f"Nothing was saved. {forms.first_error(form)}"
        return _render_edit(request, EditPage(target, error=error, form=form, **typed), status=400)
    if form.cleaned_data["action"] == "preview":
        return _render_edit(request, EditPage(target, **typed))
    if form.cleaned_data["action"] == "reapply":
        return _edit_reapply(request, actor, target, form)
    return _edit_save(request, actor, target, form)


def _edit_save(
    request: HtmxHttpRequest, actor: Actor, target: Target, form: forms.EditForm
) -> HttpResponse:
    data, typed = form.cleaned_data, form.typed()
    started_from = data["current_version"] if data["action"] == "overwrite" else data["version"]
    try:
        done = memory_store().rewrite(
            actor,
            target,
            lambda _: data["content"],
            started_from=started_from,
            # Overwriting is deliberate: only the version shown is replaced, nothing newer.
            keep_arrivals=data["action"] == "save",
        )
    except MemoryChanged as exc:
        typed = {**typed, "current_version": Version.of(exc.current).token()}
        diff = diff_lines(exc.current.content_markdown, data["content"])
        return _render_edit(
            request, EditPage(target, conflict=True, diff=diff, **typed), status=409
        )
    except SourceError as exc:
        error = not_done("Nothing was saved.", exc)
        return _render_edit(
            request, EditPage(target, error=error, **typed), status=exc.portal_status
        )
    if data["content"].strip():
        saved_notices(request, done, f"Saved {target.name}.")
    else:
        saved_notices(request, done, f"Saved: {target.name} is now empty.")
    return redirect_to(request, target_url(target))


def _edit_start(request: HtmxHttpRequest, actor: Actor, target: Target) -> HttpResponse:
    try:
        memory = memory_store().read(actor, target)
    except SourceError as exc:
        return _render_edit(request, EditPage(target, load_error=exc), status=exc.portal_status)
    text = memory.content_markdown
    if not memory_store().fits_one_write(text):
        # Saving could only fail (CoreAPI refuses the body): say so before any typing.
        size = len(text.encode())
        return _render_edit(request, EditPage(target, too_large=size), status=413)
    return _render_edit(
        request, EditPage(target, draft=text, base=text, version=Version.of(memory).token())
    )


def _edit_reapply(
    request: HtmxHttpRequest, actor: Actor, target: Target, form: forms.EditForm
) -> HttpResponse:
    """Start again from what is stored now, with the user's changes applied to it when
    they don't touch the lines that changed meanwhile; otherwise with their draft as is."""
    typed = form.typed()
    try:
        current = memory_store().read(actor, target)
    except SourceError as exc:
        return _render_edit(
            request, EditPage(target, error=exc.message, **typed), status=exc.portal_status
        )
    data = form.cleaned_data
    draft, base, theirs = data["content"], data["base"], current.content_markdown
    merged = None
    if content_hash(base) == data["version"].sha256:
        merged = merge_changes(base, theirs, draft)
    if merged is not None:
        notice = "Your changes were re-applied onto the new version. Check the result, then save."
    else:
        notice = (
            "Your changes and the new version touch the same lines, so they could not be "
            "combined automatically. Your draft is kept as it was: compare it with the saved "
            "version below, reconcile the two, then save."
        )
    result = draft if merged is None else merged
    version = Version.of(current).token()
    diff = diff_lines(theirs, result)
    page = EditPage(target, draft=result, base=theirs, version=version, notice=notice, diff=diff)
    return _render_edit(request, page)


@require_POST
@login_required
def edit_preview(request: HtmxHttpRequest) -> HttpResponse:
    """The live preview: the draft rendered by the same sanitizer as the memory page."""
    form = forms.PreviewForm(request.POST)
    if not form.is_valid():
        context = {"preview_error": forms.first_error(form)}
        return render(request, "memory_ui/edit.html#preview", context, status=400)
    # One preview per person at a time: typing fast, or many tabs, cannot queue up renders.
    with preview_turn(signed_in(request).oid) as turn:
        if not turn:
            busy = "Still rendering your previous preview; it will update in a moment."
            context = {"preview_busy": busy}
            return render(request, "memory_ui/edit.html#preview", context, status=429)
        context = {"preview": form.cleaned_data["content"]}
        return render(request, "memory_ui/edit.html#preview", context)
