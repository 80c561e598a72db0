"""What happened to memory: a user's own Activity page, and the audit trail for support
staff (filters and CSV). Both read the append-only audit events, and both name each
memory as every other page does (`Target.label`): events keep agent names, shown by their
display names where the portal knows them (`audit.agent_names_known`), and each event's
memory system by its name for people (`audit.source_label`, the one place for it). A
person's own rows link to the memory, or to another system's target (a legacy store), where
that page still exists."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, time
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.sessions.backends.base import SessionBase
from django.core.paginator import Paginator
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, QueryDict, StreamingHttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from memory_ui import auth
from memory_ui.audit import agent_names_known, agent_names_remember, source_items, source_label
from memory_ui.models import AuditEvent, ErasureReceipt
from memory_ui.sources import registry
from memory_ui.sources.agent_memory import USER_MEMORY_LABEL, Agent, Target, target_key
from memory_ui.sources.protocol import Source, SourceError
from memory_ui.web.access import signed_in, support_required, user_agents
from memory_ui.web.forms.support import ActivityFilterForm, AuditFilterForm
from memory_ui.web.htmx import HtmxHttpRequest, render_page
from memory_ui.web.links import target_url
from memory_ui.web.source_pages import source_target_url
from memory_ui.web.stores.support import person_id, person_upn

PAGE_SIZE = 25
RECEIPTS_SHOWN = 20  # the newest; each is also an event below

CSV_FIELDS = (
    "created_at", "actor_upn", "actor_oid", "actor_is_support", "subject_upn", "action",
    "scope", "agent_name", "agent_object_id", "reason", "ticket", "outcome", "error_status",
    "error_message", "bytes_before", "sha256_before", "bytes_after", "sha256_after",
    "correlation_id", "source", "destination_scope", "destination_agent_name",
    "destination_agent_object_id", "destination_bytes_after", "destination_sha256_after",
    "count",
)  # fmt: skip


@dataclass(frozen=True)
class EventRow:
    """One event as a table row: the memory it was about (None for a look-up) and, on the
    user's own Activity page, the link to that memory."""

    event: AuditEvent
    target: Target | None
    url: str = ""
    destination: Target | None = None  # where an entry went (moved or copied)

    @property
    def system(self) -> str:
        """The memory system the event was about, by its name for people."""
        return source_label(self.event.source)

    @property
    def memory(self) -> str:
        """The memory's name; on another system's row its target's, as its events keep it
        (`system` names the rest)."""
        if self.event.source != _primary():
            return self.event.agent_object_id or f"Every {_targets_of(self.event.source)}"
        return self.target.label if self.target else "—"

    @property
    def what(self) -> str:
        """The action: for an entry moved or copied, from where to where; for several
        entries or files at once, how many."""
        done = self.event.get_action_display()
        if self.destination is not None:
            return f"{done} from {self.memory} to {self.destination.label}"
        count = self.event.count
        if count is None or count == 1:
            return done
        items = source_items(self.event.source, count)
        if self.event.action == AuditEvent.Action.DELETE_ENTRY:
            return f"Deleted {items}"
        return f"{done} · {items}"


def event_target(event: AuditEvent, agents: dict[str, Agent]) -> Target | None:
    """The memory `event` was about, named by `agents` (name -> Agent) where known."""
    if event.scope == "user":
        return Target("user")
    if event.scope in ("agent", "combined") and event.agent_name:
        agent = agents.get(event.agent_name) or Agent(
            event.agent_name, event.agent_object_id, event.agent_name
        )
        return Target(event.scope, agent)
    return None


def event_destination(event: AuditEvent, agents: dict[str, Agent]) -> Target | None:
    """Where an entry moved or copied went (None for every other event)."""
    if event.destination_scope == "user":
        return Target("user")
    if event.destination_scope == "agent" and event.destination_agent_name:
        name = event.destination_agent_name
        agent = agents.get(name) or Agent(name, event.destination_agent_object_id, name)
        return Target("agent", agent)
    return None


def _known_agents() -> dict[str, Agent]:
    return {name: Agent(name, "", display) for name, display in agent_names_known().items()}


def _page_query(request: HttpRequest) -> str:
    query = request.GET.copy()
    query.pop("page", None)
    return query.urlencode()


# --- a user's own Activity --------------------------------------------------------------


def _own_agents(request: HttpRequest) -> dict[str, Agent] | None:
    """The user's agents (their memory pages exist), or None when CoreAPI can't say now."""
    try:
        agents = user_agents(request)
    except (SourceError, auth.SignInRequired):
        # The events come from the portal's own database: show them all the same.
        return None
    agent_names_remember(agents)
    return {agent.name: agent for agent in agents}


def _primary() -> str:
    """The name events of the primary source keep (the field's default where none is
    configured)."""
    primary = next((source.name for source in registry.sources() if source.primary), None)
    return primary or AuditEvent._meta.get_field("source").get_default()


def _other(name: str) -> Source | None:
    """The configured source of that name beside the primary one (None: not configured)."""
    return next((source for source in registry.others() if source.name == name), None)


def _targets_of(name: str) -> str:
    """What one target of the source is called ("store"), "memory" where it is unknown."""
    source = _other(name)
    return source.targets[0] if source else "memory"


# In the Memory filter, an agent's memory is "agent:<name>" (`target_key`); any other
# "<system>:<key>" is a target of another system, as its events keep it.
AGENT_MEMORY = "agent:"


def _memory_choices(
    events: QuerySet[AuditEvent], own: Iterable[str], names: dict[str, Agent]
) -> list[tuple[str, str]]:
    """Shared memory, then every agent the user has or the primary source's events name,
    by display name, then every target of another system their events name, as the rows
    name it."""

    def label(name: str) -> str:
        return names[name].display_name if name in names else name

    primary = Q(source=_primary())
    names_of = events.order_by().filter(primary).exclude(agent_name="")
    mentioned = names_of.values_list("agent_name", flat=True)
    agents = sorted({*mentioned, *own}, key=lambda name: label(name).casefold())
    targets_of = events.order_by().exclude(primary).exclude(agent_object_id="")
    targets = sorted(set(targets_of.values_list("source", "agent_object_id")))
    return [
        ("user", USER_MEMORY_LABEL),
        *((target_key("agent", n), label(n)) for n in agents),
        *((f"{source}:{key}", key) for source, key in targets),
    ]


def _activity_filtered(
    events: QuerySet[AuditEvent], form: ActivityFilterForm
) -> QuerySet[AuditEvent]:
    if not form.is_bound:
        return events
    if not form.is_valid():
        return events.none()
    memory, action = form.cleaned_data["memory"], form.cleaned_data["action"]
    if system := form.cleaned_data["system"]:
        events = events.filter(source=system)
    # An entry moved or copied is about both memories: it is listed under either.
    if memory == "user":
        events = events.filter(Q(scope="user") | Q(destination_scope="user"))
    elif memory.startswith(AGENT_MEMORY):
        # An agent's memory: its own document and what it sees (which includes the shared
        # one), not another system's target kept for the same agent (a memory of its own).
        name = memory.removeprefix(AGENT_MEMORY)
        events = events.filter(Q(agent_name=name) | Q(destination_agent_name=name))
        events = events.filter(source=_primary())
    elif memory:
        system, _, key = memory.partition(":")
        events = events.filter(source=system, agent_object_id=key)
    if action:
        events = events.filter(action=action)
    return events


def _own_url(event: AuditEvent, target: Target | None, own: dict[str, Agent]) -> str:
    """Where a row of the user's own Activity links: the memory's page (shared memory, or an
    agent they still have), or another system's target page while the portal is still
    configured with that target; else nowhere (its page would be a 404)."""
    if event.source != _primary():
        source, key = _other(event.source), event.agent_object_id
        return source_target_url(source, key) if source and key in source.target_keys else ""
    if target is None or (target.agent is not None and target.agent_name not in own):
        return ""
    return target_url(target)


@require_GET
@login_required
def activity(request: HtmxHttpRequest) -> HttpResponse:
    """What happened to my memory, by me or by support staff (with reason and ticket)."""
    upn = signed_in(request).upn
    events = AuditEvent.objects.filter(subject_upn__iexact=upn)
    own = _own_agents(request)
    names = {**_known_agents(), **(own or {})}
    choices = _memory_choices(events, own or {}, names)
    form = ActivityFilterForm(request.GET or None, memory_choices=choices)
    page = Paginator(_activity_filtered(events, form), PAGE_SIZE).get_page(request.GET.get("page"))
    rows = []
    for event in page.object_list:
        target = event_target(event, names)
        url = _own_url(event, target, own or {})
        rows.append(EventRow(event, target, url, event_destination(event, names)))
    context = {
        "form": form,
        "page": page,
        "rows": rows,
        "query": _page_query(request),
        "filtered": form.is_bound,
        "show_support_actor": settings.PORTAL_SHOW_SUPPORT_ACTOR,
        "agents_unavailable": own is None,
        "receipts": ErasureReceipt.objects.filter(subject_upn__iexact=upn)[:RECEIPTS_SHOWN],
    }
    return render_page(request, "memory_ui/activity.html", "events", context)


# --- the audit trail (support staff) ----------------------------------------------------


def _filtered(form: AuditFilterForm) -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.all()
    if not form.is_valid():
        return events.none()
    data = form.cleaned_data
    if data["subject"]:
        events = events.filter(subject_upn__iexact=data["subject"].strip())
    if data["actor"]:
        events = events.filter(actor_upn__iexact=data["actor"].strip())
    if data["ticket"]:
        events = events.filter(ticket=data["ticket"].strip())
    if data["action"]:
        events = events.filter(action=data["action"])
    if data["system"]:
        events = events.filter(source=data["system"])
    tz = timezone.get_current_timezone()
    if data["date_from"]:
        events = events.filter(created_at__gte=datetime.combine(data["date_from"], time.min, tz))
    if data["date_to"]:
        events = events.filter(created_at__lte=datetime.combine(data["date_to"], time.max, tz))
    return events


class _Echo:
    def write(self, value: str) -> str:
        return value


def _csv_rows(events: QuerySet[AuditEvent]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    names = _known_agents()
    # After the recorded fields, as the page names them: the memory and its system.
    yield writer.writerow((*CSV_FIELDS, "memory", "system"))
    for event in events.iterator(chunk_size=500):
        row = EventRow(event, event_target(event, names))
        cells = [getattr(event, name) for name in CSV_FIELDS]
        memory = row.memory if row.memory != "—" else ""
        yield writer.writerow([_csv_cell(v) for v in (*cells, memory, row.system)])


def _csv_cell(value: object) -> object:
    # Reasons are typed by people: keep spreadsheets from running them as formulas.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


# People in the trail's filters travel as this session's opaque ids (`person_id`), never
# as UPNs: a filter's address ends up in access logs, browser history and Referer headers.
PEOPLE_FILTERS = ("subject", "actor")


def _filter_query(session: SessionBase, data: dict[str, object]) -> str:
    """A valid filter as the trail's query string, people as ids."""
    query = {}
    for name, value in data.items():
        if value and name in PEOPLE_FILTERS:
            query[name] = person_id(session, str(value).strip())
        elif value:
            query[name] = value.isoformat() if isinstance(value, date) else value
    return urlencode(query)


def _filter_data(request: HttpRequest) -> QueryDict | None:
    """The query's filter with people's ids turned back into UPNs; None when an id is not
    this session's (it ended since, or the address came from someone else)."""
    data = request.GET.copy()
    for name in PEOPLE_FILTERS:
        if pid := data.get(name):
            upn = person_upn(request.session, pid)
            if upn is None:
                return None
            data[name] = upn
    return data


@require_http_methods(["GET", "POST"])
@support_required
def support_audit(request: HtmxHttpRequest) -> HttpResponse:
    """The audit trail. Its filter form is a POST (CSRF-checked) that comes back as a GET
    with people as ids, so pages, the CSV link and reloads keep the filter."""
    if request.method == "POST":
        form = AuditFilterForm(request.POST)
        if form.is_valid():
            query = _filter_query(request.session, form.cleaned_data)
            return redirect(f"{reverse('support_audit')}{'?' if query else ''}{query}")
        return _audit_page(request, form, AuditEvent.objects.none(), status=400)
    data = _filter_data(request)
    if data is None:
        messages.warning(request, "That filter is not open in this session any more: filter again.")
        return redirect("support_audit")
    form = AuditFilterForm(data or None)
    events = _filtered(form) if data else AuditEvent.objects.all()
    if request.GET.get("format") == "csv":
        response = StreamingHttpResponse(_csv_rows(events), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="memory-audit.csv"'
        return response
    return _audit_page(request, form, events)


def _audit_page(
    request: HtmxHttpRequest,
    form: AuditFilterForm,
    events: QuerySet[AuditEvent],
    status: int = 200,
) -> HttpResponse:
    page = Paginator(events, 50).get_page(request.GET.get("page"))
    names = _known_agents()
    rows = [
        EventRow(event, event_target(event, names), destination=event_destination(event, names))
        for event in page.object_list
    ]
    context = {"form": form, "page": page, "rows": rows, "query": _page_query(request)}
    return render_page(request, "memory_ui/support/audit.html", "events", context, status=status)
