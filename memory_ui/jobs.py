"""Tenant-wide jobs over a list of people, cut into shards (issue 31, item 5): a Kubernetes
Indexed Job runs one pod per shard (`JOB_COMPLETION_INDEX` of `completions`), a machine runs
`--shard I/N` by hand. Which shard takes a person depends on the person alone (a hash of the
UPN), so two shards of one list never share anyone, and a list edited between runs keeps
everyone in the shard they had. Progress is a `JobProgress` row per person, so a restarted
pod or a second run passes over the people already finished. A row names its person (UPN):
kept PORTAL_JOB_PROGRESS_RETENTION_DAYS after its last write, purged by `manage.py
purge_expired`; a deletion request and "Clear everything" erase a person's
(`progress_erase`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from memory_ui.models import JobProgress

SHARD = re.compile(r"(\d{1,9})/(\d{1,9})")
FINISHED = (JobProgress.State.DONE, JobProgress.State.SKIPPED)


@dataclass(frozen=True)
class Shard:
    index: int  # 0 .. count - 1, as JOB_COMPLETION_INDEX counts
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def takes(self, upn: str) -> bool:
        digest = hashlib.sha256(upn.casefold().encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index


def shard_parse(text: str) -> Shard:
    """ "I/N" with 0 <= I < N; ValueError otherwise."""
    match = SHARD.fullmatch(text.strip())
    if not match or not 0 <= int(match[1]) < int(match[2]):
        raise ValueError(f"{text!r} is not a shard I/N with 0 <= I < N")
    return Shard(int(match[1]), int(match[2]))


def shard_people(people: Iterable[str], shard: Shard) -> list[str]:
    return [upn for upn in people if shard.takes(upn)]


def job_digest(*parts: str) -> str:
    """A job's name from what defines it (the command's options and its whole list, not the
    shard): every shard of one run shares it, and running the same list again resumes it."""
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def finished_people(job: str, people: list[str]) -> set[str]:
    rows = JobProgress.objects.filter(job=job, state__in=FINISHED)
    return set(rows.values_list("upn", flat=True)) & set(people)


def progress_record(
    job: str, upn: str, shard: Shard, started: datetime, state: str, **counts: int | str
) -> None:
    JobProgress.objects.update_or_create(
        job=job,
        upn=upn,
        defaults={"shard": str(shard), "state": state, "started_at": started, **counts},
    )


def progress_erase(upn: str) -> int:
    """Every progress row naming the person deleted; how many."""
    deleted, _ = JobProgress.objects.filter(upn=upn.lower()).delete()
    return deleted


def progress_purge(now: datetime | None = None) -> int:
    """Delete the rows last written before the retention; how many went."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.PORTAL_JOB_PROGRESS_RETENTION_DAYS)
    deleted, _ = JobProgress.objects.filter(finished_at__lt=cutoff).delete()
    return deleted
