"""Editing one entry in place: its text and reason, with a live preview and the version
check. Only that entry's lines change (`documents.replace_entry`); the rest of the
document is written back as it was. Not offered on combined pages (read-only) or for a
memory too large to write back in one request."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.views.decorators.http import require_http_methods

from memory_ui.coreapi import CoreAPIError, Memory
from memory_ui.memory.documents import Entry, EntryEditError, parse_document, replace_entry
from memory_ui.memory.operations import (
    Loaded,
    MemoryChanged,
    NothingToChange,
    Version,
    memory_load,
    memory_rewrite,
)
from memory_ui.memory.targets import Target
from memory_ui.web import forms
from memory_ui.web.access import as_named, form_target, user_actor
from memory_ui.web.errors import AgentsUnlisted, answers_unlisted
from memory_ui.web.htmx import HtmxHttpRequest, redirect_to, render_page
from memory_ui.web.links import target_url
from memory_ui.web.screens import not_done


def entry_url(target: Target, index: int) -> str:
    """Where an entry lives: its memory's page that holds it, scrolled to it."""
    return f"{target_url(target)}?{urlencode({'entry': index})}#entry-{index}"


def _render(
    request: HtmxHttpRequest, target: Target, index: int, *, status: int = 200, **context: Any
) -> HttpResponse:
    context.setdefault("preview", context.get("draft", ""))
    context = {"target": target, "index": index, "back_url": entry_url(target, index), **context}
    return render_page(request, "memory_ui/entry_edit.html", "entry_editor", context, status)


def _entry_of(loaded: Loaded, index: int) -> Entry | None:
    document = loaded.document
    if document is None or not 0 <= index < len(document.entries):
        return None
    return document.entries[index]


def _entry_unlisted(request: HtmxHttpRequest, unlisted: AgentsUnlisted) -> HttpResponse:
    """Without the agent list: the entry form for the memory as the form named it, with
    what was typed (after a POST) and why nothing was saved."""
    form, error = unlisted.form, unlisted.error
    assert isinstance(form, forms.EntryForm)
    index = form.cleaned_data.get("index") or 0
    status = error.portal_status
    if request.method == "GET":
        return _render(request, as_named(form), index, status=status, load_error=error)
    assert isinstance(form, forms.EntryEditForm)
    message = f"Nothing was saved. {error.message}"
    return _render(request, as_named(form), index, status=status, error=message, **form.typed())


@require_http_methods(["GET", "POST"])
@login_required
@answers_unlisted(_entry_unlisted)
def entry_edit(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _start(request)
    form = forms.EntryEditForm(request.POST)
    target = form_target(request, form)
    typed = form.typed()  # whatever happens below, what was typed goes back as typed
    index = form.cleaned_data.get("index") or 0
    if form.errors:
        error = f"Nothing was saved. {forms.first_error(form)}"
        return _render(request, target, index, status=400, error=error, form=form, **typed)
    if form.cleaned_data["action"] == "preview":
        return _render(request, target, index, **typed)
    return _save(request, target, form, typed)


def _start(request: HtmxHttpRequest) -> HttpResponse:
    form = forms.EntryForm(request.GET)
    target = form_target(request, form)
    index = form.cleaned_data.get("index") or 0
    if form.errors:
        return _render(request, target, index, status=400, missing=True)
    loaded = memory_load(user_actor(request), target)
    if loaded.error is not None:
        return _render(
            request, target, index, status=loaded.error.portal_status, load_error=loaded.error
        )
    if not loaded.rewritable:
        return _render(request, target, index, status=413, too_large=loaded.size_bytes)
    entry = _entry_of(loaded, index)
    if entry is None:
        return _render(request, target, index, status=404, missing=True)
    assert loaded.memory is not None
    return _render(
        request,
        target,
        index,
        entry=entry,
        draft=entry.body,
        reason=entry.reason or "",
        version=Version.of(loaded.memory).token(),
    )


def _save(
    request: HtmxHttpRequest, target: Target, form: forms.EntryEditForm, typed: dict[str, str]
) -> HttpResponse:
    data = form.cleaned_data
    index = data["index"]

    def with_entry_replaced(current: Memory) -> str | None:
        if index >= len(parse_document(current.content_markdown).entries):
            return None
        return replace_entry(current.content_markdown, index, data["content"], data["reason"])

    try:
        done = memory_rewrite(
            user_actor(request), target, with_entry_replaced, started_from=data["version"]
        )
    except EntryEditError as exc:
        return _render(
            request, target, index, status=400, error=f"Nothing was saved. {exc}", **typed
        )
    except MemoryChanged as exc:
        # The draft stays; the entry as it is now is shown, and saving again replaces it.
        now = _entry_of(Loaded(target, exc.current), index)
        typed = {**typed, "version": Version.of(exc.current).token()}
        return _render(request, target, index, status=409, conflict=True, entry=now, **typed)
    except CoreAPIError as exc:
        error = not_done("Nothing was saved.", exc)
        return _render(request, target, index, status=exc.portal_status, error=error, **typed)
    except NothingToChange:
        return _render(request, target, index, status=404, missing=True)
    messages.success(request, "Saved the entry.")
    if done.moved:
        messages.warning(
            request, "Something else changed this memory right after you saved: check it below."
        )
    return redirect_to(request, entry_url(target, index))
