"""What happened to memory: a user's own Activity page, and the audit trail for support
staff (filters and CSV). Both read the append-only audit events."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from datetime import datetime, time

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from memory_ui.models import AuditEvent
from memory_ui.web.access import signed_in, support_required
from memory_ui.web.forms import AuditFilterForm

CSV_FIELDS = (
    "created_at", "actor_upn", "actor_oid", "actor_is_support", "subject_upn", "action",
    "scope", "agent_name", "agent_object_id", "reason", "ticket", "outcome", "error_status",
    "error_message", "bytes_before", "sha256_before", "bytes_after", "sha256_after",
    "correlation_id",
)  # fmt: skip


@require_GET
@login_required
def activity(request: HttpRequest) -> HttpResponse:
    """What happened to my memory, by me or by support staff (with reason and ticket)."""
    events = AuditEvent.objects.filter(subject_upn__iexact=signed_in(request).upn)
    page = Paginator(events, 50).get_page(request.GET.get("page"))
    context = {"page": page, "show_support_actor": settings.PORTAL_SHOW_SUPPORT_ACTOR}
    return render(request, "memory_ui/activity.html", context)


def _filtered(form: AuditFilterForm) -> QuerySet[AuditEvent]:
    events = AuditEvent.objects.all()
    if not form.is_valid():
        return events.none()
    data = form.cleaned_data
    if data["subject"]:
        events = events.filter(subject_upn__iexact=data["subject"].strip())
    if data["actor"]:
        events = events.filter(actor_upn__iexact=data["actor"].strip())
    if data["action"]:
        events = events.filter(action=data["action"])
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
    yield writer.writerow(CSV_FIELDS)
    for event in events.iterator(chunk_size=500):
        yield writer.writerow([_csv_cell(getattr(event, name)) for name in CSV_FIELDS])


def _csv_cell(value: object) -> object:
    # Reasons are typed by people: keep spreadsheets from running them as formulas.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


@require_GET
@support_required
def support_audit(request: HttpRequest) -> HttpResponse:
    form = AuditFilterForm(request.GET or None)
    events = _filtered(form) if request.GET else AuditEvent.objects.all()
    if request.GET.get("format") == "csv":
        response = StreamingHttpResponse(_csv_rows(events), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="memory-audit.csv"'
        return response
    page = Paginator(events, 50).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {"form": form, "page": page, "query": query.urlencode()}
    return render(request, "memory_ui/support/audit.html", context)
