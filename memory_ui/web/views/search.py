"""Searching all of a user's memory: one GET form, results grouped by memory.

The same URL serves the page and, for htmx (the form updating as people type), its
#search-results fragment; a plain GET form works the same without JavaScript.
"""

from __future__ import annotations

from dataclasses import replace

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from memory_ui.memory.search import SearchQuery, day_range
from memory_ui.memory.source_search import SourceResults, search_counts, search_everywhere
from memory_ui.sources.agent_memory import Agent
from memory_ui.sources.protocol import SourceError
from memory_ui.web.access import user_actor, user_agents
from memory_ui.web.forms import SearchForm
from memory_ui.web.htmx import HtmxHttpRequest, render_fragment
from memory_ui.web.source_pages import named


@require_GET
@login_required
def search(request: HtmxHttpRequest) -> HttpResponse:
    """Search text, one memory, a reason and a date range; with no filters, everything."""
    try:
        agents: list[Agent] | None = user_agents(request)
        agents_error: SourceError | None = None
    except SourceError as exc:
        agents, agents_error = None, exc
    form = SearchForm(request.GET, agents=agents)
    results = None
    others: list = []
    status = 200
    if not form.is_valid():
        status = 400  # among them an agent not in the user's list: no memory is read
    elif agents_error is not None and not form.targets():
        status = agents_error.portal_status  # the agent chosen could not be looked up
    else:
        data = form.cleaned_data
        start, end = day_range(data["date_from"], data["date_to"], timezone.get_current_timezone())
        query = SearchQuery(text=data["q"], reason=data["reason"], start=start, end=end)
        # Without the agent list only the shared memory is searched; the page says why. One
        # memory chosen: the other sources are not it.
        results, found = search_everywhere(
            user_actor(request), form.targets(), query, others=not data["agent"]
        )
        titles = {agent.name: agent.display_name for agent in agents or []}
        others = [_named(each, titles) for each in found]
        errors = results.errors
        if agents_error is not None:
            status = agents_error.portal_status
        elif errors and len(errors) == len(results.memories):
            status = errors[0].portal_status  # nothing could be searched
    # htmx asks for the results alone, except to restore a page missing from its history
    # cache (back button), which needs the whole page.
    fragment = bool(request.htmx) and not request.htmx.history_restore_request
    name = "memory_ui/search.html" + ("#results" if fragment else "")
    context = {
        "form": form,
        "results": results,
        "counts": search_counts(results, others) if results is not None else None,
        "others": others,
        "agents_error": agents_error,
        "shared_choice": SearchForm.SHARED,
        "time_zone": timezone.get_current_timezone_name(),
        "oob": fragment,
    }
    return render_fragment(request, name, context, status=status)


def _named(found: SourceResults, titles: dict[str, str]) -> SourceResults:
    """Another system's results, each target kept for an agent named by its display name."""
    hits = [replace(hit, target=named(hit.target, titles)) for hit in found.hits]
    return replace(found, hits=hits)
