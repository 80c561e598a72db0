"""A tenant-wide job's progress rows name their person (JobProgress.upn): a deletion request
erases that person's, and only theirs. "Clear everything" keeps them: it clears CoreAPI
alone, and without its row a rerun of the move would bring the person's legacy copies back
into what they just cleared."""

from __future__ import annotations

from django.test import Client
from django.utils import timezone

from memory_ui.jobs import Shard, progress_record
from memory_ui.models import JobProgress
from tests.fake_coreapi import FakeCoreAPI
from tests.views.test_support import clear, export, start

JOBS = ("a" * 64, "b" * 64)


def moved(*people: str) -> None:
    """Each person's row in two jobs (two lists that named them)."""
    for job in JOBS:
        for upn in people:
            progress_record(job, upn, Shard(0, 1), timezone.now(), "done", moved=1)


def test_a_deletion_request_erases_the_persons_job_rows(carol: Client, fake: FakeCoreAPI):
    moved("alice@contoso.com", "bob@contoso.com")
    request_url = start(carol)
    export(carol, request_url)

    assert clear(carol, request_url).status_code == 302

    assert set(JobProgress.objects.values_list("upn", flat=True)) == {"bob@contoso.com"}
    assert JobProgress.objects.count() == len(JOBS)  # bob's: not his request


def test_clear_everything_keeps_the_rows_that_stop_a_rerun_moving_it_back(
    alice: Client, fake: FakeCoreAPI
):
    moved("alice@contoso.com", "bob@contoso.com")

    done = alice.post("/memory/clear-everything", {"phrase": "clear everything"})

    assert done.status_code == 200
    assert JobProgress.objects.filter(upn="alice@contoso.com").count() == len(JOBS)
