"""`manage.py purge_expired`, the daily clean-up: exactly the expired sessions and the
submission claims past their day go; everything still in use stays."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.utils import timezone

from memory_ui.models import SubmissionClaim
from memory_ui.web.stores.claims import SUBMISSION_AGE

pytestmark = pytest.mark.django_db


def session(key: str, expires_in: timedelta) -> None:
    Session.objects.create(
        session_key=key, session_data="", expire_date=timezone.now() + expires_in
    )


def claim(owner_oid: str, token: str, age: timedelta) -> None:
    made = SubmissionClaim.objects.create(owner_oid=owner_oid, token=token)
    # created_at is set on insert (auto_now_add): age the row afterwards.
    SubmissionClaim.objects.filter(pk=made.pk).update(created_at=timezone.now() - age)


def test_only_expired_sessions_and_claims_go():
    minute = timedelta(minutes=1)
    session("expired-yesterday", -timedelta(days=1))
    session("expired-a-minute-ago", -minute)
    session("alice-signed-in", timedelta(hours=8))
    claim("alice-oid", "a" * 22, SUBMISSION_AGE + minute)
    claim("bob-oid", "b" * 22, timedelta(days=30))
    claim("alice-oid", "c" * 22, SUBMISSION_AGE - minute)
    claim("bob-oid", "d" * 22, timedelta(0))
    out = io.StringIO()

    call_command("purge_expired", stdout=out)

    assert set(Session.objects.values_list("session_key", flat=True)) == {"alice-signed-in"}
    assert set(SubmissionClaim.objects.values_list("token", flat=True)) == {"c" * 22, "d" * 22}
    assert out.getvalue() == (
        "Deleted expired sessions and 2 expired submission claims.\n"
        "Deleted 0 hashes of deleted memory past their retention.\n"
        "Deleted 0 earlier versions of memories past their retention.\n"
    )
