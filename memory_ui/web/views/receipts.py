"""Erasure receipts (memory/receipts.py): the signed JSON as written, and a printable page
of it. A person opens only receipts about themselves (from their Activity); support staff
open the receipt of a deletion request open in their session, from its result page."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from memory_ui.memory.receipts import receipt_details
from memory_ui.models import ErasureReceipt
from memory_ui.web.access import signed_in, support_required
from memory_ui.web.stores.support import request_get
from memory_ui.web.support_pages import LookedUp, support_door


def _own(request: HttpRequest, receipt_id: uuid.UUID) -> ErasureReceipt:
    """A receipt about the signed-in person; anyone else's is not there for them."""
    upn = signed_in(request).upn
    found = ErasureReceipt.objects.filter(id=receipt_id, subject_upn__iexact=upn).first()
    if found is None:
        raise Http404("No such receipt.")
    return found


def _of_request(request: HttpRequest, user: LookedUp, request_id: str) -> ErasureReceipt:
    """The receipt of a deletion request this session handled for `user`."""
    record = request_get(request.session, user.upn, request_id)
    if record is None or not record.receipt_id:
        raise Http404("No receipt for that deletion request in this session.")
    found = ErasureReceipt.objects.filter(
        id=record.receipt_id, subject_upn__iexact=user.upn
    ).first()
    if found is None:
        raise Http404("No such receipt.")
    return found


def _json(receipt: ErasureReceipt) -> HttpResponse:
    """The signed bytes exactly as written: `manage.py verify_receipt` checks this file."""
    response = HttpResponse(receipt.document.encode(), content_type="application/json")
    name = f"erasure-receipt-{receipt.created_at:%Y-%m-%d}-{str(receipt.id)[:8]}.json"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def _page(
    request: HttpRequest, receipt: ErasureReceipt, json_url: str, back: tuple[str, str, str]
) -> HttpResponse:
    """The printable page; `back`: the breadcrumb's root, and the page above it."""
    root, back_label, back_url = back
    context: dict[str, Any] = {
        "receipt": receipt,
        "details": receipt_details(receipt),
        "json_url": json_url,
        "root": root,
        "back_label": back_label,
        "back_url": back_url,
    }
    return render(request, "memory_ui/receipt.html", context)


@require_GET
@login_required
def receipt(request: HttpRequest, receipt_id: uuid.UUID) -> HttpResponse:
    found = _own(request, receipt_id)
    back = ("memory", "Activity", reverse("activity"))
    return _page(request, found, reverse("receipt_json", args=[found.id]), back)


@require_GET
@login_required
def receipt_json(request: HttpRequest, receipt_id: uuid.UUID) -> HttpResponse:
    return _json(_own(request, receipt_id))


@require_GET
@support_required
@support_door
def support_receipt(request: HttpRequest, user: LookedUp, request_id: str) -> HttpResponse:
    found = _of_request(request, user, request_id)
    json_url = reverse("support_receipt_json", args=[user.subject, request_id])
    result_url = reverse("support_request_result", args=[user.subject, request_id])
    return _page(request, found, json_url, ("support", f"Result · {user.upn}", result_url))


@require_GET
@support_required
@support_door
def support_receipt_json(request: HttpRequest, user: LookedUp, request_id: str) -> HttpResponse:
    return _json(_of_request(request, user, request_id))
