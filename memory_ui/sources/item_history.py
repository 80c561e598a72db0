"""The History of one item of a source that brings only its adapter (the generic source
pages): the version before each change the person made to it through the portal, kept by
`memory_ui.history` (the same table, encryption, retention and erasure as CoreAPI's
memories), under a key of its own per item.

The key is `<source>:<digest of the target's key>:<digest of the item's key>`: a target's
and an item's keys may each be 1024 characters (PriorVersion.target_key holds 220) and may
say something about the person (a file's path), so the row holds their digests and the item's
key is sealed with the text. A CoreAPI memory's key ("user", "agent:<name>",
"combined:<name>") has at most one colon and an agent's name none, a source's name (a URL
slug) none either, so no key of one source is another's.
"""

from __future__ import annotations

import hashlib

from memory_ui.audit import Action
from memory_ui.history import (
    Change,
    last_changes_under,
    version_find,
    version_keep,
    versions_of,
)
from memory_ui.identity import Actor
from memory_ui.sources.protocol import SourceTarget


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _target_prefix(source: str, target: SourceTarget) -> str:
    return f"{source}:{_digest(target.key)}:"


def history_key(source: str, target: SourceTarget, item: str) -> str:
    """The key an item's versions are kept under."""
    return _target_prefix(source, target) + _digest(item)


def item_kept(
    actor: Actor,
    source: str,
    target: SourceTarget,
    item: str,
    action: str,
    before: str,
    after: str,
) -> None:
    """Keep the version before a change of the person's own to `item` (support's keep
    none: `history.version_keep`)."""
    key = history_key(source, target, item)
    version_keep(actor, key, action, before, after, item=item)


def item_changes(upn: str, source: str, target: SourceTarget, item: str) -> list[Change]:
    """The person's changes to the item within the retention, newest first."""
    return versions_of(upn, history_key(source, target, item))


def item_change(
    upn: str, source: str, target: SourceTarget, item: str, change_id: int
) -> Change | None:
    """One change of the person's to that item (None when it is not theirs, or gone)."""
    return version_find(upn, history_key(source, target, item), change_id)


def deleted_items(upn: str, source: str, target: SourceTarget) -> list[Change]:
    """The target's items the person deleted within the retention and did not bring back
    through the portal since (their last change kept is the delete), newest first: what a
    deleted item is found again by."""
    deletes = last_changes_under(upn, _target_prefix(source, target), Action.DELETE_ENTRY)
    return [change for change in deletes if change.item]
