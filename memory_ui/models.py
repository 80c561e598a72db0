"""The audit trail (append-only), erasure receipts, keyed hashes of deleted memory, and when
each person last opened each memory; never memory content in the clear (the earlier versions
a memory's history keeps are encrypted)."""

from __future__ import annotations

import uuid

from django.db import models


class AuditEventQuerySet(models.QuerySet["AuditEvent"]):
    def update(self, **kwargs: object) -> int:
        raise TypeError("Audit events are append-only.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise TypeError("Audit events are append-only.")


# The audit fields take their choices from these callables, not from lists: a migration
# names a callable rather than copying its list, so a new action or source needs no
# migration (choices are checked by forms and full_clean, never by the database). Before
# this, every new action wrote an AlterField restating all of them (0004, 0006, 0008).
# Migrations import these by name: renaming or removing one breaks them.
def audit_actions() -> list[tuple[str, str]]:
    return AuditEvent.Action.choices


def audit_outcomes() -> list[tuple[str, str]]:
    return AuditEvent.Outcome.choices


def audit_sources() -> list[tuple[str, str]]:
    """The registry's sources the portal can act in (a new memory system needs no
    migration, nor a line here), then those events were recorded for before
    (`AuditEvent.Source`) that are not configured now, so their events keep their name."""
    from memory_ui.sources import registry  # at call time: the registry is built after apps load

    registered = [(s.name, s.title) for s in registry.sources() if s.capabilities]
    names = {name for name, _ in registered}
    return registered + [c for c in AuditEvent.Source.choices if c[0] not in names]


class AuditEvent(models.Model):
    """One thing done to someone's memory, by them or by support staff."""

    class Action(models.TextChoices):
        LOOKUP = "lookup", "Looked up"
        REVEAL = "reveal", "Revealed"
        EXPORT = "export", "Exported"
        APPEND = "append", "Added a note"
        EDIT = "edit", "Edited"
        UNDO = "undo", "Restored (undo)"
        DELETE_ENTRY = "delete-entry", "Deleted an entry"
        IMPORT = "import", "Imported"
        CLEAR = "clear", "Cleared"
        MOVE = "move", "Moved into CoreAPI"
        MOVE_ENTRY = "move-entry", "Moved an entry"
        COPY_ENTRY = "copy-entry", "Copied an entry"
        ERASE = "erase", "Erased (deletion request)"
        RECEIPT = "receipt", "Erasure receipt signed"
        PREVIEW = "preview", "Asked what an agent is told"
        REPORT = "report", "Reported as wrong"
        RESTORE_VERSION = "restore-version", "Restored an earlier version"

    class Outcome(models.TextChoices):
        OK = "ok", "Done"
        ERROR = "error", "Failed"

    class Source(models.TextChoices):
        COREAPI = "coreapi", "CoreAPI"
        LEGACY = "legacy", "Legacy memory stores"
        # What the portal did across every system (an erasure receipt), not in one of them.
        PORTAL = "portal", "Memory Portal"

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # Which memory system the event is about (issue 18): a legacy store event keeps the
    # store's agent in agent_name and the store's full name in agent_object_id.
    source = models.CharField(max_length=16, choices=audit_sources, default=Source.COREAPI)
    actor_upn = models.CharField(max_length=320)
    actor_oid = models.CharField(max_length=64)
    actor_is_support = models.BooleanField(default=False)
    subject_upn = models.CharField(max_length=320, db_index=True)
    action = models.CharField(max_length=16, choices=audit_actions)
    scope = models.CharField(max_length=16, blank=True)
    agent_name = models.CharField(max_length=200, blank=True)
    agent_object_id = models.CharField(max_length=400, blank=True)
    reason = models.CharField(max_length=500, blank=True)
    ticket = models.CharField(max_length=100, blank=True)
    outcome = models.CharField(max_length=8, choices=audit_outcomes)
    error_status = models.PositiveSmallIntegerField(null=True, blank=True)
    error_message = models.CharField(max_length=300, blank=True)
    bytes_before = models.PositiveIntegerField(null=True, blank=True)
    sha256_before = models.CharField(max_length=64, blank=True)
    bytes_after = models.PositiveIntegerField(null=True, blank=True)
    sha256_after = models.CharField(max_length=64, blank=True)
    correlation_id = models.CharField(max_length=128, blank=True)
    # An entry moved or copied (issue 22): one event, two memories. scope/agent_* above name
    # where it came from (before/after: that document), these where it went.
    destination_scope = models.CharField(max_length=16, blank=True)
    destination_agent_name = models.CharField(max_length=200, blank=True)
    destination_agent_object_id = models.CharField(max_length=400, blank=True)
    destination_bytes_after = models.PositiveIntegerField(null=True, blank=True)
    destination_sha256_after = models.CharField(max_length=64, blank=True)
    # How many entries (CoreAPI) or files (a legacy store) one event took at once: a batch
    # of deletes in one memory, its Undo, a store cleared (issue 32). None: not counted.
    count = models.PositiveIntegerField(null=True, blank=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = (models.Index(fields=("actor_upn", "created_at")),)

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor_upn} {self.action} {self.subject_upn}"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None:
            raise TypeError("Audit events are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: object, **kwargs: object) -> tuple[int, dict[str, int]]:
        raise TypeError("Audit events are append-only.")


class MemoryVisit(models.Model):
    """When one person last opened one memory, and the version they saw then: what "new"
    is counted from. A time and a version token (CoreAPI's updatedOn and a sha256), never
    content. `previous_seen_at` is the visit before (the one before the last that found
    something new: `visits.visit_record`; at a memory's first opening, the person's first
    visit to any memory), so entries stay marked new on the page that is open (its "Show
    more", its views, a reload, the page after an edit) until "Mark as seen"."""

    user_oid = models.CharField(max_length=64)
    target_key = models.CharField(max_length=220)
    seen_at = models.DateTimeField()
    seen_version = models.CharField(max_length=120)
    previous_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = (
            models.UniqueConstraint(fields=("user_oid", "target_key"), name="one_visit_per_memory"),
        )

    def __str__(self) -> str:
        return f"{self.user_oid} {self.target_key} {self.seen_at:%Y-%m-%d %H:%M}"


class SubmissionClaim(models.Model):
    """One rendering of a form that adds to memory, claimed by the request that adds
    (web/stores/claims.py). In the database, not the cache: a claim must outlive a Redis
    outage, or a form re-sent while the database cache stands in would add twice. The
    unique constraint is what refuses a second claim; rows go after a day."""

    owner_oid = models.CharField(max_length=64)
    token = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # "" while the addition is under way or done; "unknown" when it got no answer, and
    # "settling" while one request looks for it (round counts the attempts given back).
    state = models.CharField(max_length=8, blank=True)
    round = models.PositiveIntegerField(default=0)
    began = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = (
            models.UniqueConstraint(fields=("owner_oid", "token"), name="one_claim_per_form"),
        )

    def __str__(self) -> str:
        return f"{self.owner_oid} {self.token} {self.created_at:%Y-%m-%d %H:%M}"


class ErasureReceipt(models.Model):
    """A signed account of an erasure (support's deletion request, a person's "Clear
    everything"): per source and target what was there before, what a read-back found
    after, and the outcome, in hashes and counts only (memory/receipts.py). `document` is
    the signed JSON exactly as handed out; `sha256` its hash, which the audit keeps too."""

    class Kind(models.TextChoices):
        DELETION_REQUEST = "deletion-request", "Deletion request"
        CLEAR_EVERYTHING = "clear-everything", "Clear everything"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    subject_upn = models.CharField(max_length=320, db_index=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    ticket = models.CharField(max_length=100, blank=True)
    key_id = models.CharField(max_length=40)
    sha256 = models.CharField(max_length=64)
    document = models.TextField()

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.kind} {self.subject_upn}"


class DeletedHash(models.Model):
    """A keyed hash of something a person deleted through the portal (memory_ui/resurfacing.py),
    so the same text written again is flagged. Never the text: an HMAC-SHA256 of its
    normalised form under a secret (PORTAL_RESURFACING_KEY), the person's UPN, the source
    and the day of the (latest) delete; purged after PORTAL_RESURFACING_RETENTION_DAYS."""

    upn = models.CharField(max_length=320, db_index=True)
    source = models.CharField(max_length=40)
    digest = models.CharField(max_length=64)
    deleted_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("upn", "source", "digest"), name="deleted_hash_once")
        ]

    def __str__(self) -> str:
        return f"{self.deleted_at:%Y-%m-%d} {self.source} {self.upn}"


class JobProgress(models.Model):
    """Where a tenant-wide job (`manage.py move_legacy_memory`, one shard per pod of a
    Kubernetes Indexed Job) stands with one person: a pod that restarts, or a second run of
    the same job, passes over the people already done. Counts and an error's class only,
    never memory content."""

    class State(models.TextChoices):
        DONE = "done", "Done"  # something moved, all of it verified
        SKIPPED = "skipped", "Skipped"  # nothing to move: no items, or all already there
        FAILED = "failed", "Failed"  # some item not done; the next run tries them again

    job = models.CharField(max_length=64)  # the command's name for the run: its list's digest
    upn = models.CharField(max_length=320)
    shard = models.CharField(max_length=23)  # "I/N"
    state = models.CharField(max_length=8, choices=State.choices)
    items = models.PositiveIntegerField(default=0)
    moved = models.PositiveIntegerField(default=0)
    already_there = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    deleted = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=80, blank=True)  # the failure's class, or a result
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = (models.UniqueConstraint(fields=("job", "upn"), name="one_row_per_person"),)

    def __str__(self) -> str:
        return f"{self.job[:12]} {self.upn} {self.state}"


class PriorVersion(models.Model):
    """One change a person made to one of their memories through the portal (an edit, a
    delete, a move, an Undo, a restore): the document before and after it, encrypted
    together under PORTAL_HISTORY_KEYS (memory_ui/history.py), so the memory's history can
    show the change's diff and restore the version before it. Kept
    PORTAL_HISTORY_RETENTION_DAYS, erased by a deletion request and by "Clear everything"."""

    upn = models.CharField(max_length=320)
    target_key = models.CharField(max_length=220)
    action = models.CharField(max_length=16)
    created_at = models.DateTimeField(db_index=True)
    sealed = models.BinaryField()

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = (models.Index(fields=("upn", "target_key", "created_at")),)

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action} {self.target_key}"
