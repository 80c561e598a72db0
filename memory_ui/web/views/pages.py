"""Reading memory: the dashboard, its cards (one htmx request each), and memory pages."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import HttpResponse
from django.views.decorators.http import require_GET

from memory_ui.models import MemoryVisit
from memory_ui.resurfacing import Deletions, deletions_of
from memory_ui.sources.agent_memory import USER_MEMORY_LABEL, Loaded, Target
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_source, memory_store
from memory_ui.visits import first_visit, new_entries, visit_record, visits_of
from memory_ui.web.access import listed_agents, signed_in, target_for, user_actor, user_agents
from memory_ui.web.forms import AgentListForm, CardsForm, QuickSearchForm
from memory_ui.web.htmx import HtmxHttpRequest, render_fragment, render_page
from memory_ui.web.links import target_url
from memory_ui.web.parts import PartView, card_batches, joined, parts_html, returned
from memory_ui.web.screens import memory_page

# Set by portal.js: this browser runs the page's scripts, so the dashboard may leave its
# agents section for them to fetch.
SCRIPTS_COOKIE = "portal_scripts"


@require_GET
@login_required
def dashboard(request: HtmxHttpRequest) -> HttpResponse:
    """The cards load in batches as they come into view (one request, and one round of
    concurrent CoreAPI calls, per batch). The agent list is listed before the page only
    when the browser may not run scripts or the list is already at hand: otherwise the
    first paint waits for no CoreAPI call, and the agents section fetches itself."""
    listing = AgentListForm(request.GET)
    if (
        not request.htmx
        and request.COOKIES.get(SCRIPTS_COOKIE) == "1"
        and "agents" not in request.GET
        and listed_agents(request) is None
    ):
        context = {"agents_later": True, "search": QuickSearchForm()}
        return render_page(request, "memory_ui/dashboard.html", "agents", context)
    try:
        agents, error = user_agents(request), None
    except SourceError as exc:
        agents, error = [], exc
    listed = listing.chosen(agents)
    return render_page(
        request,
        "memory_ui/dashboard.html",
        "agents",
        {
            "agents": agents,
            "batch_html": card_batches(listed, settings.PORTAL_COREAPI_FAN_OUT),
            "listed": len(listed),
            "listing": listing,
            "search": QuickSearchForm(),
            "agents_error": error,
        },
        status=error.portal_status if error else 200,
    )


def _came_back(loaded: Loaded, deletions: Deletions) -> int:
    """How many of the memory's entries the person deleted before (read from what the card
    loaded; parsed only when they deleted anything)."""
    if not deletions.deleted or loaded.document is None:
        return 0
    return deletions.count(memory_source(), (entry.body for entry in loaded.document.entries))


def _card_context(
    loaded: Loaded, visits: dict[str, MemoryVisit], deletions: Deletions, agent_name: str = ""
) -> dict[str, object]:
    visit = visits.get(loaded.key)
    return {
        "card": loaded,
        "new_count": len(new_entries(loaded, visit, first_visit(visits))),
        "came_back": _came_back(loaded, deletions),
        "opened": visit is not None,
        "agent": loaded.target.agent,
        "agent_name": agent_name,
        "card_id": f"card-agent-{agent_name}" if agent_name else "card-user",
    }


@require_GET
@login_required
def card(request: HtmxHttpRequest, scope: str, agent_name: str = "") -> HttpResponse:
    """One dashboard card (the shared memory's, or one agent's when retried)."""
    try:
        loaded = memory_store().load(user_actor(request), target_for(request, scope, agent_name))
    except SourceError as exc:
        loaded = Loaded(Target("user"), error=exc)  # the agent list failed: no target to show
    return render_fragment(
        request,
        "memory_ui/card.html#card",
        _card_context(
            loaded,
            visits_of(signed_in(request).oid),
            deletions_of(signed_in(request).upn),
            agent_name,
        ),
        status=loaded.error.portal_status if loaded.error else 200,
    )


@require_GET
@login_required
def cards(request: HtmxHttpRequest) -> HttpResponse:
    """A batch of agent cards (`?name=…&name=…`), their memories read concurrently. A card
    whose memory failed shows its own error and Retry; the batch itself answers 200. The
    batch keeps the id of the one it replaces (card_batch.html: its first agent's name),
    where focus returns if the answer has no card to keep it (portal.js)."""
    names = request.GET.getlist("name")
    batch_id = f"cards-{names[0]}" if names else ""
    try:
        agents = user_agents(request)
    except SourceError as exc:
        context = {"error": exc, "batch_id": batch_id}
        return render_fragment(
            request, "memory_ui/card.html#batch_error", context, status=exc.portal_status
        )
    form = CardsForm(request.GET, agents, settings.PORTAL_COREAPI_FAN_OUT)
    if not form.is_valid():
        raise BadRequest("Unknown agents, or too many at once.")
    by_name = {agent.name: agent for agent in agents}
    targets = [Target("agent", by_name[name]) for name in form.cleaned_data["name"]]
    loaded = memory_store().load_many(user_actor(request), targets)
    visits = visits_of(signed_in(request).oid)
    deletions = deletions_of(signed_in(request).upn)  # one query for the batch
    cards = [_card_context(one, visits, deletions, one.target.agent_name) for one in loaded]
    context = {"cards": cards, "batch_id": batch_id}
    return render_fragment(request, "memory_ui/card.html#batch", context)


@require_GET
@login_required
def show(request: HtmxHttpRequest, scope: str, agent_name: str = "") -> HttpResponse:
    """A memory page (user, agent or combined: the route names the scope)."""
    try:
        target = target_for(request, scope, agent_name)
    except SourceError as exc:
        return render_page(
            request,
            "memory_ui/memory.html",
            "content",
            {"error": exc, "title": agent_name, "scope": scope},
            status=exc.portal_status,
        )
    if scope == "combined":
        return combined_page(request, target)
    loaded = memory_store().load(user_actor(request), target)
    visit = None
    if not request.htmx:
        # Opening the page is a visit; its htmx requests (Show more, views) are the same one.
        visit = visit_record(signed_in(request).oid, loaded, keep_marks=True)
    return memory_page(request, loaded, visit=visit)


def _group(loaded: Loaded, heading: str, deletions: Deletions) -> dict[str, object]:
    """One group of "What it sees": the first page of one memory's parts (bounded like any
    memory page), each linking to where it lives, those the person deleted before marked;
    a link to its page when there are more."""
    home = target_url(loaded.target)
    group: dict[str, object] = {"heading": heading, "loaded": loaded, "home_url": home}
    prepared = loaded.prepared
    if prepared is not None and prepared.document.text.strip():
        page = prepared.page(1)
        group["page"] = page
        group["document"] = prepared.document
        if page is not None:
            shown = PartView(memory_url=home, linked=True)
            cards = returned(parts_html(prepared, page, shown), deletions, memory_source())
            group["cards"], group["cards_html"] = cards, joined(cards)
    return group


def combined_page(request: HtmxHttpRequest, target: Target) -> HttpResponse:
    """What an agent sees, as the same entry cards as its two memories' own pages: the
    shared memory's and the agent's, each read on its own (not split out of the combined
    text), so every entry links to the page where it can be changed."""
    assert target.agent is not None
    shared, own = memory_store().load_many(
        user_actor(request), [Target("user"), Target("agent", target.agent)]
    )
    both = (shared, own)
    deletions = deletions_of(signed_in(request).upn)  # one query for both groups
    context = {
        "target": target,
        "scope": target.scope,
        "agent": target.agent,
        "title": target.title,
        "memory_url": target_url(target),
        "groups": [
            _group(shared, USER_MEMORY_LABEL, deletions),
            _group(own, f"Only {target.agent.display_name}", deletions),
        ],
        "sees_nothing": all(
            loaded.memory is not None and not loaded.memory.content_markdown.strip()
            for loaded in both
        ),
    }
    errors = [loaded.error for loaded in both if loaded.error is not None]
    # One memory failing leaves the other's group on the page (200); both failing is the error.
    status = max(error.portal_status for error in errors) if len(errors) == 2 else 200
    return render_page(request, "memory_ui/memory.html", "content", context, status=status)
