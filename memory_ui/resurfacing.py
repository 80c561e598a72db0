"""Deleted memory that comes back: what the portal keeps of what a person deletes, so that the
same text written again (an agent re-learning what they erased) is flagged wherever it shows.

Kept per person (UPN) and source: an HMAC-SHA256 under `PORTAL_RESURFACING_KEY` of the
person's UPN and the deleted text's normalised form (`normalised`), with the day of the
latest delete; never the text, nor anything that could be turned back into it without the
key. Purged after `PORTAL_RESURFACING_RETENTION_DAYS` by `manage.py purge_expired`; a
deletion request keeps them (they are what shows the erasure is honoured).

Normalisation, so trivial rewrites still match: Unicode NFKC, case folded, every run of
whitespace one space, ends trimmed. What is hashed is an entry's body (its heading, date,
reason and provenance line are not part of it), a list item's text, or an item's text.
"""

from __future__ import annotations

import hashlib
import hmac
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from memory_ui.identity import Actor
from memory_ui.models import DeletedHash


def person_of(actor: Actor) -> str:
    """Whose memory the actor's change is about (support acts for `subject_upn`)."""
    return actor.subject_upn or actor.who.upn


def normalised(text: str) -> str:
    """The text as it is compared: NFKC, case folded, whitespace collapsed and trimmed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def digest(upn: str, text: str) -> str:
    """The keyed hash kept of `text` deleted by `upn` ("" for text that is only whitespace)."""
    plain = normalised(text)
    if not plain:
        return ""
    message = f"{upn.lower()}\n{plain}".encode()
    key = settings.PORTAL_RESURFACING_KEY.encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def deletions_record(upn: str, source: str, texts: Iterable[str]) -> None:
    """Keep the hashes of `texts`, just deleted by `upn` from `source` (a second delete of the
    same text moves its date)."""
    now = timezone.now()
    rows = {
        found: DeletedHash(upn=upn.lower(), source=source, digest=found, deleted_at=now)
        for found in (digest(upn, text) for text in texts)
        if found
    }
    if rows:
        DeletedHash.objects.bulk_create(
            rows.values(),
            update_conflicts=True,
            unique_fields=("upn", "source", "digest"),
            update_fields=("deleted_at",),
        )


def deletions_forget(upn: str, source: str, texts: Iterable[str]) -> None:
    """Drop the hashes of `texts`, put back by an Undo (else what was restored would show as
    come back)."""
    found = [digest(upn, text) for text in texts]
    DeletedHash.objects.filter(upn=upn.lower(), source=source, digest__in=found).delete()


@dataclass(frozen=True)
class Deletions:
    """What one person deleted before, read with one query (`deletions_of`): asks whether a
    text shown now is one of them."""

    upn: str
    deleted: dict[tuple[str, str], datetime] = field(default_factory=dict)

    def came_back(self, source: str, text: str) -> datetime | None:
        """When `text` was last deleted from `source`, if it was; None otherwise."""
        if not self.deleted:
            return None
        return self.deleted.get((source, digest(self.upn, text)))

    def count(self, source: str, texts: Iterable[str]) -> int:
        return sum(self.came_back(source, text) is not None for text in texts)

    def holds(self, source: str) -> bool:
        """Whether the person deleted anything from `source` (else nothing of it is hashed)."""
        return self.since(source) is not None

    def since(self, source: str) -> datetime | None:
        """When the person's earliest delete kept from `source` was; None: none kept."""
        return min(
            (when for (deleted_from, _), when in self.deleted.items() if deleted_from == source),
            default=None,
        )


# Read on every memory page and card batch: as a QuerySet, Django built and compiled this
# same SELECT on each call, several times the cost of running it (docs/performance.md).
_DELETIONS_OF = (
    f"SELECT id, source, digest, deleted_at FROM {DeletedHash._meta.db_table} WHERE upn = %s"  # noqa: S608
)


def deletions_of(upn: str) -> Deletions:
    """Every hash the person's deletes left, in one query."""
    rows = DeletedHash.objects.raw(_DELETIONS_OF, [upn.lower()])
    return Deletions(upn, {(row.source, row.digest): row.deleted_at for row in rows})


def deletions_purge(now: datetime | None = None) -> int:
    """Delete the hashes older than the retention; how many went."""
    days = settings.PORTAL_RESURFACING_RETENTION_DAYS
    cutoff = (now or timezone.now()) - timedelta(days=days)
    deleted, _ = DeletedHash.objects.filter(deleted_at__lt=cutoff).delete()
    return deleted
