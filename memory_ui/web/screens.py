"""What several screens show alike, so no view module imports another: why a change
failed (`not_done`), a memory's page after a change as on a visit (`memory_context`,
`memory_page`), and the page for a CoreAPI failure before a form could be built
(`failure_page`)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse

from memory_ui.coreapi import CoreAPIError
from memory_ui.memory.operations import Loaded
from memory_ui.web.forms import ViewForm
from memory_ui.web.htmx import HtmxHttpRequest, as_whole_page, render_fragment, render_page
from memory_ui.web.links import target_query, target_url
from memory_ui.web.parts import PartView, parts_html
from memory_ui.web.stores.undo import undo_record


def not_done(prefix: str, error: CoreAPIError) -> str:
    """Why a change failed: "Nothing was …" only when that is certain (a write that got
    no answer may still be applied)."""
    return error.message if error.outcome_unknown else f"{prefix} {error.message}"


def memory_context(
    loaded: Loaded, view: str = "rendered", page: int | None = None, entry: int | None = None
) -> dict[str, object]:
    """What memory.html shows of one memory (after a change as well as on a visit): one
    page of it (`memory_ui.memory.paging`), the one holding `entry` when that is given."""
    target = loaded.target
    context: dict[str, object] = {
        "target": target,
        "scope": target.scope,
        "agent": target.agent,
        "title": target.title,
        "memory": loaded.memory,
        "error": loaded.error,
        "view": view,
        "memory_url": target_url(target),
    }
    prepared = loaded.prepared
    if prepared is not None:
        number = page or (prepared.page_of_entry(entry) if entry is not None else 1)
        context["document"] = prepared.document
        context["rewritable"] = loaded.rewritable
        if view == "raw":
            context["raw"] = prepared.raw_page(number) or prepared.raw_page(1)
        else:
            page = context["page"] = prepared.page(number) or prepared.page(1)
            deletable = target.scope != "combined" and loaded.rewritable
            edit_url = ""
            if deletable and prepared.document.structured:
                edit_url = f"{reverse('memory_entry_edit')}?{urlencode(target_query(target))}"
            shown = PartView(deletable, target_url(target), edit_url)
            context["part_html"] = parts_html(prepared, page, shown)
    return context


def memory_page(
    request: HtmxHttpRequest, loaded: Loaded, *, status: int = 200, **extra: object
) -> HttpResponse:
    """The memory page, or for htmx its #memory-content fragment, or for "Show more" the
    next entries only."""
    if loaded.error is not None:
        status = max(status, loaded.error.portal_status)
    context = {**memory_context(loaded, **ViewForm.chosen(request.GET)), **extra}
    undo = request.GET.get("undo", "")
    if undo and "undo_label" not in extra:
        # After a delete without JavaScript: the notice names what went, from the session
        # (never from the URL, which would carry memory content into logs).
        record = undo_record(request.session, undo, loaded.target)
        context["undo_label"] = record.label if record else ""
    if request.htmx and request.htmx.target == "show-more" and loaded.error is None:
        return render_fragment(request, "memory_ui/memory.html#parts", context)
    return render_page(request, "memory_ui/memory.html", "content", context, status=status)


def failure_page(
    request: HtmxHttpRequest, error: CoreAPIError, back_url: str, what: str, kept_text: str = ""
) -> HttpResponse:
    """CoreAPI failed before the page could be built; `kept_text` is what the user typed."""
    response = render(
        request,
        "memory_ui/transfer_error.html",
        {"error": error, "back_url": back_url, "what": what, "kept_text": kept_text},
        status=error.portal_status,
    )
    return as_whole_page(request, response)
