"""A memory's History: who changed it and when (the person's own changes with their diff,
support's actions from the audit trail, agents' entries by their headings' dates), and
"Restore this version" for the version before each of the person's changes (kept
encrypted for PORTAL_HISTORY_RETENTION_DAYS: memory_ui/history.py)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, HttpResponse
from django.urls import reverse

from memory_ui.audit import Action
from memory_ui.documents.parse import parse_document
from memory_ui.history import Change, version_find, versions_of, with_arrivals
from memory_ui.identity import Actor
from memory_ui.models import AuditEvent
from memory_ui.resurfacing import deletions_forget, person_of
from memory_ui.sources.agent_memory import MemoryChanged, Target
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_source, memory_store
from memory_ui.web import forms
from memory_ui.web.access import as_named, on_memory
from memory_ui.web.errors import AgentsUnlisted
from memory_ui.web.history_lines import Happened, action_labels, your_changes
from memory_ui.web.htmx import HtmxHttpRequest, redirect_to, render_page
from memory_ui.web.links import target_query
from memory_ui.web.screens import not_done, saved_notices


def _support(upn: str, target: Target) -> list[Happened]:
    """Support's actions on this memory, from the audit trail."""
    labels = action_labels()
    events = AuditEvent.objects.filter(
        subject_upn__iexact=upn,
        actor_is_support=True,
        scope=target.scope,
        agent_name=target.agent_name,
    )[:200]
    return [
        Happened(event.created_at, "Support", labels.get(event.action, event.action))
        for event in events
    ]


def _agents(text: str) -> list[Happened]:
    """The memory's dated entries, by their headings (the provenance the writer gave)."""
    return [
        Happened(entry.timestamp, "An entry", f"{entry.provenance_label}: entry {entry.number}")
        for entry in parse_document(text).entries
        if entry.dated and entry.timestamp is not None
    ]


def _history_unlisted(request: HtmxHttpRequest, unlisted: AgentsUnlisted) -> HttpResponse:
    context = {"target": as_named(unlisted.form), "load_error": unlisted.error}
    return render_page(
        request, "memory_ui/history.html", "history", context, status=unlisted.error.portal_status
    )


@on_memory(_history_unlisted, methods=("GET",))
def history(request: HtmxHttpRequest, actor: Actor, target: Target) -> HttpResponse:
    """The History page of one of the person's own memories."""
    return _page(request, actor, target)


def _page(
    request: HtmxHttpRequest, actor: Actor, target: Target, error: str = "", status: int = 200
) -> HttpResponse:
    if not target.writable:
        raise Http404("A view has no history of its own.")
    try:
        memory = memory_store().read(actor, target)
    except SourceError as exc:
        context = {"target": target, "load_error": exc}
        return render_page(
            request, "memory_ui/history.html", "history", context, status=exc.portal_status
        )
    happened = (
        your_changes(versions_of(actor.who.upn, target.key))
        + _support(actor.who.upn, target)
        + _agents(memory.content_markdown)
    )
    happened.sort(key=lambda line: line.at, reverse=True)
    context = {
        "target": target,
        "memory": memory,
        "happened": happened,
        "error": error,
        "retention_days": settings.PORTAL_HISTORY_RETENTION_DAYS,
    }
    return render_page(request, "memory_ui/history.html", "history", context, status=status)


def _entries(text: str) -> list[str]:
    return [entry.source.strip() for entry in parse_document(text).entries if entry.dated]


def restored(change: Change, since: list[Change], now: str) -> str:
    """The version before `change`, followed by the dated entries of `now` that others,
    agents, added after it (`history.with_arrivals`)."""
    added = with_arrivals(change, since, now, _entries)
    if not added:
        return change.before
    kept = "\n\n".join(added)
    return f"{change.before.rstrip()}\n\n{kept}\n" if change.before.strip() else f"{kept}\n"


@on_memory(_history_unlisted, methods=("POST",))
def restore_version(request: HtmxHttpRequest, actor: Actor, target: Target) -> HttpResponse:
    """Put back the version before one of the person's changes, as a conditional write:
    what agents added since that change stays after it (`restored`), and so does what they
    appended while the History was open (`keep_arrivals`)."""
    form = forms.RestoreVersionForm(request.POST)
    if not form.is_valid():
        error = "Nothing was restored: the form was incomplete. Try again from this page."
        return _page(request, actor, target, error, status=400)
    change = version_find(actor.who.upn, target.key, form.cleaned_data["change"])
    if change is None or change.unreadable or not target.writable:
        raise Http404("No such version of this memory.")
    since = [c for c in versions_of(actor.who.upn, target.key) if c.id >= change.id]
    try:
        done = memory_store().rewrite(
            actor,
            target,
            lambda seen: restored(change, since, seen.content_markdown),
            started_from=form.cleaned_data["version"],
            action=Action.RESTORE_VERSION,
            keep_arrivals=True,
        )
    except MemoryChanged:
        error = (
            "Nothing was restored: this memory was changed since this page was shown. "
            "Here it is as it is now: restore again if you still want that version."
        )
        return _page(request, actor, target, error, status=409)
    except SourceError as exc:
        error = not_done("Nothing was restored.", exc)
        return _page(request, actor, target, error, status=exc.portal_status)
    # What the person put back is not something that came back (as after an Undo).
    restored_entries = parse_document(change.before).entries
    deletions_forget(person_of(actor), memory_source(), [e.body for e in restored_entries])
    saved_notices(
        request,
        done,
        f"Restored {target.name} as it was before your change of {change.at:%-d %B %Y, %H:%M} UTC.",
    )
    return redirect_to(request, f"{reverse('memory_history')}?{urlencode(target_query(target))}")
