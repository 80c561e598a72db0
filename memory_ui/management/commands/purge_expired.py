"""`manage.py purge_expired`: the daily clean-up (`deploy/entrypoint.sh clearsessions`, the
chart's CronJob, a Container Apps job). Django's `clearsessions` deletes expired sessions
(with them the refresh tokens in their msal caches); then the submission claims past
their day go (the rule is `stores.claims.submission_claims_purge`'s), and the hashes of
deleted memory past PORTAL_RESURFACING_RETENTION_DAYS (`resurfacing.deletions_purge`), and
the earlier versions kept for memories' History past PORTAL_HISTORY_RETENTION_DAYS
(`history.versions_purge`), and tenant-wide jobs' progress rows past
PORTAL_JOB_PROGRESS_RETENTION_DAYS (`jobs.progress_purge`). Prints counts only: nothing
purged is named in the output."""

from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand

from memory_ui.history import versions_purge
from memory_ui.jobs import progress_purge
from memory_ui.resurfacing import deletions_purge
from memory_ui.web.stores.claims import submission_claims_purge


class Command(BaseCommand):
    help = (
        "Delete expired sessions, submission claims, deleted-memory hashes and earlier "
        "versions of memories and jobs' progress rows (run daily)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        call_command("clearsessions", stdout=self.stdout, stderr=self.stderr)
        claims = submission_claims_purge()
        hashes = deletions_purge()
        versions = versions_purge()
        progress = progress_purge()
        self.stdout.write(f"Deleted expired sessions and {claims} expired submission claims.")
        self.stdout.write(f"Deleted {hashes} hashes of deleted memory past their retention.")
        self.stdout.write(f"Deleted {versions} earlier versions of memories past their retention.")
        self.stdout.write(f"Deleted {progress} progress rows of jobs past their retention.")
