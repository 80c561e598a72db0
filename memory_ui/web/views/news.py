"""New since your last visit: the What's new page (new entries across every memory, newest
first) and "Mark as seen" for one memory or all of them (`memory_ui.visits`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from memory_ui.documents import entry_label
from memory_ui.documents.versions import Version
from memory_ui.identity import Actor
from memory_ui.resurfacing import deletions_of
from memory_ui.sources.agent_memory import Loaded, Target, all_targets
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_source, memory_store
from memory_ui.visits import NewEntry, visit_record, visits_of, whats_new
from memory_ui.web import forms
from memory_ui.web.access import on_memory, signed_in, user_actor, user_agents
from memory_ui.web.errors import AgentsUnlisted
from memory_ui.web.htmx import HtmxHttpRequest
from memory_ui.web.links import entry_page_url, target_url
from memory_ui.web.screens import every_memory

FIRST_LINE = 120  # characters of an entry's first line shown on What's new


@dataclass(frozen=True)
class NewRow:
    """One line of What's new: which memory, when, why, and the entry's first line; when the
    person deleted the entry before, if it came back (`again_url`: its own page, where
    Delete reads "Delete again")."""

    new: NewEntry
    url: str
    first_line: str
    came_back: datetime | None = None
    again_url: str = ""


@dataclass
class WhatsNewPage:
    rows: list[NewRow] = field(default_factory=list)
    failed: list[Loaded] = field(default_factory=list)
    never_opened: list[Target] = field(default_factory=list)
    # The person has opened some memory here: the never opened ones count from then.
    counting: bool = False
    # The version each memory was read at, for "Mark all as seen" (`version-<key>`).
    versions: dict[str, str] = field(default_factory=dict)
    error: SourceError | None = None


def _page(request: HtmxHttpRequest) -> WhatsNewPage:
    try:
        loaded = every_memory(request)
    except SourceError as exc:
        return WhatsNewPage(error=exc)
    visits = visits_of(signed_in(request).oid)
    page = WhatsNewPage(
        failed=[one for one in loaded if one.error is not None],
        never_opened=[one.target for one in loaded if one.key not in visits and one.memory],
        versions={one.key: Version.of(one.memory).token() for one in loaded if one.memory},
        counting=bool(visits),
    )
    deletions, source = deletions_of(signed_in(request).upn), memory_source()
    for new in whats_new(loaded, visits):
        index = new.entry.index
        url = f"{target_url(new.target)}?entry={index}#entry-{index}"
        came_back = deletions.came_back(source, new.entry.body)
        again = entry_page_url(new.target, index) if came_back else ""
        first_line = entry_label(new.entry.body, FIRST_LINE)
        page.rows.append(NewRow(new, url, first_line, came_back, again))
    return page


@require_GET
@login_required
def whats_new_page(request: HtmxHttpRequest) -> HttpResponse:
    page = _page(request)
    status = page.error.portal_status if page.error else 200
    return render(request, "memory_ui/whats_new.html", {"page": page}, status=status)


def _nothing_marked(request: HtmxHttpRequest, error: SourceError) -> HttpResponse:
    messages.error(request, f"Nothing was marked as seen. {error.message}")
    return redirect("whats_new")


def _seen_unlisted(request: HtmxHttpRequest, unlisted: AgentsUnlisted) -> HttpResponse:
    return _nothing_marked(request, unlisted.error)


@on_memory(_seen_unlisted, methods=["POST"])
def mark_seen(request: HtmxHttpRequest, actor: Actor, target: Target) -> HttpResponse:
    """One memory seen as the page showed it (`version`). If it changed since, what came
    meanwhile would be marked seen unseen: nothing is recorded and the page says so."""
    form = forms.SeenForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Nothing was marked as seen. Please try again.")
        return redirect("whats_new")
    loaded = memory_store().load(actor, target)
    if loaded.memory is None or Version.of(loaded.memory).token() != form.cleaned_data["version"]:
        messages.warning(
            request,
            "This memory changed since the page was shown, so nothing was marked as seen. "
            "Here it is as it is now.",
        )
    else:
        visit_record(actor.who.oid, loaded, keep_marks=False)
        messages.success(request, "Marked as seen.")
    return redirect(target_url(target))


@require_POST
@login_required
def mark_all_seen(request: HtmxHttpRequest) -> HttpResponse:
    """Every memory the page listed, each only if it is still the version shown."""
    try:
        targets = all_targets(user_agents(request))
    except SourceError as exc:
        return _nothing_marked(request, exc)
    shown = {t.key: request.POST.get(f"version-{t.key}", "") for t in targets}
    loaded = memory_store().load_many(user_actor(request), [t for t in targets if shown[t.key]])
    oid = signed_in(request).oid
    changed = 0
    for one in loaded:
        if one.memory is not None and Version.of(one.memory).token() == shown[one.key]:
            visit_record(oid, one, keep_marks=False)
        else:
            changed += 1
    if changed:
        messages.warning(
            request,
            f"{changed} memor{'y' if changed == 1 else 'ies'} changed or could not be read "
            "since the page was shown, so their entries stay new.",
        )
    else:
        messages.success(request, "Marked everything as seen.")
    return redirect("whats_new")
