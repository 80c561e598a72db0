"""A history per memory: the earlier versions kept of what a person changed in their own
memories through the portal, so that its History can show each change's diff and put a
version back ("Restore this version").

Kept per change (`PriorVersion`): whose memory (UPN), which memory (its target key), what
the change was (its audit action), when, and the document before and after it, encrypted
together with Fernet (AES-128-CBC with HMAC-SHA256) under the first of PORTAL_HISTORY_KEYS;
every key there decrypts, so a key is rotated by putting a new one first. Never logged,
never in the audit trail. Support's changes keep none (they are in the audit trail), nor do
clears (an erasure keeps nothing of what it erased). Kept PORTAL_HISTORY_RETENTION_DAYS,
purged by `manage.py purge_expired`; a deletion request and "Clear everything" erase all of
a person's (`versions_erase`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.utils import timezone

from memory_ui.identity import Actor
from memory_ui.models import PriorVersion

# The changes whose earlier version is kept (audit actions): a person's own edits, deletes,
# moves, copies, imports and Undos. Appends keep none (the version before is the version
# without that entry, which its own Delete gives back).
KEPT = frozenset(
    ("edit", "undo", "delete-entry", "move-entry", "copy-entry", "import", "restore-version")
)


def _fernet() -> MultiFernet:
    keys = settings.PORTAL_HISTORY_KEYS
    if not keys:
        raise ValueError("PORTAL_HISTORY_KEYS is not set.")
    return MultiFernet([Fernet(key) for key in keys])


def version_keep(
    actor: Actor, target_key: str, action: str, before: str, after: str, *, item: str = ""
) -> None:
    """Keep the version `before` a change of the person's own (support's keep none). `item`:
    which item of the memory it was, where the key names it only by a digest (sealed with
    the text: a source's item key may say something about the person)."""
    if actor.subject_upn or action not in KEPT or before == after:
        return
    kept = {"before": before, "after": after} | ({"item": item} if item else {})
    sealed = _fernet().encrypt(json.dumps(kept).encode())
    PriorVersion.objects.create(
        upn=actor.who.upn.lower(),
        target_key=target_key,
        action=action,
        created_at=timezone.now(),
        sealed=sealed,
    )


@dataclass(frozen=True)
class Change:
    """One change kept: its row and, decrypted, the document before and after it and the
    item it was of where one was kept (all "" and `unreadable` when no key of
    PORTAL_HISTORY_KEYS opens it any more)."""

    id: int
    action: str
    at: datetime
    before: str
    after: str
    unreadable: bool = False
    item: str = ""


def _opened(row: PriorVersion) -> Change:
    try:
        kept = json.loads(_fernet().decrypt(bytes(row.sealed)))
    except InvalidToken:
        return Change(row.id, row.action, row.created_at, "", "", unreadable=True)
    return Change(
        row.id, row.action, row.created_at, kept["before"], kept["after"], item=kept.get("item", "")
    )


def _within_retention(upn: str):
    cutoff = timezone.now() - timedelta(days=settings.PORTAL_HISTORY_RETENTION_DAYS)
    return PriorVersion.objects.filter(upn=upn.lower(), created_at__gte=cutoff)


def _kept(upn: str, target_key: str):
    return _within_retention(upn).filter(target_key=target_key)


def versions_of(upn: str, target_key: str) -> list[Change]:
    """The person's changes to one memory within the retention, newest first."""
    return [_opened(row) for row in _kept(upn, target_key)]


def last_changes_under(upn: str, key_prefix: str, action: str) -> list[Change]:
    """Of the memories whose key starts with `key_prefix` (the items of one target of a
    source), those whose last change the person made within the retention was `action`:
    that change, newest first. The other rows are read without their sealed text and
    never decrypted; only those changes are."""
    newest_first = ("-created_at", "-id")
    latest: dict[str, tuple[int, str]] = {}
    rows = _within_retention(upn).filter(target_key__startswith=key_prefix)
    for row_id, key, row_action in rows.order_by(*newest_first).values_list(
        "id", "target_key", "action"
    ):
        latest.setdefault(key, (row_id, row_action))
    ids = [row_id for row_id, row_action in latest.values() if row_action == action]
    if not ids:
        return []
    return [_opened(row) for row in PriorVersion.objects.filter(id__in=ids).order_by(*newest_first)]


def version_find(upn: str, target_key: str, change_id: int) -> Change | None:
    """One change of the person's to that memory (None when it is not theirs, or gone)."""
    row = _kept(upn, target_key).filter(id=change_id).first()
    return None if row is None else _opened(row)


def versions_erase(upn: str) -> int:
    """Every earlier version kept of the person's memories deleted; how many."""
    deleted, _ = PriorVersion.objects.filter(upn=upn.lower()).delete()
    return deleted


def versions_purge(now: datetime | None = None) -> int:
    """Delete the versions older than the retention; how many went."""
    days = settings.PORTAL_HISTORY_RETENTION_DAYS
    cutoff = (now or timezone.now()) - timedelta(days=days)
    deleted, _ = PriorVersion.objects.filter(created_at__lt=cutoff).delete()
    return deleted


def with_arrivals(
    change: Change, since: list[Change], now: str, pieces: Callable[[str], list[str]]
) -> list[str]:
    """What a restore of the version before `change` keeps of `now`: its pieces (`pieces`
    splits a text: a memory's dated entries, a file's lines) that neither that version holds
    nor one of the person's changes from `change` on (`since`) brought in, i.e. what others,
    agents, added after it, verbatim and in their order. Nothing the person deleted comes
    back unless the restored version holds it: it is not in `now`."""
    accounted = set(pieces(change.before))
    for mine in since:
        accounted |= set(pieces(mine.after)) - set(pieces(mine.before))
    return [piece for piece in pieces(now) if piece not in accounted]
