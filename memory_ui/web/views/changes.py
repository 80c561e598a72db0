"""Changing memory: delete an entry or list item (with Undo), edit the whole document with
a live preview and conflict handling, add a note, clear one memory or everything.

Every flow works as plain form posts (PRG) and, with htmx, swaps fragments in place.
Every change goes through `memory_ui.memory.operations`, which checks versions and audits.
Which memory a request is about comes from hidden `scope`/`agent` fields, resolved against
the user's own agents (unknown agent: 404; forged scope: 400).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from memory_ui.audit import Action
from memory_ui.coreapi import CoreAPIError, Memory
from memory_ui.memory.documents import entry_label, parse_document, remove_entry, remove_lines
from memory_ui.memory.operations import (
    Loaded,
    MemoryChanged,
    NothingToChange,
    memory_append,
    memory_clear,
    memory_clear_many,
    memory_load,
    memory_replace,
    memory_rewrite,
)
from memory_ui.memory.targets import Target, all_targets
from memory_ui.web import forms
from memory_ui.web.access import as_named, form_target, signed_in, user_actor, user_agents
from memory_ui.web.errors import AgentsUnlisted, answers_unlisted
from memory_ui.web.htmx import (
    HtmxHttpRequest,
    into_change_panel,
    no_swap,
    redirect_to,
    render_fragment,
    render_page,
    trigger,
)
from memory_ui.web.links import target_url
from memory_ui.web.screens import memory_context, memory_page, not_done
from memory_ui.web.stores.claims import submission_claim
from memory_ui.web.stores.undo import (
    UNDO_SECONDS,
    undo_forget,
    undo_forget_target,
    undo_record,
    undo_remember,
)

# --- which memory ----------------------------------------------------------------------


def _agents_unavailable(request: HtmxHttpRequest, unlisted: AgentsUnlisted) -> HttpResponse:
    """The user's agents could not be listed, so no agent memory can be changed now."""
    form, error = unlisted.form, unlisted.error
    messages.error(request, f"Nothing was changed. {error.message}")
    if request.htmx:
        return no_swap(error.portal_status)
    return render(
        request,
        "memory_ui/memory.html",
        {"error": error, "title": "Your memory", "scope": form.data.get("scope")},
        status=error.portal_status,
    )


# --- the memory page after a change ----------------------------------------------------


def _page_now(
    request: HtmxHttpRequest, target: Target, *, status: int = 200, **extra: Any
) -> HttpResponse:
    """The memory page (for htmx its #memory-content) as CoreAPI has it now."""
    return memory_page(request, memory_load(user_actor(request), target), status=status, **extra)


def _changed(request: HtmxHttpRequest, target: Target, memory: Memory, **extra: Any):
    """For htmx: the updated #memory-content, and the change panel closed (out of band)."""
    context = {**memory_context(Loaded(target, memory)), **extra}
    return render_fragment(request, "memory_ui/memory_changed.html", context)


def _action_failed(request: HtmxHttpRequest, target: Target, exc: CoreAPIError) -> HttpResponse:
    """CoreAPI refused or failed a change: say so and leave the page as it was."""
    messages.error(request, not_done("Nothing was changed.", exc))
    if request.htmx:
        return no_swap(exc.portal_status)  # the toast is the whole answer
    return _page_now(request, target, status=exc.portal_status)


# --- delete an entry or a list item, and Undo ------------------------------------------


@dataclass(frozen=True)
class Removal:
    text: str  # the document without the removed part
    removed: str  # what was removed, to show or re-add after a failed Undo
    label: str  # a few words naming it, for the notice "Deleted “…”. Undo"


def _remove_entry(text: str, data: dict[str, Any]) -> Removal | None:
    entries = parse_document(text).entries
    index = data["index"]
    if index >= len(entries):
        return None
    entry = entries[index]
    label = entry_label(entry.reason or entry.body)
    return Removal(remove_entry(text, index), entry.body, label)


def _remove_list_item(text: str, data: dict[str, Any]) -> Removal | None:
    start, end = data["start"], data["end"]
    # Only whole list items as the page showed them; never an arbitrary range of lines.
    for item in parse_document(text).list_items:
        if (item.start_line, item.end_line) == (start, end):
            return Removal(remove_lines(text, start, end), item.text, entry_label(item.text))
    return None


def _delete(
    request: HtmxHttpRequest,
    form: forms.DeleteEntryForm | forms.DeleteLinesForm,
    remove: Callable[[str, dict[str, Any]], Removal | None],
    what: str,
    **shown: Any,
) -> HttpResponse:
    target = form_target(request, form)
    if form.errors:
        messages.error(request, f"Nothing was deleted. {forms.first_error(form)}")
        return _page_now(request, target, status=400, **shown)
    removals: list[Removal] = []

    def without(current: Memory) -> str | None:
        removal = remove(current.content_markdown, form.cleaned_data)
        if removal is None:
            return None
        removals.append(removal)
        return removal.text

    try:
        done = memory_rewrite(
            user_actor(request),
            target,
            without,
            started_from=form.cleaned_data["version"],
            action=Action.DELETE_ENTRY,
        )
    except MemoryChanged as exc:
        return _changed_meanwhile(request, target, exc.current, **shown)
    except NothingToChange as exc:
        messages.error(request, f"Nothing was deleted: that {what} does not exist.")
        return memory_page(request, Loaded(target, exc.current), status=400, **shown)
    except CoreAPIError as exc:
        return _action_failed(request, target, exc)
    return _deleted(request, target, done.before, done.after, removals[0], what, shown)


def _deleted(
    request: HtmxHttpRequest,
    target: Target,
    before: Memory,
    after: Memory,
    removal: Removal,
    what: str,
    shown: dict[str, Any],
) -> HttpResponse:
    token = undo_remember(
        request.session, target, before.content_markdown, after, removal.removed, removal.label
    )
    if token:
        messages.success(request, f"Deleted the {what}.")
    else:
        messages.success(request, f"Deleted the {what}. This memory is too large to keep for Undo.")
    if request.htmx:
        return memory_page(
            request, Loaded(target, after), undo_token=token, undo_label=removal.label, **shown
        )
    url = target_url(target)
    return redirect(f"{url}?{urlencode({'undo': token})}" if token else url)


def _changed_meanwhile(
    request: HtmxHttpRequest, target: Target, current: Memory, **shown: Any
) -> HttpResponse:
    messages.warning(
        request,
        "This memory changed since you opened it, so nothing was deleted. Here it is as it is now.",
    )
    return memory_page(request, Loaded(target, current), status=409, **shown)


@require_POST
@login_required
@answers_unlisted(_agents_unavailable)
def delete_entry(request: HtmxHttpRequest) -> HttpResponse:
    form = forms.DeleteEntryForm(request.POST)
    return _delete(request, form, _remove_entry, "entry")


@require_POST
@login_required
@answers_unlisted(_agents_unavailable)
def delete_list_item(request: HtmxHttpRequest) -> HttpResponse:
    form = forms.DeleteLinesForm(request.POST)
    return _delete(request, form, _remove_list_item, "item", items_open=True)


@require_POST
@login_required
@answers_unlisted(_agents_unavailable)
def undo(request: HtmxHttpRequest) -> HttpResponse:
    form = forms.UndoForm(request.POST)
    target = form_target(request, form)
    token = form.cleaned_data.get("token", "")
    record = undo_record(request.session, token, target)
    if record is None:
        messages.error(
            request,
            f"Undo is no longer available (it lasts {UNDO_SECONDS // 60} minutes); "
            "nothing was changed.",
        )
        return _page_now(request, target, status=410)
    try:
        result = memory_replace(
            user_actor(request),
            target,
            record.before,
            started_from=record.after,
            action=Action.UNDO,
        )
    except MemoryChanged as exc:
        messages.warning(
            request,
            "This memory changed after the delete, so undoing it would lose that change. "
            "Nothing was changed; you can add what you deleted back as a new note.",
        )
        return memory_page(
            request, Loaded(target, exc.current), status=409, undo_conflict=record.removed
        )
    except CoreAPIError as exc:
        return _action_failed(request, target, exc)
    undo_forget(request.session, token)
    messages.success(request, "Restored what you deleted.")
    if request.htmx:
        return memory_page(request, Loaded(target, result))
    return redirect(target_url(target))


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
        return _agents_unavailable(request, unlisted)
    form, error = unlisted.form, unlisted.error
    assert isinstance(form, forms.AppendForm)
    message = f"Nothing was added. {error.message}"
    return _append_panel(request, as_named(form), form, error.portal_status, message)


@require_http_methods(["GET", "POST"])
@login_required
@answers_unlisted(_append_unlisted)
def append(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "GET":
        form = forms.TargetForm(request.GET)
        target = form_target(request, form)
        return _render_panel(request, "memory_ui/append.html", target)
    form = forms.AppendForm(request.POST)
    target = form_target(request, form)
    if form.errors:
        return _append_panel(request, target, form, 400)
    if not submission_claim(signed_in(request).oid, form.cleaned_data["submission"]):
        messages.info(request, "That note was sent twice; it was added once.")
        return redirect_to(request, target_url(target))
    try:
        data = form.cleaned_data
        result = memory_append(user_actor(request), target, data["content"], data["reason"])
    except CoreAPIError as exc:
        error = not_done("Nothing was added.", exc)
        return _append_panel(request, target, form, exc.portal_status, error)
    messages.success(request, f"Added your note to {target.name}.")
    if request.htmx:
        entries = parse_document(result.content_markdown).entries
        return _changed(request, target, result, added_entry=entries[-1].index if entries else None)
    return redirect(target_url(target))


def _append_panel(
    request: HtmxHttpRequest, target: Target, form: forms.AppendForm, status: int, error: str = ""
) -> HttpResponse:
    """The note form again, with what was typed and why it was not added."""
    context = {"form": form, "error": error, **form.typed()}
    return _render_panel(request, "memory_ui/append.html", target, status=status, **context)


# --- clear ---------------------------------------------------------------------------


def _clear_panel(
    request: HtmxHttpRequest, target: Target, *, status: int = 200, **context: Any
) -> HttpResponse:
    """The confirmation: what clearing would remove, read fresh from CoreAPI."""
    loaded = memory_load(user_actor(request), target)
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


@require_http_methods(["GET", "POST"])
@login_required
@answers_unlisted(_agents_unavailable)
def clear(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "GET":
        form = forms.TargetForm(request.GET)
    else:
        form = forms.ClearForm(request.POST)
    target = form_target(request, form)
    if request.method == "GET":
        return _clear_panel(request, target)
    if form.errors:
        return _clear_panel(request, target, status=400, error=forms.first_error(form))
    try:
        result = memory_clear(user_actor(request), target, form.cleaned_data["version"])
    except MemoryChanged:
        error = (
            "This memory changed since you opened this confirmation, so nothing was cleared. "
            "Check what it holds now, then confirm again."
        )
        return _clear_panel(request, target, status=409, error=error)
    except CoreAPIError as exc:
        error = not_done("Nothing was cleared.", exc)
        return _clear_panel(request, target, status=exc.portal_status, error=error)
    undo_forget_target(request.session, target)
    messages.success(request, f"Cleared {target.name}.")
    if not request.htmx:
        return redirect(target_url(target))
    response = _changed(request, target, result)
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
    except CoreAPIError as exc:
        typed = form.data.get("phrase", "")
        return _render_everything(
            request, status=exc.portal_status, load_error=exc, typed_phrase=typed
        )
    if request.method == "GET":
        return _render_everything(request, targets=targets)
    form = forms.ClearEverythingForm(request.POST, keys=[target.key for target in targets])
    if "scopes" in form.errors:  # a retry names the failed ones: each must be the user's
        raise BadRequest("Unknown memory scope.")
    if not form.is_valid():
        typed = form.data.get("phrase", "")
        return _render_everything(
            request, status=400, targets=targets, form=form, typed_phrase=typed
        )
    chosen = [t for t in targets if t.key in form.cleaned_data["scopes"]] or targets
    return _cleared_everything(request, targets, memory_clear_many(user_actor(request), chosen))


def _cleared_everything(
    request: HtmxHttpRequest, targets: list[Target], results: list[Loaded]
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
        if status >= 500 and request.session.modified:
            # Django skips saving the session on a 5xx; the cleared ones' Undo copies
            # must still go.
            request.session.save()
    else:
        messages.success(request, "Cleared everything agents remembered about you.")
    response = _render_everything(
        request, status=status, targets=targets, results=results, failed=failed
    )
    if request.htmx and len(failed) < len(results):
        cleared = [result.key for result in results if not result.error]
        trigger(response, "memoryCleared", {"scopes": cleared})
    return response
