"""The generic source pages: any registered source that brings only its adapter (the
registry's `Source.backend`) gets them, named by the source's short name in the URL. Its
dashboard section (its targets, loaded after first paint), a target's page (its items, with
the actions the source declares and one sentence for each it does not), and those actions:
edit an item, delete it with Undo where the source can restore, clear a target after the
word "clear" is typed, download a target as markdown.

A source not in the registry, or one with pages of its own, is a 404; a target key is
looked up among the person's own targets (404 otherwise); an action the source lacks is a
404 carrying its sentence, never a call. Every step goes through `sources.generic`, which
audits it with the source's name; a source's failure is its `SourceError`, shown once by
the alert component.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memory_ui.sources import generic, registry
from memory_ui.sources.protocol import Capability, MemoryBackend, Source, SourceError, SourceTarget
from memory_ui.web.access import user_actor
from memory_ui.web.downloads import download_began
from memory_ui.web.forms import first_error
from memory_ui.web.forms.sources import (
    SOURCE_CLEAR_PHRASE,
    SourceClearForm,
    SourceEditForm,
    SourceItemForm,
    SourceTargetForm,
    SourceUndoForm,
)
from memory_ui.web.htmx import HtmxHttpRequest, redirect_to, render_page
from memory_ui.web.offered import Offered
from memory_ui.web.stores.item_undo import (
    item_undo_forget,
    item_undo_label,
    item_undo_remember,
    item_undo_take,
)


@dataclass(frozen=True)
class Place:
    """What every generic view works on: the source, its adapter for the signed-in person,
    and (where the request names one) their target."""

    source: Source
    backend: MemoryBackend
    target: SourceTarget | None = None

    @property
    def undo_place(self) -> str:
        return f"{self.source.name}:{self.target.key if self.target else ''}"


def _source(name: str) -> Source:
    try:
        found = registry.source(name)
    except KeyError:
        raise Http404("No such memory system.") from None
    if found.backend is None:
        raise Http404("This memory system has pages of its own.")
    return found


def _place(request: HtmxHttpRequest, name: str, target_key: str | None = None) -> Place:
    source = _source(name)
    assert source.backend is not None  # _source() keeps sources with an adapter only
    backend = source.backend(user_actor(request))
    if target_key is None:
        return Place(source, backend)
    target = generic.target_of(user_actor(request), backend, target_key)
    if target is None:
        raise Http404("No such memory in this system.")
    return Place(source, backend, target)


type PlaceView = Callable[[HtmxHttpRequest, Place], HttpResponse]


def source_action(
    capability: Capability | None,
) -> Callable[[PlaceView], Callable[..., HttpResponse]]:
    """The view's place: the source from the URL's `name`, the target from the request's
    `target` (GET or POST). A source without `capability` is a 404 with its sentence."""

    def decorator(view: PlaceView) -> Callable[..., HttpResponse]:
        @wraps(view)
        @login_required
        def wrapper(request: HtmxHttpRequest, name: str) -> HttpResponse:
            source = _source(name)
            if capability is not None and not source.can(capability):
                raise Http404(source.missing_reason(capability))
            form = SourceTargetForm(request.POST if request.method == "POST" else request.GET)
            if not form.is_valid():
                raise Http404("No such memory in this system.")
            try:
                place = _place(request, name, form.cleaned_data["target"])
            except SourceError as exc:
                return _failed(request, source, exc)
            return view(request, place)

        return wrapper

    return decorator


def target_url(place: Place, page: str = "source_target", **query: str) -> str:
    assert place.target is not None
    url = reverse(page, args=[place.source.name])
    return f"{url}?{urlencode({'target': place.target.key, **query})}"


def _failed(request: HtmxHttpRequest, source: Source, error: SourceError) -> HttpResponse:
    retry = request.get_full_path()
    if request.method == "POST":  # a link cannot send a change again: back to its target's page
        query = urlencode({"target": request.POST.get("target", "")})
        retry = f"{reverse('source_target', args=[source.name])}?{query}"
    context = {"source": source, "error": error, "retry_url": retry}
    return render(request, "memory_ui/sources/failed.html", context, status=error.portal_status)


@require_GET
@login_required
def section(request: HtmxHttpRequest, name: str) -> HttpResponse:
    """The source's targets as cards: the dashboard's section (htmx) or, without
    JavaScript, the same list as a page."""
    source = _source(name)
    assert source.backend is not None
    try:
        listed, error = (
            generic.targets_list(user_actor(request), source.backend(user_actor(request))),
            None,
        )
    except SourceError as exc:
        listed, error = [], exc
    context = {
        "source": source,
        "listed": listed,
        "error": error,
        "retry_url": reverse("source_section", args=[source.name]),
    }
    status = error.portal_status if error else 200
    return render_page(request, "memory_ui/sources/section.html", "section", context, status)


@require_GET
@source_action(None)
def target(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """A target's items, a page at a time (`?page=` is the source's own cursor)."""
    assert place.target is not None
    cursor = request.GET.get("page") or None
    context: dict[str, Any] = {
        "place": place,
        "offered": Offered.of(place.source.can, place.source.missing_reason),
    }
    try:
        page = generic.target_page(user_actor(request), place.backend, place.target, cursor)
        shown = generic.items_shown(user_actor(request), place.backend, page.items)
        context |= {"items": shown, "next_cursor": page.next_cursor, "error": None}
    except SourceError as exc:
        context |= {"items": (), "next_cursor": None, "error": exc}
    undo = request.GET.get("undo", "")
    if undo:
        context["undo"] = undo
        context["undo_label"] = item_undo_label(request.session, undo, place.undo_place)
    status = context["error"].portal_status if context["error"] else 200
    return render(request, "memory_ui/sources/target.html", context, status=status)


@require_http_methods(["GET", "POST"])
@source_action(Capability.EDIT_ITEM)
def edit(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """An item's text, then saved as given unless it changed since the editor opened."""
    assert place.target is not None
    actor = user_actor(request)
    if request.method == "GET":
        item_form = SourceItemForm(request.GET)
        if not item_form.is_valid():
            raise Http404("No such item.")
        try:
            item = generic.item_read(
                actor, place.backend, place.target, item_form.cleaned_data["item"]
            )
        except SourceError as exc:
            return _failed(request, place.source, exc)
        data = {
            "target": place.target.key,
            "item": item.key,
            "version": generic.version_of(item),
            "text": item.text or "",
        }
        return _editor(request, place, SourceEditForm(initial=data))
    form = SourceEditForm(request.POST)
    if not form.is_valid():
        return _editor(request, place, form, status=400)
    data = form.cleaned_data
    try:
        generic.item_replace(
            actor, place.backend, place.target, data["item"], data["text"], data["version"]
        )
    except SourceError as exc:
        return _editor(request, place, form, status=exc.portal_status, error=exc)
    messages.success(request, f"Saved {data['item']}.")
    return redirect_to(request, target_url(place))


def _editor(
    request: HtmxHttpRequest,
    place: Place,
    form: SourceEditForm,
    status: int = 200,
    error: SourceError | None = None,
) -> HttpResponse:
    context = {"place": place, "form": form, "error": error or first_error(form)}
    return render(request, "memory_ui/sources/edit.html", context, status=status)


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
        return _failed(request, place.source, exc)
    token = None
    if place.source.can(Capability.RESTORE_ITEM):
        token = item_undo_remember(request.session, place.undo_place, deleted)
    messages.success(request, f"Deleted {deleted.key}.")
    return redirect_to(request, target_url(place, undo=token) if token else target_url(place))


@require_POST
@source_action(Capability.RESTORE_ITEM)
def undo(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    assert place.target is not None
    form = SourceUndoForm(request.POST)
    kept = item_undo_take(request.session, form.data.get("undo", ""), place.undo_place)
    if not form.is_valid() or kept is None:
        messages.error(request, "That can no longer be undone.")
        return redirect_to(request, target_url(place))
    try:
        generic.item_restore(user_actor(request), place.backend, place.target, kept)
    except SourceError as exc:
        return _failed(request, place.source, exc)
    item_undo_forget(request.session, form.cleaned_data["undo"])
    messages.success(request, f"Restored {kept.key}.")
    return redirect_to(request, target_url(place))


@require_http_methods(["GET", "POST"])
@source_action(Capability.CLEAR_TARGET)
def clear(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """Every item of the target deleted, after the word "clear" is typed; the result says
    what happened to each."""
    assert place.target is not None
    if request.method == "GET":
        form = SourceClearForm(initial={"target": place.target.key})
        return _clear_page(request, place, form)
    form = SourceClearForm(request.POST)
    if not form.is_valid():
        return _clear_page(request, place, form, status=400)
    try:
        rows = generic.target_clear(user_actor(request), place.backend, place.target)
    except SourceError as exc:
        return _clear_page(request, place, form, status=exc.portal_status, error=exc)
    return _clear_page(request, place, form, rows=rows)


def _clear_page(
    request: HtmxHttpRequest,
    place: Place,
    form: SourceClearForm,
    *,
    status: int = 200,
    error: SourceError | None = None,
    rows: list | None = None,
) -> HttpResponse:
    context = {
        "place": place,
        "form": form,
        "phrase": SOURCE_CLEAR_PHRASE,
        "error": error or (first_error(form) if form.is_bound else ""),
        "rows": rows,
        "erased": sum(row.result == "erased" for row in rows or ()),
    }
    return render(request, "memory_ui/sources/clear.html", context, status=status)


@require_GET
@source_action(Capability.EXPORT)
def export(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """The target as one markdown file."""
    assert place.target is not None
    try:
        text = generic.target_export(user_actor(request), place.backend, place.target)
    except SourceError as exc:
        return _failed(request, place.source, exc)
    response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
    stem = "".join(c if c.isalnum() or c in "._-" else "_" for c in place.target.key)[:80]
    response["Content-Disposition"] = f'attachment; filename="{place.source.name}-{stem}.md"'
    return download_began(request, response)
