"""Moving what a source being turned down keeps into the current memory, from its target's
and items' pages: per item or for the whole target, a preview first (which text goes into
which memory, what is already there and will be skipped), then the move with one result per
item, and the deletion of the copies verified in the current memory only when the user
ticks it (and the target lets the portal delete).

The move plans again when it runs (`source_move.move_run`), so nothing the browser kept
from the preview is trusted; running it twice adds nothing, so a move that failed halfway
is resumed by running it again. A source not being turned down has no move (404).
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from memory_ui.memory.source_move import Origin, Result, move_preview, move_run
from memory_ui.sources.protocol import Capability, SourceError
from memory_ui.web.access import user_actor
from memory_ui.web.forms.sources import SourceMoveForm
from memory_ui.web.htmx import HtmxHttpRequest
from memory_ui.web.source_pages import Place, source_action

MOVE_TEMPLATE = "memory_ui/sources/move.html"


@require_http_methods(["GET", "POST"])
@source_action(None)
def move(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """GET: the preview of moving `?item=` (or the whole target). POST: the move."""
    assert place.target is not None
    if not place.source.turned_down:
        raise Http404("Only a system being turned down moves into your current memory.")
    form = SourceMoveForm(request.POST if request.method == "POST" else request.GET)
    if not form.is_valid():
        raise Http404("No such item.")
    key = form.cleaned_data["item"]
    can_delete = place.allows(Capability.DELETE_ITEM)
    context: dict[str, Any] = {
        "place": place,
        "key": key,
        "back_url": place.item_url(key) if key else place.url(),
        "can_delete": can_delete,
        "no_delete": "" if can_delete else place.refusal(Capability.DELETE_ITEM),
    }
    actor = user_actor(request)
    origin = Origin(place.source.name, place.backend, place.target)
    keys = [key] if key else None
    try:
        if request.method == "GET":
            context["plan"] = move_preview(actor, origin, keys)
        else:
            delete = can_delete and form.cleaned_data["delete_verified"]
            report = move_run(actor, origin, keys, delete_verified=delete)
            context["report"] = report
            context["unfinished"] = [
                moved
                for moved in report.files
                if moved.result in (Result.FAILED, Result.NOT_VERIFIED)
            ]
    except SourceError as exc:
        context["error"] = exc
        return render(request, MOVE_TEMPLATE, context, status=exc.portal_status)
    return render(request, MOVE_TEMPLATE, context)
