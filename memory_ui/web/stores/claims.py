"""Claims in the shared cache that only one request can hold: a form's one addition, a
person's one preview at a time."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

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
