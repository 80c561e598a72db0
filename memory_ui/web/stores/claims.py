"""Claims in the shared cache that only one request can hold: a form's one addition, a
person's one preview at a time."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from django.core.cache import cache

# --- One addition per rendered form: a form that adds to memory carries a key, and the
# first request that claims it is the only one that adds (cache.add is atomic in the
# database and Redis caches, so two requests sent at once cannot both claim it).

SUBMISSION_SECONDS = 24 * 3600
SUBMISSION_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")


def submission_claim(owner_oid: str, token: str) -> bool:
    """True the first time `token` is claimed (or when the form carried none)."""
    if not token:
        return True
    if not SUBMISSION_TOKEN.fullmatch(token):
        return False
    return cache.add(f"submission:{owner_oid}:{token}", 1, SUBMISSION_SECONDS)


# A claimed key whose addition got no answer stays claimed and says so, with when the first
# attempt began: the form given back keeps its key, and sending it again first looks for
# that attempt in the memory (`operations.AlreadyAdded`) instead of adding it again. The
# value is (state, round, first attempt's start); each round is settled by one request.
_UNKNOWN, _SETTLING = "unknown", "settling"


def _submission_key(owner_oid: str, token: str) -> str | None:
    return f"submission:{owner_oid}:{token}" if SUBMISSION_TOKEN.fullmatch(token) else None


def submission_unknown(owner_oid: str, token: str, began: datetime) -> None:
    """The addition sent with `token` (at `began`, or earlier if it was re-sent) got no answer."""
    if key := _submission_key(owner_oid, token):
        was = cache.get(key)
        if isinstance(was, tuple) and len(was) == 3:
            cache.set(key, (_UNKNOWN, was[1] + 1, was[2]), SUBMISSION_SECONDS)
        else:
            cache.set(key, (_UNKNOWN, 0, began.isoformat()), SUBMISSION_SECONDS)


def submission_release(owner_oid: str, token: str) -> None:
    """The addition sent with `token` was certainly not made: the same form may add it."""
    if key := _submission_key(owner_oid, token):
        cache.delete(key)


def submission_unsettled(owner_oid: str, token: str) -> datetime | None:
    """When the first attempt sent with `token` began, if its outcome is unknown. The caller
    then settles it; a request sent at the same moment gets None (one settling per round,
    claimed atomically with cache.add)."""
    key = _submission_key(owner_oid, token)
    was = cache.get(key) if key else None
    if not (isinstance(was, tuple) and len(was) == 3 and was[0] == _UNKNOWN):
        return None
    if not cache.add(f"{key}:settling:{was[1]}", 1, SUBMISSION_SECONDS):
        return None
    cache.set(key, (_SETTLING, was[1], was[2]), SUBMISSION_SECONDS)
    return datetime.fromisoformat(was[2])


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
