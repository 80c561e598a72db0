"""Select and delete many entries at once: choose by filter (the search form's memory,
reason, dates and words) or tick them one by one (here, on a memory page or in search
results, which post to the same preview), see what would go (how many, from which
memories, the line of each entry that matches and what else it holds), confirm once, and undo the whole batch with one Undo.

Plain GET and POST forms, so it all works without JavaScript. Memories are named by
target keys checked against the user's own agent list; entries by index at the version
the preview read, which the delete checks per memory (`memory_ui.memory.batch`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from functools import wraps
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from memory_ui.documents.versions import Version
from memory_ui.memory.batch import (
    Selection,
    amount,
    batch_delete,
    batch_restore,
    select_matching,
    select_picked,
    selection_came_back,
)
from memory_ui.memory.search import SearchQuery, day_range
from memory_ui.resurfacing import deletions_of
from memory_ui.sources.agent_memory import Target, all_targets
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_store
from memory_ui.web.access import signed_in, user_actor, user_agents
from memory_ui.web.forms import SearchForm
from memory_ui.web.htmx import HtmxHttpRequest
from memory_ui.web.stores.batch_undo import batch_undo_remember, batch_undo_take

FILTERS = ("q", "agent", "reason", "date_from", "date_to")
PICK = re.compile(r"^(user|agent:[a-z][a-z0-9-]{0,99}):(\d{1,7})$")
# A list item of a picked entry, to delete alone: "<key>:<index>:<start line>-<end line>".
ITEM = re.compile(r"^(user|agent:[a-z][a-z0-9-]{0,99}):(\d{1,7}):(\d{1,9})-(\d{1,9})$")
MAX_PICKS = 5000


def _query(form: SearchForm) -> SearchQuery:
    data = form.cleaned_data
    start, end = day_range(data["date_from"], data["date_to"], timezone.get_current_timezone())
    return SearchQuery(text=data["q"], reason=data["reason"], start=start, end=end)


def _picked(values: list[str], targets: dict[str, Target]) -> dict[str, set[int]]:
    """Ticked entries by memory: only well-formed ones in the user's own memories."""
    picked: dict[str, set[int]] = defaultdict(set)
    for value in values[:MAX_PICKS]:
        match = PICK.fullmatch(value)
        if match and match[1] in targets:
            picked[match[1]].add(int(match[2]))
    return picked


def _items(
    values: list[str], picked: dict[str, set[int]]
) -> dict[str, dict[int, list[tuple[int, int]]]]:
    """List items to delete alone, by memory and entry: only of entries that are picked."""
    items: dict[str, dict[int, list[tuple[int, int]]]] = defaultdict(lambda: defaultdict(list))
    for value in values[:MAX_PICKS]:
        match = ITEM.fullmatch(value)
        if match and int(match[2]) in picked.get(match[1], ()):
            items[match[1]][int(match[2])].append((int(match[3]), int(match[4])))
    return items


def _select_page(
    request: HtmxHttpRequest,
    form: SearchForm,
    selection: Selection | None,
    *,
    status: int = 200,
    error: SourceError | None = None,
) -> HttpResponse:
    if selection is not None:
        # Each entry listed that came back after the person deleted it says so (one query).
        selection = selection_came_back(selection, deletions_of(signed_in(request).upn))
    context = {
        "form": form,
        "selection": selection,
        "error": error,
        "time_zone": timezone.get_current_timezone_name(),
    }
    return render(request, "memory_ui/batch/select.html", context, status=status)


def _filtered(view: Callable[[HtmxHttpRequest, SearchForm], HttpResponse]):
    """The door of select and preview: the filter (the query or the form posted) over the
    user's own agents, handed to the view as `view(request, form)`; when the agents cannot
    be listed, the select page saying so."""

    @wraps(view)
    def wrapper(request: HtmxHttpRequest) -> HttpResponse:
        try:
            agents = user_agents(request)
        except SourceError as exc:
            form = SearchForm(agents=None)
            return _select_page(request, form, None, status=exc.portal_status, error=exc)
        data = request.POST if request.method == "POST" else request.GET
        return view(request, SearchForm(data or None, agents=agents))

    return wrapper


def _own_targets(view: Callable[[HtmxHttpRequest, dict[str, Target]], HttpResponse]):
    """The door of delete and undo: the user's own memories by target key (the only ones a
    posted key may name), handed to the view; when the agents cannot be listed, nothing is
    changed and the result page says why (before an Undo token is used up)."""

    @wraps(view)
    def wrapper(request: HtmxHttpRequest) -> HttpResponse:
        try:
            agents = user_agents(request)
        except SourceError as exc:
            messages.error(request, f"Nothing was changed. {exc.message}")
            return render(request, "memory_ui/batch/done.html", {}, status=exc.portal_status)
        return view(request, {t.key: t for t in all_targets(agents)})

    return wrapper


def _back_url(request: HtmxHttpRequest) -> str:
    """Where the preview's Cancel goes: the page the selection was made on (a memory page
    and search results post `back`; only a path on this site), else /memory/select with the
    same filter (never the ticks or the CSRF token in a URL)."""
    back = request.POST.get("back", "")
    if back.startswith("/") and url_has_allowed_host_and_scheme(back, allowed_hosts=None):
        return back
    filters = {name: request.POST.get(name, "") for name in FILTERS}
    return f"{reverse('batch_select')}?{urlencode(filters)}"


@require_GET
@login_required
@_filtered
def select(request: HtmxHttpRequest, form: SearchForm) -> HttpResponse:
    """The filter, and every entry it matches with a checkbox."""
    if not form.is_bound:
        return _select_page(request, form, None)
    if not form.is_valid():
        return _select_page(request, form, None, status=400)
    loaded = memory_store().load_many(user_actor(request), form.targets())
    return _select_page(request, form, select_matching(loaded, _query(form)))


@require_POST
@login_required
@_filtered
def preview(request: HtmxHttpRequest, form: SearchForm) -> HttpResponse:
    """What would go: "Select all N matching" (the filter again) or the ticked entries
    (from /memory/select, search results or a memory page)."""
    if not form.is_valid():
        return _select_page(request, form, None, status=400)
    actor = user_actor(request)
    if request.POST.get("mode") == "all":
        selection = select_matching(memory_store().load_many(actor, form.targets()), _query(form))
    else:
        targets = {t.key: t for t in all_targets(form.agents)}
        picked = _picked(request.POST.getlist("pick"), targets)
        loaded = memory_store().load_many(actor, [targets[key] for key in picked])
        selection = select_picked(loaded, picked, _query(form))
    if not selection.total:
        messages.error(request, "Nothing is chosen: tick entries, or select all matching.")
        loaded = memory_store().load_many(actor, form.targets())
        return _select_page(request, form, select_matching(loaded, _query(form)), status=400)
    context = {"selection": selection, "back_url": _back_url(request)}
    return render(request, "memory_ui/batch/preview.html", context)


@require_POST
@login_required
@_own_targets
def delete(request: HtmxHttpRequest, targets: dict[str, Target]) -> HttpResponse:
    """Delete what the preview showed, memory by memory, each only at the version read."""
    picked = _picked(request.POST.getlist("pick"), targets)
    versions = {key: Version.parse(request.POST.get(f"version-{key}", "")) for key in picked}
    if not picked or any(version is None for version in versions.values()):
        messages.error(request, "Nothing was deleted: the selection was incomplete.")
        return render(request, "memory_ui/batch/done.html", {}, status=400)
    # "Delete only the matching list items": the items the preview named, by line range.
    items = (
        _items(request.POST.getlist("item"), picked) if request.POST.get("scope") == "items" else {}
    )
    actor = user_actor(request)
    results = [
        batch_delete(actor, targets[key], version, picked[key], items.get(key))
        for key, version in versions.items()
        if version is not None
    ]
    token = batch_undo_remember(request.session, results)
    status = 409 if not any(r.done for r in results) else 200
    done = [r for r in results if r.done]
    context = {
        "deleted": results,
        "undo_token": token,
        "deleted_any": bool(done),
        "deleted_what": amount(sum(r.count for r in done), sum(r.items for r in done)),
    }
    return render(request, "memory_ui/batch/done.html", context, status=status)


@require_POST
@login_required
@_own_targets
def undo(request: HtmxHttpRequest, targets: dict[str, Target]) -> HttpResponse:
    """One Undo for the whole batch: each memory back as it was, if nothing changed it since."""
    records = batch_undo_take(request.session, request.POST.get("token", ""))
    if records is None:
        messages.error(request, "Undo is no longer available; nothing was changed.")
        return render(request, "memory_ui/batch/done.html", {}, status=410)
    actor = user_actor(request)
    restored = [
        batch_restore(actor, targets[r.target_key], r.before, r.after, r.count, r.items)
        for r in records
        if r.target_key in targets
    ]
    status = 200 if all(r.done for r in restored) else 409
    return render(request, "memory_ui/batch/done.html", {"restored": restored}, status=status)
