"""The generic source pages, for every registered source with an adapter (the registry's
`Source.backend`; the legacy stores are one), named by the source's short name in the URL:
its dashboard section (its targets, loaded after first paint), a target's page (its items a
page at a time, with the actions it offers and one sentence for each it does not, and the
items the person deleted, each found again by its History: `views.source_history`), an
item's page, a clear with one result per item, and downloads. Changes are in
`views.source_changes`, the move into the primary source in `views.source_move`; what they
share (the place a request names, the door of every action) in `web.source_pages`.

A source not in the registry is a 404; a target key is looked up among the person's own
targets (404 otherwise); an action the source lacks is a 404 carrying its sentence, one the
target refuses (read only) a 403 page saying so, never a call. Every step goes through
`sources.generic`, which audits it with the source's name; a source's failure is its
`SourceError`, shown once by the alert component, offering to try again where that helps.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from memory_ui.sources import generic, listing, registry
from memory_ui.sources.item_history import deleted_items
from memory_ui.sources.protocol import Capability, SourceError
from memory_ui.web.access import user_actor
from memory_ui.web.downloads import download_began
from memory_ui.web.forms import first_error
from memory_ui.web.forms.sources import SOURCE_CLEAR_PHRASE, SourceClearForm, SourceItemForm
from memory_ui.web.htmx import HtmxHttpRequest, render_page
from memory_ui.web.item_rows import rows_html
from memory_ui.web.source_pages import (
    Place,
    agent_titles,
    failed,
    named,
    place_of,
    source_action,
    source_or_404,
)
from memory_ui.web.stores.item_undo import item_undo_label

# The changes an item's History keeps (an Undo or a restore needs one of them first).
CHANGES_KEPT = Capability.EDIT_ITEM | Capability.DELETE_ITEM | Capability.RESOLVE


@require_GET
@login_required
def section(request: HtmxHttpRequest, name: str) -> HttpResponse:
    """The source's targets as cards: the dashboard's section (htmx) or, without
    JavaScript, the same list as a page."""
    place = place_of(request, source_or_404(name))
    try:
        listed, error = listing.targets_list(user_actor(request), place.backend), None
    except SourceError as exc:
        listed, error = [], exc
    titles = agent_titles(request)
    context = {
        "source": place.source,
        "listed": [replace(entry, target=named(entry.target, titles)) for entry in listed],
        "error": error,
        "retry_url": reverse("source_section", args=[place.source.name]),
    }
    status = error.portal_status if error else 200
    return render_page(request, "memory_ui/sources/section.html", "section", context, status)


@require_GET
@source_action(None)
def target(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """A target's items, a page at a time (`?page=` is the source's own cursor), metadata
    only: an item's text is read on its page, or opened in place."""
    assert place.target is not None
    cursor = request.GET.get("page") or None
    offered = place.offered
    context: dict[str, Any] = {"place": place, "offered": offered, "first_page": not cursor}
    context |= {"items": (), "next_cursor": None, "error": None}
    try:
        if not place.source.cannot_list:  # else the page says why, never "nothing"
            page = generic.target_page(user_actor(request), place.backend, place.target, cursor)
            shown = listing.items_shown(
                user_actor(request), place.backend, place.target, page.items
            )
            rows = rows_html(place, shown, offered)
            context |= {"items": page.items, "rows": rows, "next_cursor": page.next_cursor}
    except SourceError as exc:
        context["error"] = exc
    if not cursor:  # a deleted item is found again by its History
        upn = user_actor(request).who.upn
        context["deleted"] = deleted_items(upn, place.source.name, place.target)
        context["retention_days"] = settings.PORTAL_HISTORY_RETENTION_DAYS
    undo = request.GET.get("undo", "")
    if undo:
        # After a delete: the notice names the item from the session, never from the URL.
        context["undo"] = undo
        context["undo_label"] = item_undo_label(request.session, undo, place.undo_place)
    status = context["error"].portal_status if context["error"] else 200
    return render_page(request, "memory_ui/sources/target.html", "items", context, status)


@require_GET
@source_action(None)
def item(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """One item with its text and its entries; for htmx (an item opened on its target's
    page) the text alone."""
    assert place.target is not None
    form = SourceItemForm(request.GET)
    if not form.is_valid():
        raise Http404("No such item.")
    context: dict[str, Any] = {"place": place, "offered": place.offered, "error": None}
    # The History of what the person changed, where the source lets the portal change items.
    context["history"] = bool(place.backend.capabilities & CHANGES_KEPT)
    # Where the item holds several versions: keeping one, or why it cannot be done here.
    resolve = place.allows(Capability.RESOLVE)
    context |= {
        "resolve": resolve,
        "no_resolve": "" if resolve else place.refusal(Capability.RESOLVE),
    }
    status = 200
    try:
        found = generic.item_read(
            user_actor(request), place.backend, place.target, form.cleaned_data["item"]
        )
    except SourceError as exc:
        context["error"] = exc
        status = exc.portal_status
    else:
        came_back = listing.item_came_back(user_actor(request), place.source.name, found)
        context |= {"item": found, "entries": generic.entries_of(found), "came_back": came_back}
    return render_page(request, "memory_ui/sources/item.html", "contents", context, status)


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
        "offered": place.offered,
        "form": form,
        "phrase": SOURCE_CLEAR_PHRASE,
        "error": error or (first_error(form) if form.is_bound else ""),
        "rows": rows,
        "erased": sum(row.result == "erased" for row in rows or ()),
    }
    return render(request, "memory_ui/sources/clear.html", context, status=status)


@require_GET
@never_cache
@source_action(Capability.EXPORT)
def export(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """The target (or, with `?item=`, one item of it) as one markdown file."""
    assert place.target is not None
    actor, key = user_actor(request), None
    if "item" in request.GET:
        form = SourceItemForm(request.GET)
        if not form.is_valid():
            raise Http404("No such item.")
        key = form.cleaned_data["item"]
    try:
        if key is None:
            text = generic.target_export(actor, place.backend, place.target)
        else:
            text = generic.item_export(actor, place.backend, place.target, key)
    except SourceError as exc:
        return failed(request, place.source, exc)
    response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
    name = place.target.key + (f"-{key}" if key else "")
    stem = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:80]
    response["Content-Disposition"] = f'attachment; filename="{place.source.name}-{stem}.md"'
    return download_began(request, response)


# The pages a source's old URLs named (`<old prefix>/<target key>/<page>?path=<item>`), by
# the generic page each now is: a bookmark goes on working.
MOVED_PAGES = {
    "": "source_target",
    "file": "source_item",
    "edit": "source_edit",
    "entry": "source_entry",
    "clear": "source_clear",
    "export": "source_export",
    "move": "source_move",
}


@require_GET
def moved(request: HtmxHttpRequest, prefix: str, page: str, key: str = "") -> HttpResponse:
    """A page's old address (under the source's `moved_from`), redirected to the generic
    page it now is (the item named `path` there is `item` here; every other parameter is
    kept). 404 where no source had its pages there."""
    found = next((s for s in registry.sources() if s.moved_from == f"memory/{prefix}"), None)
    if found is None:
        raise Http404("No such page.")
    name = found.name
    query = request.GET.copy()
    if "path" in query:
        query["item"] = query.pop("path")[-1]
    if key:
        query["target"] = key
    url = reverse(page, args=[name])
    return HttpResponsePermanentRedirect(f"{url}?{query.urlencode()}" if query else url)
