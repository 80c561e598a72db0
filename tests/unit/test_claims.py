"""A form's one addition is claimed in the database (web/stores/claims.py): requests sent
at the same moment race for one row, on whichever database the run uses (SQLite here,
PostgreSQL in `./dev test-postgres`). Each request is a thread with its own connection,
as gunicorn's threads have; a barrier lets them go at once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from django.db import connection

from memory_ui.models import SubmissionClaim
from memory_ui.web.stores.claims import (
    submission_claim,
    submission_unknown,
    submission_unsettled,
)

pytestmark = pytest.mark.django_db(transaction=True)

REQUESTS = 6
TOKEN = "k" * 22
DEADLINE_SECONDS = 60


def at_once[T](call: Callable[[], T]) -> list[T]:
    """`call` from REQUESTS threads released together; each closes its own connection."""
    barrier = threading.Barrier(REQUESTS, timeout=DEADLINE_SECONDS)

    def request() -> T:
        try:
            barrier.wait()
            return call()
        finally:
            connection.close()

    with ThreadPoolExecutor(REQUESTS) as pool:
        futures = [pool.submit(request) for _ in range(REQUESTS)]
        return [future.result(timeout=DEADLINE_SECONDS) for future in futures]


def test_one_of_many_claims_sent_at_once_wins():
    results = at_once(lambda: submission_claim("alice-oid", TOKEN))
    assert sorted(results) == [False] * (REQUESTS - 1) + [True]
    assert SubmissionClaim.objects.filter(owner_oid="alice-oid", token=TOKEN).count() == 1


def test_one_request_settles_an_unknown_outcome():
    began = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)
    assert submission_claim("alice-oid", TOKEN) is True
    submission_unknown("alice-oid", TOKEN, began)
    results = at_once(lambda: submission_unsettled("alice-oid", TOKEN))
    assert [r for r in results if r is not None] == [began]
    # Given back unsettled again, the next round is one request's too.
    submission_unknown("alice-oid", TOKEN, datetime.now(UTC))
    results = at_once(lambda: submission_unsettled("alice-oid", TOKEN))
    assert [r for r in results if r is not None] == [began]  # the first attempt's start
