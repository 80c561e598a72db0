"""Changing memory: delete an entry or list item (with Undo), edit the whole document with
a live preview and conflict handling, add a note, clear one memory or everything.

Every flow works as plain form posts (PRG) and, with htmx, swaps fragments in place.
Every change goes through `memory_ui.operations`, which checks versions and audits.
Which memory a request is about comes from hidden `scope`/`agent` fields, resolved against
the user's own agents by `forms.TargetForm` (unknown agent: 404; forged scope: 400).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.forms import Form
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, path, reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, reswap, retarget, trigger_client_event

from memory_ui import forms
from memory_ui.access import (
    HtmxHttpRequest,
    error_status,
    render_page,
    user_actor,
    user_agents,
)
from memory_ui.audit import Action
from memory_ui.coreapi import CoreAPIError, Memory
from memory_ui.diffs import diff_lines, merge_changes
from memory_ui.documents import Document, content_hash, parse_document, remove_entry, remove_lines
from memory_ui.operations import (
    MemoryChanged,
    ScopeResult,
    Target,
    Version,
    memory_append,
    memory_clear,
    memory_read,
    memory_replace,
)

# Undo keeps the whole document as it was before a delete in the session: briefly, for a
# few deletes at a time, and only for documents of a reasonable size.
UNDO_SESSION_KEY = "memory_undo"
UNDO_SECONDS = 15 * 60
UNDO_MAX_BYTES = 256 * 1024
UNDO_MAX_RECORDS = 5


# --- which memory ----------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """Which memory a page is about, as templates name and link it."""

    scope: str
    agent_name: str
    name: str  # "your shared memory", "Travel Planner's memory"
    url: str  # its memory page

    @classmethod
    def of(cls, target: Target) -> Place:
        if target.agent is None:
            return cls("user", "", "your shared memory", reverse("user_memory"))
        return cls(
            "agent",
            target.agent.name,
            f"{target.agent.display_name}'s memory",
            reverse("agent_memory", args=[target.agent.name]),
        )

    @classmethod
    def unresolved(cls, scope: str, agent_name: str) -> Place:
        """When the user's agents can't be listed: enough to re-render a form as posted."""
        try:
            url = reverse("agent_memory", args=[agent_name]) if agent_name else ""
        except NoReverseMatch:
            url = ""
        return cls(
            scope, agent_name, agent_name or "your shared memory", url or reverse("user_memory")
        )


def _resolve(form: forms.TargetForm) -> Target | None:
    """The form's target; None when the agent list could not be loaded (see
    `form.coreapi_error`). A forged scope is a 400; an agent that isn't the user's a 404."""
    form.is_valid()
    if form.target is None and form.coreapi_error is None:
        raise BadRequest("Unknown memory scope.")
    return form.target


def _export_url(target: Target) -> str:
    """The download of this memory, offered before it is cleared."""
    if target.agent:
        return reverse("export_agent", args=[target.agent.name])
    return reverse("export_user")


def _first_error(form: Form) -> str:
    for errors in form.errors.values():
        return str(errors[0])
    return "Check the form and try again."


# --- the memory page after a change ----------------------------------------------------


def _memory_context(
    target: Target, memory: Memory | None, error: CoreAPIError | None = None
) -> dict[str, Any]:
    place = Place.of(target)
    title = (
        f"What {target.agent.display_name} remembers"
        if target.agent
        else "What all agents remember about you"
    )
    return {
        "scope": target.scope,
        "agent": target.agent,
        "title": title,
        "memory": memory,
        "document": parse_document(memory.content_markdown) if memory else None,
        "error": error,
        "view": "rendered",
        "memory_url": place.url,
        "place": place,
    }


def _memory_response(
    request: HtmxHttpRequest,
    target: Target,
    *,
    memory: Memory | None = None,
    status: int = 200,
    **extra: Any,
) -> HttpResponse:
    """The memory page (or, for htmx, its #memory-content fragment) as it is now."""
    error = None
    if memory is None:
        try:
            memory = memory_read(user_actor(request), target)
        except CoreAPIError as exc:
            error = exc
    context = {**_memory_context(target, memory, error), **extra}
    return render_page(request, "memory_ui/memory.html", "content", context, status=status)


def _changed_response(
    request: HtmxHttpRequest, target: Target, memory: Memory, **extra: Any
) -> HttpResponse:
    """For htmx: the updated #memory-content, and the change panel closed (out of band)."""
    response = render(
        request,
        "memory_ui/_memory_actions.html#changed",
        {**_memory_context(target, memory), **extra},
    )
    patch_vary_headers(response, ["HX-Request"])
    return response


def _action_failed(request: HtmxHttpRequest, target: Target, exc: CoreAPIError) -> HttpResponse:
    """CoreAPI refused or failed a change: say so and leave the page as it was."""
    messages.error(request, f"Nothing was changed. {exc.message}")
    if request.htmx:
        # No swap: the toast (added by the messages middleware) is the whole answer.
        return reswap(HttpResponse(status=error_status(exc)), "none")
    return _memory_response(request, target, status=error_status(exc))


# --- delete an entry or a list item, and Undo ------------------------------------------


@dataclass(frozen=True)
class Removal:
    text: str  # the document without the removed part
    removed: str  # what was removed, to show or re-add after a failed Undo


def _remove_entry(document: Document, form: forms.DeleteEntryForm) -> Removal | None:
    index = form.cleaned_data["index"]
    if index >= len(document.entries):
        return None
    return Removal(remove_entry(document.text, index), document.entries[index].body)


def _remove_list_item(document: Document, form: forms.DeleteLinesForm) -> Removal | None:
    start, end = form.cleaned_data["start"], form.cleaned_data["end"]
    # Only whole list items as the page showed them; never an arbitrary range of lines.
    for item in document.list_items:
        if (item.start_line, item.end_line) == (start, end):
            return Removal(remove_lines(document.text, start, end), item.text)
    return None


def _delete[F: forms.TargetForm](
    request: HtmxHttpRequest,
    form: F,
    remove: Callable[[Document, F], Removal | None],
    what: str,
    **shown: Any,
) -> HttpResponse:
    target = _resolve(form)
    if target is None:
        return _agents_unavailable(request, form)
    if form.errors:
        messages.error(request, f"Nothing was deleted. {_first_error(form)}")
        return _memory_response(request, target, status=400, **shown)
    version: Version = form.cleaned_data["version"]
    actor = user_actor(request)
    try:
        current = memory_read(actor, target)
    except CoreAPIError as exc:
        return _action_failed(request, target, exc)
    if Version.of(current) != version:
        return _changed_meanwhile(request, target, current, **shown)
    removal = remove(parse_document(current.content_markdown), form)
    if removal is None:
        messages.error(request, f"Nothing was deleted: that {what} does not exist.")
        return _memory_response(request, target, memory=current, status=400, **shown)
    try:
        result = memory_replace(
            actor, target, removal.text, started_from=version, action=Action.DELETE_ENTRY
        )
    except MemoryChanged as exc:
        return _changed_meanwhile(request, target, exc.current, **shown)
    except CoreAPIError as exc:
        return _action_failed(request, target, exc)

    token = _undo_remember(request, target, current.content_markdown, result, removal.removed)
    if token:
        messages.success(request, f"Deleted the {what}.")
    else:
        messages.success(request, f"Deleted the {what}. This memory is too large to keep for Undo.")
    if request.htmx:
        return _memory_response(request, target, memory=result, undo_token=token, **shown)
    url = Place.of(target).url
    return redirect(f"{url}?{urlencode({'undo': token})}" if token else url)


def _changed_meanwhile(
    request: HtmxHttpRequest, target: Target, current: Memory, **shown: Any
) -> HttpResponse:
    messages.warning(
        request,
        "This memory changed since you opened it, so nothing was deleted. Here it is as it is now.",
    )
    return _memory_response(request, target, memory=current, status=409, **shown)


@require_POST
@login_required
def delete_entry(request: HtmxHttpRequest) -> HttpResponse:
    form = forms.DeleteEntryForm(request.POST, request=request)
    return _delete(request, form, _remove_entry, "entry")


@require_POST
@login_required
def delete_list_item(request: HtmxHttpRequest) -> HttpResponse:
    form = forms.DeleteLinesForm(request.POST, request=request)
    return _delete(request, form, _remove_list_item, "item", items_open=True)


def _undo_records(request: HtmxHttpRequest) -> dict[str, dict[str, Any]]:
    now = time.time()
    records = request.session.get(UNDO_SESSION_KEY, {})
    return {token: r for token, r in records.items() if r["expires"] > now}


def _undo_remember(
    request: HtmxHttpRequest, target: Target, before: str, after: Memory, removed: str
) -> str | None:
    """Keep what Undo needs; the token for its form, or None when the document is too big."""
    if len(before.encode()) > UNDO_MAX_BYTES:
        return None
    records = _undo_records(request)
    newest = sorted(records.items(), key=lambda item: item[1]["expires"])[-(UNDO_MAX_RECORDS - 1) :]
    token = secrets.token_urlsafe(16)
    request.session[UNDO_SESSION_KEY] = {
        **dict(newest),
        token: {
            "scope": target.scope,
            "agent": target.agent.name if target.agent else "",
            "before": before,
            # Undo applies only while the document is exactly as this delete left it.
            "after": Version.of(after).token(),
            "removed": removed,
            "expires": time.time() + UNDO_SECONDS,
        },
    }
    return token


def _undo_forget(request: HtmxHttpRequest, token: str) -> None:
    records = _undo_records(request)
    records.pop(token, None)
    request.session[UNDO_SESSION_KEY] = records


def _undo_forget_target(request: HtmxHttpRequest, target: Target) -> None:
    """A cleared memory keeps no copies for Undo: clearing means it is gone."""
    where = (target.scope, target.agent.name if target.agent else "")
    records = _undo_records(request)
    request.session[UNDO_SESSION_KEY] = {
        token: r for token, r in records.items() if (r["scope"], r["agent"]) != where
    }


@require_POST
@login_required
def undo(request: HtmxHttpRequest) -> HttpResponse:
    form = forms.UndoForm(request.POST, request=request)
    target = _resolve(form)
    if target is None:
        return _agents_unavailable(request, form)
    record = _undo_records(request).get(form.cleaned_data.get("token", ""))
    place = Place.of(target)
    if record is None or (record["scope"], record["agent"]) != (place.scope, place.agent_name):
        messages.error(
            request,
            f"Undo is no longer available (it lasts {UNDO_SECONDS // 60} minutes); "
            "nothing was changed.",
        )
        return _memory_response(request, target, status=410)
    started_from = Version.parse(record["after"])
    try:
        result = memory_replace(
            user_actor(request),
            target,
            record["before"],
            started_from=started_from,
            action=Action.EDIT,
        )
    except MemoryChanged as exc:
        messages.warning(
            request,
            "This memory changed after the delete, so undoing it would lose that change. "
            "Nothing was changed; you can add what you deleted back as a new note.",
        )
        return _memory_response(
            request, target, memory=exc.current, status=409, undo_conflict=record["removed"]
        )
    except CoreAPIError as exc:
        return _action_failed(request, target, exc)
    _undo_forget(request, form.cleaned_data["token"])
    messages.success(request, "Restored what you deleted.")
    if request.htmx:
        return _memory_response(request, target, memory=result)
    return redirect(place.url)


# --- edit --------------------------------------------------------------------------------


def _render_edit(
    request: HtmxHttpRequest, place: Place, *, status: int = 200, **context: Any
) -> HttpResponse:
    context.setdefault("preview", context.get("draft", ""))
    return render_page(
        request, "memory_ui/edit.html", "editor", {"place": place, **context}, status=status
    )


@require_http_methods(["GET", "POST"])
@login_required
def edit(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _edit_start(request)
    form = forms.EditForm(request.POST, request=request)
    target = _resolve(form)
    # Whatever happens below, what the user typed goes back to them as they typed it.
    typed = {
        "draft": form.data.get("content", ""),
        "version": form.data.get("version", ""),
        "base": form.data.get("base", ""),
        "current_version": form.data.get("current_version", ""),
    }
    if target is None:
        place = Place.unresolved(form.data.get("scope", ""), form.data.get("agent", ""))
        assert form.coreapi_error is not None
        return _render_edit(
            request,
            place,
            status=error_status(form.coreapi_error),
            error=f"Nothing was saved. {form.coreapi_error.message}",
            **typed,
        )
    place = Place.of(target)
    if form.errors:
        return _render_edit(
            request,
            place,
            status=400,
            error=f"Nothing was saved. {_first_error(form)}",
            form=form,
            **typed,
        )
    data = form.cleaned_data
    if data["action"] == "preview":
        return _render_edit(request, place, **typed)
    if data["action"] == "reapply":
        return _edit_reapply(request, target, form, typed)
    started_from = data["current_version"] if data["action"] == "overwrite" else data["version"]
    try:
        memory_replace(user_actor(request), target, data["content"], started_from=started_from)
    except MemoryChanged as exc:
        current = exc.current.content_markdown
        return _render_edit(
            request,
            place,
            status=409,
            conflict=True,
            diff=diff_lines(current, data["content"]),
            **{**typed, "current_version": Version.of(exc.current).token()},
        )
    except CoreAPIError as exc:
        return _render_edit(
            request,
            place,
            status=error_status(exc),
            error=f"Nothing was saved. {exc.message}",
            **typed,
        )
    if data["content"].strip():
        messages.success(request, f"Saved {place.name}.")
    else:
        messages.success(request, f"Saved: {place.name} is now empty.")
    if request.htmx:
        # HX-Redirect right away: on a 302 the messages middleware would take the message
        # for this response, which htmx never shows, instead of for the page it lands on.
        return HttpResponseClientRedirect(place.url)
    return redirect(place.url)


def _edit_start(request: HtmxHttpRequest) -> HttpResponse:
    form = forms.TargetForm(request.GET, request=request)
    target = _resolve(form)
    if target is None:
        assert form.coreapi_error is not None
        place = Place.unresolved(form.data.get("scope", ""), form.data.get("agent", ""))
        return _render_edit(
            request, place, status=error_status(form.coreapi_error), load_error=form.coreapi_error
        )
    place = Place.of(target)
    try:
        memory = memory_read(user_actor(request), target)
    except CoreAPIError as exc:
        return _render_edit(request, place, status=error_status(exc), load_error=exc)
    text = memory.content_markdown
    return _render_edit(request, place, draft=text, base=text, version=Version.of(memory).token())


def _edit_reapply(
    request: HtmxHttpRequest, target: Target, form: forms.EditForm, typed: dict[str, str]
) -> HttpResponse:
    """Start again from what is stored now, with the user's changes applied to it when
    they don't touch the lines that changed meanwhile; otherwise with their draft as is."""
    place = Place.of(target)
    try:
        current = memory_read(user_actor(request), target)
    except CoreAPIError as exc:
        return _render_edit(request, place, status=error_status(exc), error=exc.message, **typed)
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
    return _render_edit(
        request,
        place,
        notice=notice,
        draft=result,
        base=theirs,
        version=Version.of(current).token(),
        diff=diff_lines(theirs, result),
    )


@require_POST
@login_required
def edit_preview(request: HtmxHttpRequest) -> HttpResponse:
    """The live preview: the draft rendered by the same sanitizer as the memory page."""
    form = forms.PreviewForm(request.POST)
    if not form.is_valid():
        return render(
            request,
            "memory_ui/edit.html#preview",
            {"preview_error": _first_error(form)},
            status=400,
        )
    return render(request, "memory_ui/edit.html#preview", {"preview": form.cleaned_data["content"]})


# --- append ------------------------------------------------------------------------------


def _render_panel(
    request: HtmxHttpRequest, template: str, place: Place, *, status: int = 200, **context: Any
) -> HttpResponse:
    """A change form: inline in the memory page's #change-panel for htmx, else a page."""
    response = render_page(request, template, "panel", {"place": place, **context}, status=status)
    if request.htmx and request.method == "POST":
        # The form targets #memory-content to show the result; a problem stays in the panel.
        response = reswap(retarget(response, "#change-panel"), "outerHTML")
    return response


@require_http_methods(["GET", "POST"])
@login_required
def append(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "GET":
        form = forms.TargetForm(request.GET, request=request)
        target = _resolve(form)
        if target is None:
            return _agents_unavailable(request, form)
        return _render_panel(request, "memory_ui/append.html", Place.of(target))
    form = forms.AppendForm(request.POST, request=request)
    target = _resolve(form)
    typed = {"content": form.data.get("content", ""), "reason": form.data.get("reason", "")}
    if target is None:
        assert form.coreapi_error is not None
        place = Place.unresolved(form.data.get("scope", ""), form.data.get("agent", ""))
        return _render_panel(
            request,
            "memory_ui/append.html",
            place,
            status=error_status(form.coreapi_error),
            error=f"Nothing was added. {form.coreapi_error.message}",
            **typed,
        )
    place = Place.of(target)
    if form.errors:
        return _render_panel(
            request, "memory_ui/append.html", place, status=400, form=form, **typed
        )
    try:
        result = memory_append(
            user_actor(request), target, form.cleaned_data["content"], form.cleaned_data["reason"]
        )
    except CoreAPIError as exc:
        return _render_panel(
            request,
            "memory_ui/append.html",
            place,
            status=error_status(exc),
            error=f"Nothing was added. {exc.message}",
            **typed,
        )
    messages.success(request, f"Added your note to {place.name}.")
    if request.htmx:
        document = parse_document(result.content_markdown)
        last = document.entries[-1].index if document.entries else None
        return _changed_response(request, target, result, added_entry=last)
    return redirect(place.url)


# --- clear ---------------------------------------------------------------------------


def _clear_panel(
    request: HtmxHttpRequest, target: Target, *, status: int = 200, **context: Any
) -> HttpResponse:
    """The confirmation: what clearing would remove, read fresh from CoreAPI."""
    try:
        memory = memory_read(user_actor(request), target)
    except CoreAPIError as exc:
        context.setdefault("load_error", exc)
        memory = None
        status = max(status, error_status(exc))
    return _render_panel(
        request,
        "memory_ui/clear.html",
        Place.of(target),
        status=status,
        memory=memory,
        document=parse_document(memory.content_markdown) if memory else None,
        export_url=_export_url(target),
        **context,
    )


@require_http_methods(["GET", "POST"])
@login_required
def clear(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "GET":
        form = forms.TargetForm(request.GET, request=request)
        target = _resolve(form)
        if target is None:
            return _agents_unavailable(request, form)
        return _clear_panel(request, target)
    form = forms.ClearForm(request.POST, request=request)
    target = _resolve(form)
    if target is None:
        return _agents_unavailable(request, form)
    if form.errors or not form.cleaned_data["confirm"]:
        return _clear_panel(
            request,
            target,
            status=400,
            error="Nothing was cleared: confirm with the Clear button to go ahead.",
        )
    place = Place.of(target)
    try:
        result = memory_clear(user_actor(request), target)
    except CoreAPIError as exc:
        return _clear_panel(
            request,
            target,
            status=error_status(exc),
            error=f"Nothing was cleared. {exc.message}",
        )
    _undo_forget_target(request, target)
    messages.success(request, f"Cleared {place.name}.")
    if not request.htmx:
        return redirect(place.url)
    response = _changed_response(request, target, result)
    return trigger_client_event(
        response, "memoryCleared", {"scope": place.scope, "agent": place.agent_name}
    )


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
    try:
        targets = [Target("user"), *(Target("agent", a) for a in user_agents(request))]
    except CoreAPIError as exc:
        return _render_everything(
            request,
            status=error_status(exc),
            load_error=exc,
            typed_phrase=request.POST.get("phrase", ""),
        )
    if request.method == "GET":
        return _render_everything(request, targets=targets)
    form = forms.ClearEverythingForm(request.POST)
    if not form.is_valid():
        return _render_everything(
            request,
            status=400,
            targets=targets,
            form=form,
            typed_phrase=form.data.get("phrase", ""),
        )
    # A retry names the scopes that failed; each must still be one of the user's own.
    by_key = {target.key: target for target in targets}
    chosen_keys = request.POST.getlist("scopes")
    if any(key not in by_key for key in chosen_keys):
        raise BadRequest("Unknown memory scope.")
    chosen = [by_key[key] for key in chosen_keys] or targets
    actor = user_actor(request)
    results = []
    for target in chosen:
        try:
            memory_clear(actor, target)
            _undo_forget_target(request, target)
            results.append(ScopeResult(target, None))
        except CoreAPIError as exc:
            results.append(ScopeResult(target, exc))
    failed = [result for result in results if result.error]
    status = 200
    if failed:
        messages.error(
            request, f"{len(failed)} of {len(results)} could not be cleared; you can retry them."
        )
        assert failed[0].error is not None
        status = error_status(failed[0].error)
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
        trigger_client_event(response, "memoryCleared", {"scopes": cleared})
    return response


def _agents_unavailable(request: HtmxHttpRequest, form: forms.TargetForm) -> HttpResponse:
    """The user's agents could not be listed, so no agent memory can be changed now."""
    assert form.coreapi_error is not None
    messages.error(request, f"Nothing was changed. {form.coreapi_error.message}")
    if request.htmx:
        return reswap(HttpResponse(status=error_status(form.coreapi_error)), "none")
    return render(
        request,
        "memory_ui/memory.html",
        {"error": form.coreapi_error, "title": "Your memory", "scope": form.data.get("scope")},
        status=error_status(form.coreapi_error),
    )


urlpatterns = [
    path("memory/edit", edit, name="memory_edit"),
    path("memory/edit/preview", edit_preview, name="memory_edit_preview"),
    path("memory/append", append, name="memory_append"),
    path("memory/clear", clear, name="memory_clear"),
    path("memory/clear-everything", clear_everything, name="memory_clear_everything"),
    path("memory/entries/delete", delete_entry, name="memory_delete_entry"),
    path("memory/items/delete", delete_list_item, name="memory_delete_item"),
    path("memory/undo", undo, name="memory_undo"),
]
