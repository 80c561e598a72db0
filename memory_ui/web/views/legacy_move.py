"""Moving a legacy store's files into CoreAPI from the store's pages: per file or for the
whole store, a preview first (which text goes into which CoreAPI memory, what is already
there and will be skipped), then the move with one result per file, and the deletion of
the legacy copies verified in CoreAPI only when the user ticks it.

The move plans again when it runs (`legacy_move.legacy_move_run`), so nothing the browser kept
from the preview is trusted; running it twice adds nothing, so a move that failed halfway
is resumed by running it again.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from memory_ui.memory.legacy_move import Result, legacy_move_preview, legacy_move_run
from memory_ui.sources.legacy import LegacyStoreError
from memory_ui.sources.protocol import Capability, SourceError
from memory_ui.web.access import user_actor
from memory_ui.web.forms.legacy import LegacyMoveForm
from memory_ui.web.htmx import HtmxHttpRequest
from memory_ui.web.legacy_pages import file_url, store_or_404, store_url

MOVE_TEMPLATE = "memory_ui/legacy/move.html"


@require_http_methods(["GET", "POST"])
@login_required
def move(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """GET: the preview of moving `?path=` (or the whole store). POST: the move."""
    found = store_or_404(request, key)
    form = LegacyMoveForm(request.POST if request.method == "POST" else request.GET)
    if not form.is_valid():
        raise Http404("Not a memory file path.")
    path = form.cleaned_data["path"]
    paths = [path] if path else None
    can_delete = found.allows(Capability.DELETE_ITEM)
    context: dict[str, Any] = {
        "store": found,
        "path": path,
        "store_url": store_url(found),
        "back_url": file_url(found, path) if path else store_url(found),
        "can_delete": can_delete,
        "no_delete": "" if can_delete else found.missing(Capability.DELETE_ITEM),
    }
    actor = user_actor(request)
    try:
        if request.method == "GET":
            context["plan"] = legacy_move_preview(actor, found, paths)
        else:
            delete = can_delete and form.cleaned_data["delete_verified"]
            report = legacy_move_run(actor, found, paths, delete_verified=delete)
            context["report"] = report
            context["unfinished"] = [
                moved
                for moved in report.files
                if moved.result in (Result.FAILED, Result.NOT_VERIFIED)
            ]
    except (SourceError, LegacyStoreError) as exc:
        context["error"] = exc
        return render(request, MOVE_TEMPLATE, context, status=exc.portal_status)
    return render(request, MOVE_TEMPLATE, context)
