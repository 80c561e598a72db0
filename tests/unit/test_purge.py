"""`manage.py purge_expired`, the daily clean-up: exactly the expired sessions, the
submission claims past their day and the jobs' progress rows past their retention go;
everything still in use stays."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.utils import timezone

from memory_ui.jobs import Shard, progress_record
from memory_ui.models import JobProgress, SubmissionClaim
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
        "Deleted 0 progress rows of jobs past their retention.\n"
    )


def progress(upn: str, age: timedelta) -> None:
    progress_record("a" * 64, upn, Shard(0, 1), timezone.now() - age, "done", moved=1)
    # finished_at is set on every write (auto_now): age the row afterwards.
    JobProgress.objects.filter(upn=upn).update(finished_at=timezone.now() - age)


def test_job_progress_rows_go_after_their_retention(settings):
    assert settings.PORTAL_JOB_PROGRESS_RETENTION_DAYS == 90  # the documented default
    settings.PORTAL_JOB_PROGRESS_RETENTION_DAYS = 30
    minute = timedelta(minutes=1)
    progress("alice@contoso.com", timedelta(days=30) + minute)
    progress("bob@contoso.com", timedelta(days=30) - minute)
    progress("carol@contoso.com", timedelta(0))
    out = io.StringIO()

    call_command("purge_expired", stdout=out)

    assert set(JobProgress.objects.values_list("upn", flat=True)) == {
        "bob@contoso.com",
        "carol@contoso.com",
    }
    assert "Deleted 1 progress rows of jobs past their retention.\n" in out.getvalue()
