"""Sensitive data: which of the user's entries look like secrets or regulated data, to
review and delete (memory_ui.memory.sensitive does the looking).

Every memory the user has (shared and each agent's own) is read with one fan-out and
scanned on this request; nothing found is stored, cached or logged. The dashboard's notice
needs only how many entries were flagged: that count is remembered per document version
(`memory.flag_counts`), so a memory that did not change is not scanned again. Deleting
goes through the memory page's own delete forms (POST /memory/entries/delete or
/memory/items/delete, with their version check), which land on that memory page with Undo.
An entry the person deleted before that came back says so, and its Delete reads "Delete
again" (memory_ui/resurfacing.py: one query for the page).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET

from memory_ui.memory.flag_counts import flag_count
from memory_ui.memory.sensitive import Flagged, Scan, sensitive_scan
from memory_ui.resurfacing import Deletions, deletions_of
from memory_ui.sources.agent_memory import Loaded
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_source
from memory_ui.web.access import signed_in
from memory_ui.web.htmx import HtmxHttpRequest, render_fragment, render_page
from memory_ui.web.links import target_url
from memory_ui.web.screens import every_memory


@dataclass(frozen=True)
class Shown:
    """A flagged part as the review lists it, with when the person deleted it before if it
    is an entry that came back."""

    flagged: Flagged
    came_back: datetime | None = None


@dataclass(frozen=True)
class Reviewed:
    """One memory as the review shows it: what was flagged in it (`shown`), or why it
    could not be read."""

    loaded: Loaded
    scan: Scan | None
    url: str
    shown: list[Shown] = field(default_factory=list)

    @property
    def flagged_count(self) -> int:
        return len(self.scan.flagged) if self.scan else 0


@dataclass(frozen=True)
class Review:
    """What the review shows: each memory of the user and what was flagged in it, or why
    their memories could not be listed (`error`)."""

    reviewed: list[Reviewed] = field(default_factory=list)
    error: SourceError | None = None

    @property
    def flagged_total(self) -> int:
        return sum(r.flagged_count for r in self.reviewed)

    @property
    def unread(self) -> list[Reviewed]:
        return [r for r in self.reviewed if r.loaded.error]

    @property
    def partial(self) -> list[Reviewed]:
        return [r for r in self.reviewed if r.scan and not r.scan.complete]

    @property
    def status(self) -> int:
        return self.error.portal_status if self.error else 200


def _review(request: HtmxHttpRequest) -> Review:
    """Every memory of the user, scanned."""
    try:
        loaded = every_memory(request)
    except SourceError as exc:
        return Review(error=exc)
    deletions = deletions_of(signed_in(request).upn)
    return Review([_reviewed(one, deletions) for one in loaded])


def _reviewed(loaded: Loaded, deletions: Deletions) -> Reviewed:
    if loaded.document is None:
        return Reviewed(loaded, None, target_url(loaded.target))
    scan = sensitive_scan(loaded.document, phone_region=settings.PORTAL_PHONE_REGION)
    source = memory_source()

    def came_back(flagged: Flagged) -> datetime | None:
        # Entries only, as on the memory page (a list item of a document without entries
        # is not flagged there either).
        entry = flagged.part.entry
        return deletions.came_back(source, entry.body) if entry else None

    shown = [Shown(flagged, came_back(flagged)) for flagged in scan.flagged]
    return Reviewed(loaded, scan, target_url(loaded.target), shown)


@require_GET
@login_required
def review(request: HtmxHttpRequest) -> HttpResponse:
    """Flagged entries across all the user's memories, grouped by memory."""
    page = _review(request)
    return render_page(
        request, "memory_ui/sensitive.html", "review", {"review": page}, status=page.status
    )


@require_GET
@login_required
def notice(request: HtmxHttpRequest) -> HttpResponse:
    """The dashboard's notice, loaded after the first paint; without htmx, the review."""
    if not request.htmx:
        return redirect("sensitive_review")
    try:
        loaded = every_memory(request)
    except SourceError as exc:
        return render_fragment(request, "memory_ui/sensitive.html#notice", {"load_error": exc})
    region = settings.PORTAL_PHONE_REGION
    counts = [
        flag_count(one.memory.content_markdown, lambda one=one: one.document, region)
        for one in loaded
        if one.memory is not None
    ]
    context = {
        "flagged_total": sum(count.flagged for count in counts),
        "unread": [one for one in loaded if one.error],
    }
    return render_fragment(request, "memory_ui/sensitive.html#notice", context)
