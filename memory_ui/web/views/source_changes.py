"""Changing items through the generic source pages: the whole item, or one entry (one line)
of it, each previewed as differences before it is saved and saved only if the item is still
as its editor opened it; delete with Undo where the source restores; of the versions an
item holds at once (a conflict), the one the person keeps.

Every action is offered and accepted only where the source declares its capability and the
target lets the portal change it (`source_pages.source_action`: a post for a capability the
source lacks is a 404 carrying the source's sentence, one a read-only target refuses a 403
page saying so). Every change goes through `sources.generic`, which audits it.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import BadRequest
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods, require_POST

from memory_ui.documents.diffs import diff_lines
from memory_ui.sources import generic
from memory_ui.sources.protocol import Capability, Item, SourceError
from memory_ui.web.access import user_actor
from memory_ui.web.forms import first_error
from memory_ui.web.forms.sources import (
    SourceChangeForm,
    SourceEditForm,
    SourceEntryForm,
    SourceItemForm,
    SourceLineForm,
    SourceResolveForm,
    SourceUndoForm,
)
from memory_ui.web.htmx import HtmxHttpRequest, redirect_to
from memory_ui.web.source_pages import Place, failed, source_action
from memory_ui.web.stores.item_undo import (
    item_undo_forget,
    item_undo_remember,
    item_undo_take,
)


def _opened(request: HtmxHttpRequest, place: Place) -> Item | HttpResponse:
    """The item `?item=` as it is now, for an editor to start from (a failure's page else)."""
    assert place.target is not None
    form = SourceItemForm(request.GET)
    if not form.is_valid():
        raise Http404("No such item.")
    actor = user_actor(request)
    try:
        return generic.item_read(actor, place.backend, place.target, form.cleaned_data["item"])
    except SourceError as exc:
        return failed(request, place.source, exc)


def _editor(
    request: HtmxHttpRequest,
    place: Place,
    form: SourceChangeForm,
    *,
    status: int = 200,
    error: SourceError | None = None,
    previewed: bool = False,
    diff: list | None = None,
) -> HttpResponse:
    """The editor: the form as given (nothing typed is lost), the differences it would
    make where previewed, and the item as it is now where it changed meanwhile."""
    context = {
        "place": place,
        "form": form,
        "entry": isinstance(form, SourceEntryForm),
        "error": error or (first_error(form) if form.is_bound and form.errors else ""),
        "current": error.current if isinstance(error, generic.ItemChanged) else None,
        "previewed": previewed,
        "diff": diff,
        "no_version_check": (
            ""
            if place.allows(Capability.CONDITIONAL_WRITE)
            else place.refusal(Capability.CONDITIONAL_WRITE)
        ),
    }
    return render(request, "memory_ui/sources/edit.html", context, status=status)


@require_http_methods(["GET", "POST"])
@source_action(Capability.EDIT_ITEM)
def edit(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """The whole item: GET starts from it as it is; a post previews the differences
    (action=preview) or saves them, unless it changed since the editor opened."""
    assert place.target is not None
    if request.method == "GET":
        found = _opened(request, place)
        if isinstance(found, HttpResponse):
            return found
        data = {
            "target": place.target.key,
            "item": found.key,
            "version": generic.version_of(found),
            "text": found.text or "",
        }
        return _editor(request, place, SourceEditForm(initial=data))
    form = SourceEditForm(request.POST)
    if not form.is_valid():
        return _editor(request, place, form, status=400)
    data, actor = form.cleaned_data, user_actor(request)
    try:
        if form.previewing:
            before = generic.item_read(actor, place.backend, place.target, data["item"])
            diff = diff_lines(before.text or "", data["text"])
            return _editor(request, place, form, previewed=True, diff=diff)
        generic.item_replace(
            actor, place.backend, place.target, data["item"], data["text"], data["version"]
        )
    except SourceError as exc:
        return _editor(request, place, _again(form, exc), status=exc.portal_status, error=exc)
    messages.success(request, f"Saved {data['item']}.")
    return redirect_to(request, place.url())


@require_http_methods(["GET", "POST"])
@source_action(Capability.EDIT_ITEM)
def entry(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """One entry (one line) of an item: GET `?item=&line=` starts from that line as the
    item has it now; a post previews or saves it, refused unless the old line is in the
    item exactly once."""
    assert place.target is not None
    if request.method == "GET":
        line = SourceLineForm(request.GET)
        if not line.is_valid():
            raise BadRequest("Not a line number.")
        found = _opened(request, place)
        if isinstance(found, HttpResponse):
            return found
        chosen = dict(generic.entries_of(found)).get(line.cleaned_data["line"])
        if chosen is None:
            raise Http404("No such entry.")
        data = {
            "target": place.target.key,
            "item": found.key,
            "version": generic.version_of(found),
            "old": chosen,
            "new": chosen,
        }
        return _editor(request, place, SourceEntryForm(initial=data))
    form = SourceEntryForm(request.POST)
    if not form.is_valid():
        return _editor(request, place, form, status=400)
    data = form.cleaned_data
    if form.previewing:
        diff = diff_lines(data["old"], data["new"])
        return _editor(request, place, form, previewed=True, diff=diff)
    try:
        generic.entry_edit(
            user_actor(request),
            place.backend,
            place.target,
            data["item"],
            data["old"],
            data["new"],
            data["version"],
        )
    except SourceError as exc:
        return _editor(request, place, _again(form, exc), status=exc.portal_status, error=exc)
    # The entry editor is opened from the item's page: back there, to read the change.
    messages.success(request, f"Saved the entry in {data['item']}.")
    return redirect_to(request, place.item_url(data["item"]))


def _again[F: SourceChangeForm](form: F, error: SourceError) -> F:
    """The form as posted; where the item changed meanwhile, starting from its new version
    (the editor shows it as it is now), so what was typed can be saved over it knowingly."""
    if not isinstance(error, generic.ItemChanged):
        return form
    data = form.data.copy()
    data["version"] = generic.version_of(error.current)
    data["action"] = "preview"
    return type(form)(data)


@require_POST
@source_action(Capability.DELETE_ITEM)
def delete(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """Deletes one item; the target's page then offers Undo where the source restores."""
    assert place.target is not None
    form = SourceItemForm(request.POST)
    if not form.is_valid():
        raise Http404("No such item.")
    try:
        deleted = generic.item_delete(
            user_actor(request), place.backend, place.target, form.cleaned_data["item"]
        )
    except SourceError as exc:
        return failed(request, place.source, exc)
    token = None
    if place.allows(Capability.RESTORE_ITEM):
        token = item_undo_remember(request.session, place.undo_place, deleted)
    messages.success(request, f"Deleted {deleted.key}.")
    return redirect_to(request, place.url(undo=token) if token else place.url())


@require_POST
@source_action(Capability.RESOLVE)
def resolve(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """The version the person keeps of those the item holds at once; refused (nothing
    written) where the item changed since its page showed them."""
    assert place.target is not None
    form = SourceResolveForm(request.POST)
    if not form.is_valid():
        raise Http404("No such item.")
    data = form.cleaned_data
    try:
        generic.item_resolve(
            user_actor(request),
            place.backend,
            place.target,
            data["item"],
            data["keep"],
            data["version"],
        )
    except generic.ItemChanged:
        messages.error(request, "Nothing was kept: it changed meanwhile. Choose again.")
    except SourceError as exc:
        return failed(request, place.source, exc)
    else:
        messages.success(request, "Kept the version you chose; the other is no longer held.")
    return redirect_to(request, place.item_url(data["item"]))


@require_POST
@source_action(Capability.RESTORE_ITEM)
def undo(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """Undo of a delete: the item put back as it was; refused (nothing overwritten) where
    something was written in its place meanwhile."""
    assert place.target is not None
    form = SourceUndoForm(request.POST)
    kept = item_undo_take(request.session, form.data.get("undo", ""), place.undo_place)
    if not form.is_valid() or kept is None:
        messages.error(request, "That can no longer be undone.")
        return redirect_to(request, place.url())
    try:
        restored = generic.item_restore(user_actor(request), place.backend, place.target, kept)
    except SourceError as exc:
        if exc.portal_status != 409:
            messages.error(request, f"Not restored. {exc.message}")
            return redirect_to(request, place.url(undo=form.cleaned_data["undo"]))
        item_undo_forget(request.session, form.cleaned_data["undo"])
        messages.error(request, f"Not restored: {kept.key} was written meanwhile; it was kept.")
        return redirect_to(request, place.item_url(kept.key))
    item_undo_forget(request.session, form.cleaned_data["undo"])
    note = place.source.restore_note
    as_new = f" as {restored.key}: {note}" if restored.key != kept.key and note else ""
    messages.success(request, f"Restored {kept.key}{as_new}.")
    return redirect_to(request, place.url())
