"""Changing files in the legacy memory stores: one entry (`str_replace`) or the whole file
(`replace_all`), each previewed as differences before it is saved and checked against the
version the user started from; delete with Undo (the path re-created); clear a store with
one result per file, after the word "clear" is typed.

Every action is offered and accepted only where the source declares its capability and
the store lets the portal write (`legacy_pages.store_action`: a post for a capability the
source lacks is a 404 carrying the source's sentence, one a read-only store refuses a 403
page saying so). The store is looked up among the configured ones; every change goes
through `legacy_ops`, which audits it with its source.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_http_methods, require_POST

from memory_ui.documents.diffs import diff_lines
from memory_ui.sources.legacy import LegacyConflict, LegacyStoreError
from memory_ui.sources.legacy import operations as legacy_ops
from memory_ui.sources.legacy.operations import FileChanged, Store
from memory_ui.sources.protocol import Capability, Item
from memory_ui.web.access import user_actor
from memory_ui.web.forms import first_error
from memory_ui.web.forms.legacy import (
    LEGACY_CLEAR_PHRASE,
    LegacyClearForm,
    LegacyEntryForm,
    LegacyFileForm,
    LegacyLineForm,
    LegacyReplaceForm,
    LegacyUndoForm,
)
from memory_ui.web.htmx import HtmxHttpRequest, redirect_to
from memory_ui.web.legacy_pages import (
    entries_of,
    file_url,
    read_file,
    store_action,
    store_url,
)
from memory_ui.web.stores.item_undo import (
    item_undo_forget,
    item_undo_remember,
    item_undo_take,
)


def _editor(
    request: HtmxHttpRequest, found: Store, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    path = context.get("path", "")
    context = {
        "store": found,
        "store_url": store_url(found),
        "file_url": file_url(found, path) if path else store_url(found),
        "notice": legacy_ops.SYSTEM_NOTICE,
        "no_version_check": (
            ""
            if found.allows(Capability.CONDITIONAL_WRITE)
            else found.missing(Capability.CONDITIONAL_WRITE)
        ),
        **context,
    }
    return render(request, "memory_ui/legacy/edit.html", context, status=status)


def _changed_meanwhile(
    request: HtmxHttpRequest, found: Store, context: dict[str, Any], exc: FileChanged
) -> HttpResponse:
    """Nothing was saved: the form again with what the user typed, the file as it is now
    and a fresh version to start from."""
    current = exc.current
    context["error"] = str(exc)
    if current is None:
        context["gone"] = True
        return _editor(request, found, context, status=409)
    context["current"] = current
    context["version"] = legacy_ops.file_version(current).token()
    return _editor(request, found, context, status=409)


def _start(
    request: HtmxHttpRequest, found: Store, begin: Callable[[str, Item], dict[str, Any]]
) -> HttpResponse:
    """An editor's first page: the file `?path=` as it is now, and its version to start
    from; `begin` adds what the editor shows of it."""
    try:
        path, item = read_file(request, found)
    except LegacyStoreError as exc:
        return _editor(request, found, {"load_error": exc}, exc.portal_status)
    version = legacy_ops.file_version(item).token()
    return _editor(request, found, {"path": path, "version": version, **begin(path, item)})


def _posted(form: LegacyReplaceForm | LegacyEntryForm, mode: str) -> dict[str, Any]:
    """The form as posted (nothing typed is lost on an error); "error" when it is invalid."""
    data = form.data
    context: dict[str, Any] = {
        "mode": mode,
        "path": form.cleaned_data.get("path", "") if form.is_valid() else "",
        "text": data.get("text", ""),
        "old": data.get("old", ""),
        "new": data.get("new", ""),
        "version": data.get("version", ""),
    }
    if form.errors:
        context["error"] = first_error(form)
    return context


def _save(
    request: HtmxHttpRequest, found: Store, context: dict[str, Any], save: Callable[[], Item]
) -> HttpResponse:
    """Saves (`save` is the legacy_ops step); on failure the editor again, as posted."""
    try:
        save()
    except FileChanged as exc:
        return _changed_meanwhile(request, found, context, exc)
    except LegacyStoreError as exc:
        return _editor(request, found, {**context, "error": exc.message}, exc.portal_status)
    what = "the entry in " if context["mode"] == "entry" else ""
    messages.success(request, f"Saved {what}{context['path']}.")
    return redirect_to(request, file_url(found, context["path"]))


@require_http_methods(["GET", "POST"])
@login_required
@store_action(Capability.EDIT_ITEM)
def edit(request: HtmxHttpRequest, found: Store) -> HttpResponse:
    """The whole file as markdown: GET starts from the file as it is; a post previews the
    differences (action=preview) or saves them (action=save) with `replace_all`."""
    if request.method == "GET":
        return _start(request, found, lambda path, item: {"mode": "file", "text": item.text or ""})
    form = LegacyReplaceForm(request.POST)
    context = _posted(form, "file")
    if "error" in context:
        return _editor(request, found, context, status=400)
    data, actor = form.cleaned_data, user_actor(request)
    if data["action"] == "preview":
        try:
            before = legacy_ops.legacy_file_read(actor, found, data["path"])
        except LegacyStoreError as exc:
            return _editor(request, found, {**context, "error": exc.message}, exc.portal_status)
        context.update(previewed=True, diff=diff_lines(before.text or "", data["text"]))
        return _editor(request, found, context)
    step = legacy_ops.legacy_file_replace
    save = partial(step, actor, found, data["path"], data["text"], data["version"])
    return _save(request, found, context, save)


def _entry_start(request: HtmxHttpRequest) -> Callable[[str, Item], dict[str, Any]]:
    form = LegacyLineForm(request.GET)
    if not form.is_valid():
        raise BadRequest("Not a line number.")
    line = form.cleaned_data["line"] or 0

    def begin(path: str, item: Item) -> dict[str, Any]:
        chosen = dict(entries_of(item)).get(line)
        if chosen is None:
            raise Http404("No such entry in this file.")
        return {"mode": "entry", "old": chosen, "new": chosen}

    return begin


@require_http_methods(["GET", "POST"])
@login_required
@store_action(Capability.EDIT_ITEM)
def entry(request: HtmxHttpRequest, found: Store) -> HttpResponse:
    """One entry (one line) of a file: GET `?path=&line=` starts from that line as the file
    has it now; a post previews or saves it with `str_replace`, which the store refuses
    unless the old line is in the file exactly once."""
    if request.method == "GET":
        return _start(request, found, _entry_start(request))
    form = LegacyEntryForm(request.POST)
    context = _posted(form, "entry")
    if "error" in context:
        return _editor(request, found, context, status=400)
    data = form.cleaned_data
    if data["action"] == "preview":
        context.update(previewed=True, diff=diff_lines(data["old"], data["new"]))
        return _editor(request, found, context)
    step, actor = legacy_ops.legacy_entry_edit, user_actor(request)
    save = partial(step, actor, found, data["path"], data["old"], data["new"], data["version"])
    return _save(request, found, context, save)


@require_POST
@login_required
@store_action(Capability.DELETE_ITEM)
def delete(request: HtmxHttpRequest, found: Store) -> HttpResponse:
    """Deletes a file; the store page then offers Undo (the file kept in the session)."""
    form = LegacyFileForm(request.POST)
    if not form.is_valid():
        raise Http404("Not a memory file path.")
    path = form.cleaned_data["path"]
    try:
        before: Item = legacy_ops.legacy_file_delete(user_actor(request), found, path)
    except LegacyStoreError as exc:
        messages.error(request, f"Nothing was deleted. {exc.message}")
        return redirect_to(request, file_url(found, path))
    token = None
    if found.allows(Capability.RESTORE_ITEM):
        token = item_undo_remember(request.session, found.key, before)
    if token is None:
        messages.success(request, f"Deleted {path}.")
        return redirect_to(request, store_url(found))
    return redirect_to(request, f"{store_url(found)}?{urlencode({'undo': token})}")


@require_POST
@login_required
@store_action(Capability.RESTORE_ITEM)
def undo(request: HtmxHttpRequest, found: Store) -> HttpResponse:
    """Undo of a delete: the same path re-created with the old contents and description;
    refused (nothing overwritten) when something was written there meanwhile."""
    form = LegacyUndoForm(request.POST)
    kept = item_undo_take(request.session, form.data.get("undo", ""), found.key)
    if not form.is_valid() or kept is None:
        messages.error(request, "That delete can no longer be undone.")
        return redirect_to(request, store_url(found))
    try:
        legacy_ops.legacy_file_restore(user_actor(request), found, kept)
    except LegacyConflict:
        item_undo_forget(request.session, form.cleaned_data["undo"])
        messages.error(
            request, f"Not restored: a file was written at {kept.key} meanwhile; it was kept."
        )
        return redirect_to(request, file_url(found, kept.key))
    except LegacyStoreError as exc:
        messages.error(request, f"Not restored. {exc.message}")
        return redirect_to(request, f"{store_url(found)}?{urlencode({'undo': form.data['undo']})}")
    item_undo_forget(request.session, form.cleaned_data["undo"])
    messages.success(request, f"Restored {kept.key}.")
    return redirect_to(request, file_url(found, kept.key))


@require_http_methods(["GET", "POST"])
@login_required
@store_action(Capability.CLEAR_TARGET)
def clear(request: HtmxHttpRequest, found: Store) -> HttpResponse:
    """Deletes every file of the user's in the store, after "clear" is typed; the answer
    lists each file: deleted, or failed and why."""
    form = LegacyClearForm(request.POST if request.method == "POST" else None)
    context: dict[str, Any] = {
        "store": found,
        "store_url": store_url(found),
        "phrase": LEGACY_CLEAR_PHRASE,
        "notice": legacy_ops.SYSTEM_NOTICE,
        "form": form,
        "export_url": (
            reverse("legacy_export", args=[found.key]) if found.allows(Capability.EXPORT) else ""
        ),
    }
    if request.method == "GET":
        return render(request, "memory_ui/legacy/clear.html", context)
    if not form.is_valid():
        context["form_error"] = first_error(form)
        return render(request, "memory_ui/legacy/clear.html", context, status=400)
    try:
        outcomes = legacy_ops.legacy_store_clear(user_actor(request), found)
    except LegacyStoreError as exc:
        context["error"] = exc
        return render(request, "memory_ui/legacy/clear.html", context, status=exc.portal_status)
    context["outcomes"] = outcomes
    context["failed"] = [o for o in outcomes if o.result not in ("erased",)]
    return render(request, "memory_ui/legacy/clear.html", context)
