"""Claims only one request can hold: a form's one addition (in the database, so it
outlives a Redis outage), a person's one preview at a time (in the shared cache)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from memory_ui.models import SubmissionClaim

# --- One addition per rendered form: a form that adds to memory carries a key, and the
# first request that claims it is the only one that adds. The claim is a row whose unique
# constraint refuses a second INSERT, so two requests sent at once cannot both claim it,
# and no cache outage forgets it (the database is the source of truth; a claim kept only in
# Redis would be unknown to the database cache that stands in while Redis is away).

SUBMISSION_AGE = timedelta(days=1)
SUBMISSION_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")


def submission_claims_purge() -> int:
    """Delete the claims older than any form still open; how many went. Run on the path
    that adds rows and by the daily `manage.py purge_expired`, so that object ids do not
    stay for good in a portal where nobody adds anything any more."""
    expired = SubmissionClaim.objects.filter(created_at__lt=timezone.now() - SUBMISSION_AGE)
    deleted, _ = expired.delete()
    return deleted


def submission_claim(owner_oid: str, token: str) -> bool:
    """True the first time `token` is claimed (or when the form carried none)."""
    if not token:
        return True
    if not SUBMISSION_TOKEN.fullmatch(token):
        return False
    submission_claims_purge()
    try:
        with transaction.atomic():
            SubmissionClaim.objects.create(owner_oid=owner_oid, token=token)
    except IntegrityError:
        return False
    return True


# A claimed key whose addition got no answer stays claimed and says so, with when the first
# attempt began: the form given back keeps its key, and sending it again first looks for
# that attempt in the memory (`operations.AlreadyAdded`) instead of adding it again. Each
# round of "unknown" is settled by one request.
_UNKNOWN, _SETTLING = "unknown", "settling"


def _claim(owner_oid: str, token: str):
    if not SUBMISSION_TOKEN.fullmatch(token):
        return SubmissionClaim.objects.none()
    return SubmissionClaim.objects.filter(owner_oid=owner_oid, token=token)


def submission_unknown(owner_oid: str, token: str, began: datetime) -> None:
    """The addition sent with `token` (at `began`, or earlier if it was re-sent) got no answer."""
    claim = _claim(owner_oid, token)
    # A claim given back before keeps its first start and counts one more round.
    if not claim.filter(began__isnull=False).update(state=_UNKNOWN, round=F("round") + 1):
        claim.update(state=_UNKNOWN, round=0, began=began)


def submission_release(owner_oid: str, token: str) -> None:
    """The addition sent with `token` was certainly not made: the same form may add it."""
    _claim(owner_oid, token).delete()


def submission_unsettled(owner_oid: str, token: str) -> datetime | None:
    """When the first attempt sent with `token` began, if its outcome is unknown. The caller
    then settles it; a request sent at the same moment gets None (one settling per round:
    the conditional UPDATE changes the row for one request only)."""
    found = _claim(owner_oid, token).filter(state=_UNKNOWN).first()
    if found is None or found.began is None:
        return None
    taken = _claim(owner_oid, token).filter(state=_UNKNOWN, round=found.round)
    if not taken.update(state=_SETTLING):
        return None
    return found.began


# --- One preview at a time per person ------------------------------------------------
# A turn expires on its own after PREVIEW_TURN_SECONDS, should a worker die mid-render.

PREVIEW_TURN_SECONDS = 10


@contextmanager
def preview_turn(owner_oid: str) -> Iterator[bool]:
    """True while this request holds the person's one preview turn; False when another
    request holds it (cache.add is atomic in every cache backend the portal uses)."""
    key = f"preview-turn:{owner_oid}"
    taken = cache.add(key, 1, PREVIEW_TURN_SECONDS)
    try:
        yield taken
    finally:
        if taken:
            cache.delete(key)
