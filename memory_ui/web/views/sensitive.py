"""Sensitive data: which of the user's entries look like secrets or regulated data, to
review and delete (memory_ui.memory.sensitive does the looking).

Every memory the user has (shared and each agent's own) is read with one fan-out and
scanned on this request; nothing found is stored, cached or logged. The dashboard's notice
needs only how many entries were flagged: that count is remembered per document version
(`memory.flag_counts`), so a memory that did not change is not scanned again. Deleting
goes through the memory page's own delete forms (POST /memory/entries/delete or
/memory/items/delete, with their version check), which land on that memory page with Undo.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET

from memory_ui.memory.flag_counts import flag_count
from memory_ui.memory.sensitive import Scan, sensitive_scan
from memory_ui.sources.agent_memory import Loaded
from memory_ui.sources.protocol import SourceError
from memory_ui.web.htmx import HtmxHttpRequest, render_fragment, render_page
from memory_ui.web.links import target_url
from memory_ui.web.screens import every_memory


@dataclass(frozen=True)
class Reviewed:
    """One memory as the review shows it: what was flagged in it, or why it could not be
    read."""

    loaded: Loaded
    scan: Scan | None
    url: str

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
    region = settings.PORTAL_PHONE_REGION
    return Review(
        [
            Reviewed(
                one,
                sensitive_scan(one.document, phone_region=region) if one.document else None,
                target_url(one.target),
            )
            for one in loaded
        ]
    )


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
