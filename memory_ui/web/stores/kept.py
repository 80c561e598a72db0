"""Records kept in the session for a short while, a few at a time, each behind a random
token: a form carries the token, never what the record holds (it would reach logs in a
URL). Undo's copies are kept so (`undo`, `item_undo`, `batch_undo`)."""

from __future__ import annotations

import secrets
import time
from typing import Any

from django.contrib.sessions.backends.base import SessionBase


def kept(session: SessionBase, key: str) -> dict[str, dict[str, Any]]:
    """The records under `key` that have not expired, by token."""
    now = time.time()
    return {token: r for token, r in session.get(key, {}).items() if r["expires"] > now}


def keep(session: SessionBase, key: str, record: dict[str, Any], *, most: int, seconds: int) -> str:
    """Keep `record` (JSON-able) for `seconds` under `key`, beside at most `most - 1` of the
    newest kept there already; its token."""
    newest = sorted(kept(session, key).items(), key=lambda item: item[1]["expires"])
    token = secrets.token_urlsafe(16)
    session[key] = {
        **dict(newest[-(most - 1) :]),
        token: {**record, "expires": time.time() + seconds},
    }
    return token


def drop(session: SessionBase, key: str, token: str) -> None:
    records = kept(session, key)
    records.pop(token, None)
    session[key] = records
