"""A source that brings only its adapter (`MemoryBackend`): its audited steps, written once
here for every such source. The generic source pages call the item steps; `BackendSteps` is
what requests over a person's whole memory call (`protocol.Steps`). Every change and every
read for someone else is audited with the source's name, as the sources with operations of
their own do (a target's key stands where a legacy event keeps its store: never an item's
key or content).

A person's own changes (edit, resolve, delete, Undo, a restore) keep the version before them
(`item_history`), which the item's History puts back (`item_put_back`).

An item's version, where the backend gives none, is the sha256 of its text: an erasure after
an export deletes only items still as the export handed them over.

Over 400 lines: every audited step over an adapter in one place, so that no page or request
reaches a backend unaudited (as `coreapi/operations.py` does for CoreAPI).
"""

from __future__ import annotations

from collections.abc import Callable

from memory_ui.audit import Action, audit_record
from memory_ui.documents import content_hash
from memory_ui.identity import Actor
from memory_ui.resurfacing import deletions_forget, deletions_record, person_of
from memory_ui.sources.item_history import item_changes, item_kept
from memory_ui.sources.protocol import (
    Capability,
    Erasure,
    Exported,
    ExportedFile,
    Item,
    ItemsPage,
    MemoryBackend,
    Outcome,
    Preview,
    SourceError,
    SourceTarget,
    Subject,
    TargetFinder,
    require,
)

CHANGED_MEANWHILE = "It was changed since you opened it: open it again to see the change."
NOT_EXPORTED = "Not exported with this request, so nothing was erased: export again, then erase."
CHANGED = "Changed since the export; kept: export again, then erase."
NOT_MATCHED_ONCE = "That text is no longer in it exactly once; open it again and try again."


def subject_of(actor: Actor) -> Subject:
    """Whose memory the actor's request is about: support staff know a person's UPN, not
    their object id."""
    acting_for = bool(actor.subject_upn and actor.subject_upn != actor.who.upn)
    return Subject(actor.subject_upn or actor.who.upn, "" if acting_for else actor.who.oid)


def audit(
    actor: Actor,
    source: str,
    action: str,
    target: SourceTarget | None,
    *,
    before: str | None = None,
    after: str | None = None,
    error: SourceError | None = None,
    count: int | None = None,
) -> None:
    audit_record(
        actor.who,
        action,
        subject_upn=actor.subject_upn,
        source=source,
        agent_name=(target.agent or "") if target else "",
        store=target.key if target else "",
        before=before,
        after=after,
        error=error,
        reason=actor.reason,
        ticket=actor.ticket,
        count=count,
    )


def audited[T](
    actor: Actor, backend: MemoryBackend, action: str, target: SourceTarget, step: Callable[[], T]
) -> T:
    """`step()`, audited as a failure when the source refuses it (and raised again)."""
    try:
        return step()
    except SourceError as exc:
        audit(actor, backend.source, action, target, error=exc)
        raise


class ItemChanged(SourceError):
    """The item is no longer the version its editor opened; `current` is the item as it is
    now, which the editor shows."""

    portal_status = 409

    def __init__(self, current: Item) -> None:
        super().__init__(CHANGED_MEANWHILE, status=409)
        self.current = current


class NotMatchedOnce(SourceError):
    """An entry's old text is no longer in the item exactly once: the edit no longer says
    what to change."""

    portal_status = 400


def version_of(item: Item) -> str:
    return item.version or content_hash(item.text or "")


def target_of(actor: Actor, backend: MemoryBackend, key: str) -> SourceTarget | None:
    """The subject's target of that key, looked up among theirs (a key from a URL is never
    trusted): by the backend's own look-up where it has one, else in the list."""
    subject = subject_of(actor)
    if isinstance(backend, TargetFinder):
        return backend.find_target(subject, key)
    return next((t for t in backend.list_targets(subject) if t.key == key), None)


def target_page(
    actor: Actor, backend: MemoryBackend, target: SourceTarget, cursor: str | None = None
) -> ItemsPage:
    require(backend, Capability.LIST)
    return backend.read_page(subject_of(actor), target, cursor)


def item_read(actor: Actor, backend: MemoryBackend, target: SourceTarget, key: str) -> Item:
    """One item with its text; audited as a reveal when support staff read it for someone."""
    subject = subject_of(actor)

    def read() -> Item:
        return backend.read_item(subject, target, key)

    if not actor.subject_upn or actor.subject_upn == actor.who.upn:
        return read()
    item = audited(actor, backend, Action.REVEAL, target, read)
    audit(actor, backend.source, Action.REVEAL, target, before=item.text)
    return item


def item_delete(actor: Actor, backend: MemoryBackend, target: SourceTarget, key: str) -> Item:
    """Deletes one item and returns it as it was (what an Undo restores). Audited."""
    require(backend, Capability.DELETE_ITEM)
    subject = subject_of(actor)
    deleted = audited(
        actor,
        backend,
        Action.DELETE_ENTRY,
        target,
        lambda: backend.delete_item(subject, target, key),
    )
    audit(actor, backend.source, Action.DELETE_ENTRY, target, before=deleted.text)
    deletions_record(subject.upn, backend.source, [deleted.text or ""])
    item_kept(actor, backend.source, target, key, Action.DELETE_ENTRY, deleted.text or "", "")
    return deleted


def item_restore(actor: Actor, backend: MemoryBackend, target: SourceTarget, item: Item) -> Item:
    """Undo of a delete. Audited."""
    require(backend, Capability.RESTORE_ITEM)
    subject = subject_of(actor)
    restored = audited(
        actor, backend, Action.UNDO, target, lambda: backend.restore_item(subject, target, item)
    )
    audit(actor, backend.source, Action.UNDO, target, after=restored.text)
    deletions_forget(subject.upn, backend.source, [item.text or ""])
    _kept_back(actor, backend.source, target, item.key, restored, Action.UNDO)
    return restored


def _kept_back(
    actor: Actor, source: str, target: SourceTarget, key: str, restored: Item, action: str
) -> None:
    """An item put back (an Undo, a restore) is kept as a change of its own; where it came
    back under another key (a new memory, an item added again), under the deleted one's key
    too, so that the deleted one leaves "Deleted by you" and its History says so."""
    for at in dict.fromkeys((restored.key, key)):
        item_kept(actor, source, target, at, action, "", restored.text or "")


def _still_at(
    actor: Actor,
    backend: MemoryBackend,
    target: SourceTarget,
    key: str,
    version: str,
    action: str = Action.EDIT,
) -> Item:
    """The item just before a change, if it is still at `version` (else ItemChanged,
    audited as the change's failure)."""
    subject = subject_of(actor)
    current = audited(
        actor, backend, action, target, lambda: backend.read_item(subject, target, key)
    )
    if version_of(current) != version:
        changed = ItemChanged(current)
        audit(actor, backend.source, action, target, error=changed)
        raise changed
    return current


def item_replace(
    actor: Actor,
    backend: MemoryBackend,
    target: SourceTarget,
    key: str,
    text: str | Callable[[str], str],
    version: str,
    *,
    action: str = Action.EDIT,
) -> Item:
    """One item's text replaced with `text` (or what `text` makes of the item's text just
    read) if it is still at `version` (`version_of` when the editor opened), compared just
    before saving. Audited as `action` (an edit, or the restore of an earlier version), and
    the version before kept."""
    require(backend, Capability.EDIT_ITEM)
    subject = subject_of(actor)
    current = _still_at(actor, backend, target, key, version, action)
    if callable(text):
        text = text(current.text or "")
    edited = audited(
        actor, backend, action, target, lambda: backend.replace_item(subject, target, key, text)
    )
    audit(actor, backend.source, action, target, before=current.text, after=edited.text)
    item_kept(actor, backend.source, target, key, action, current.text or "", edited.text or "")
    return edited


def entry_edit(
    actor: Actor,
    backend: MemoryBackend,
    target: SourceTarget,
    key: str,
    old: str,
    new: str,
    version: str,
) -> Item:
    """One entry of an item: `old` (in it exactly once) replaced with `new`, if the item is
    still at `version` just before saving. Audited."""
    require(backend, Capability.EDIT_ITEM)
    subject = subject_of(actor)
    current = _still_at(actor, backend, target, key, version)
    if not old or (current.text or "").count(old) != 1:
        raise NotMatchedOnce(NOT_MATCHED_ONCE, status=400)
    edited = audited(
        actor,
        backend,
        Action.EDIT,
        target,
        lambda: backend.edit_item(subject, target, key, old, new),
    )
    audit(actor, backend.source, Action.EDIT, target, before=current.text, after=edited.text)
    item_kept(
        actor, backend.source, target, key, Action.EDIT, current.text or "", edited.text or ""
    )
    return edited


def item_resolve(
    actor: Actor, backend: MemoryBackend, target: SourceTarget, key: str, keep: int, version: str
) -> Item:
    """Of the versions item `key` holds at once, the `keep`-th stays (written as its text),
    if the item is still at `version` just before saving. Audited as an edit."""
    require(backend, Capability.RESOLVE)
    subject = subject_of(actor)
    current = audited(
        actor, backend, Action.EDIT, target, lambda: backend.read_item(subject, target, key)
    )
    if version_of(current) != version or not 0 <= keep < len(current.held):
        changed = ItemChanged(current)
        audit(actor, backend.source, Action.EDIT, target, error=changed)
        raise changed
    text = current.held[keep].text
    kept = audited(
        actor,
        backend,
        Action.EDIT,
        target,
        lambda: backend.replace_item(subject, target, key, text),
    )
    audit(actor, backend.source, Action.EDIT, target, before=current.text, after=kept.text)
    item_kept(actor, backend.source, target, key, Action.EDIT, current.text or "", kept.text or "")
    return kept


RESTORED_REASON = "Restored an earlier version"


def item_put_back(
    actor: Actor,
    backend: MemoryBackend,
    target: SourceTarget,
    key: str,
    restored: Callable[[str], str],
    version: str,
) -> Item:
    """An earlier version of item `key` the History kept (`restored` of the item's text now:
    that version with what agents added since), put back as a conditional write: over the
    item if it is still at `version`; where the History showed it deleted (`version` ""),
    only if it is still gone, by the source's restore, else added again as a new item
    (another key). Audited and kept as a restore, which is taken back the same way."""
    action = Action.RESTORE_VERSION
    if version:
        return item_replace(actor, backend, target, key, restored, version, action=action)
    text = restored("")
    restores = Capability.RESTORE_ITEM in backend.capabilities
    if not restores:
        require(backend, Capability.APPEND)
    subject = subject_of(actor)
    _still_gone(actor, backend, target, key, action)
    if _brought_back(actor, backend.source, target, key):
        changed = ItemChanged(Item(key, "", None, text))
        audit(actor, backend.source, action, target, error=changed)
        raise changed
    if restores:
        put_back = Item(key, "", None, text)
        restored = audited(
            actor, backend, action, target, lambda: backend.restore_item(subject, target, put_back)
        )
    else:
        restored = audited(
            actor,
            backend,
            action,
            target,
            lambda: backend.append(subject, target, text, RESTORED_REASON),
        )
    audit(actor, backend.source, action, target, after=restored.text)
    deletions_forget(subject.upn, backend.source, [text])
    if restores:
        _kept_back(actor, backend.source, target, key, restored, action)
    else:  # added to another item: kept under the deleted one only (the other holds more)
        item_kept(actor, backend.source, target, key, action, "", text)
    return restored


def _brought_back(actor: Actor, source: str, target: SourceTarget, key: str) -> bool:
    """Whether the deleted item at `key` was already brought back through the portal (its
    latest kept change is no longer the delete): a source that keeps nothing at the key
    (a memory written again under a new id) would otherwise take the same restore twice."""
    changes = item_changes(person_of(actor), source, target, key)
    return bool(changes) and changes[0].action != Action.DELETE_ENTRY


def _still_gone(
    actor: Actor, backend: MemoryBackend, target: SourceTarget, key: str, action: str
) -> None:
    """Nothing is at `key` just before a deleted item is put back (else ItemChanged, audited
    as the restore's failure: what was written there meanwhile is not overwritten)."""
    try:
        current = backend.read_item(subject_of(actor), target, key)
    except SourceError as exc:
        if exc.portal_status == 404:
            return
        audit(actor, backend.source, action, target, error=exc)
        raise
    changed = ItemChanged(current)
    audit(actor, backend.source, action, target, error=changed)
    raise changed


def entries_of(item: Item) -> list[tuple[int, str]]:
    """An item's entries as the pages edit them one at a time: its non-blank lines, with
    their line numbers (1-based)."""
    lines = (item.text or "").splitlines()
    return [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]


def target_clear(actor: Actor, backend: MemoryBackend, target: SourceTarget) -> list[Outcome]:
    """Every item of the target deleted; one outcome per item. Audited."""
    require(backend, Capability.CLEAR_TARGET)
    subject = subject_of(actor)
    rows = audited(
        actor, backend, Action.CLEAR, target, lambda: backend.clear_target(subject, target)
    )
    kept = [row for row in rows if row.result != "erased"]
    error = SourceError(f"{len(kept)} of {len(rows)} items were not deleted") if kept else None
    audit(actor, backend.source, Action.CLEAR, target, error=error, count=len(rows))
    return rows


def target_export(actor: Actor, backend: MemoryBackend, target: SourceTarget) -> str:
    """The target as one markdown document. Audited."""
    require(backend, Capability.EXPORT)
    subject = subject_of(actor)
    text = audited(actor, backend, Action.EXPORT, target, lambda: backend.export(subject, target))
    audit(actor, backend.source, Action.EXPORT, target, before=text)
    return text


def item_export(actor: Actor, backend: MemoryBackend, target: SourceTarget, key: str) -> str:
    """One item as a markdown document, as a target's export writes each. Audited."""
    require(backend, Capability.EXPORT)
    subject = subject_of(actor)
    item = audited(
        actor, backend, Action.EXPORT, target, lambda: backend.read_item(subject, target, key)
    )
    described = f"\n_{item.description}_\n" if item.description else ""
    text = f"# {target.title}\n\n## {item.key}\n{described}\n{item.text or ''}\n"
    audit(actor, backend.source, Action.EXPORT, target, before=text)
    return text


def target_preview(
    actor: Actor, backend: MemoryBackend, target: SourceTarget, question: str, limit: int
) -> Preview:
    """What the target's agent is given about the person for `question` (the top `limit`).
    Audited with how many items came back, never what they say."""
    require(backend, Capability.PREVIEW)
    subject = subject_of(actor)
    preview = audited(
        actor,
        backend,
        Action.PREVIEW,
        target,
        lambda: backend.preview(subject, target, question, limit),
    )
    audit(actor, backend.source, Action.PREVIEW, target, count=len(preview.items))
    return preview


def item_report(
    actor: Actor,
    backend: MemoryBackend,
    target: SourceTarget,
    reference: str,
    key: str,
    correction: str,
) -> str:
    """The person's "this is wrong" on item `key` of preview `reference`, with what is true:
    sent for correction (the source's receipt id), not corrected. Audited."""
    require(backend, Capability.PREVIEW)
    subject = subject_of(actor)
    receipt = audited(
        actor,
        backend,
        Action.REPORT,
        target,
        lambda: backend.report(subject, target, reference, key, correction),
    )
    audit(actor, backend.source, Action.REPORT, target, after=correction)
    return receipt


def own_targets(backend: MemoryBackend, subject: Subject) -> list[SourceTarget]:
    """The subject's own targets: a shared one is never in their export or erasure."""
    return [target for target in backend.list_targets(subject) if not target.shared]


class BackendSteps:
    """`protocol.Steps` for a source that brings only its adapter (`make(actor)`)."""

    def __init__(self, make: Callable[[Actor], MemoryBackend]) -> None:
        self._make = make

    def plan(self, actor: Actor) -> Erasure:
        backend, subject = self._make(actor), subject_of(actor)
        if why := _not_erasable(backend):
            return Erasure((Outcome(None, backend.source, "not possible", why),))
        rows = []
        for target in own_targets(backend, subject):
            total = len(all_items(backend, subject, target))
            rows.append(Outcome(target, target.key, "to erase", total=total))
        return Erasure(tuple(rows))

    def export_all(self, actor: Actor) -> list[ExportedFile]:
        backend, subject = self._make(actor), subject_of(actor)
        files = []
        for target in own_targets(backend, subject):
            keys = [item.key for item in all_items(backend, subject, target)]
            if not keys:
                continue
            items = [backend.read_item(subject, target, key) for key in keys]
            text = target_export(actor, backend, target)
            versions = {item.key: version_of(item) for item in items}
            files.append(ExportedFile(export_name(target.key, files), text, target.key, versions))
        return files

    def erase_all(self, actor: Actor, exported: Exported) -> Erasure:
        backend, subject = self._make(actor), subject_of(actor)
        if why := _not_erasable(backend):
            return Erasure((Outcome(None, backend.source, "not possible", why),))
        if exported is None:
            error = SourceError(NOT_EXPORTED, status=409)
            audit(actor, backend.source, Action.ERASE, None, error=error)
            return Erasure((Outcome(None, backend.source, "not possible", NOT_EXPORTED),))
        rows = []
        for target in own_targets(backend, subject):
            try:
                versions = exported.get(target.key, {})
                rows.append(self._erase_target(actor, backend, subject, target, versions))
            except SourceError as exc:  # this target only: the others are still erased
                audit(actor, backend.source, Action.ERASE, target, error=exc)
                rows.append(Outcome(target, target.key, "failed", exc.message))
        return Erasure(tuple(rows))

    def _erase_target(
        self,
        actor: Actor,
        backend: MemoryBackend,
        subject: Subject,
        target: SourceTarget,
        versions: dict[str, str],
    ) -> Outcome:
        keys = [item.key for item in all_items(backend, subject, target)]
        erased = kept = 0
        for key in keys:
            try:
                if versions.get(key) != version_of(backend.read_item(subject, target, key)):
                    kept += 1
                    continue
                backend.delete_item(subject, target, key)
            except SourceError as exc:  # what was erased before it is still said and audited
                reason = f"{erased} of {len(keys)} erased; then: {exc.message}"
                audit(actor, backend.source, Action.ERASE, target, error=exc, count=erased)
                result = "partly" if erased else "failed"
                return Outcome(target, target.key, result, reason, erased, len(keys))
            erased += 1
        total = erased + kept
        reason = f"{erased} of {total} erased" + (f"; {kept} left: {CHANGED}" if kept else ".")
        if not kept:
            audit(actor, backend.source, Action.ERASE, target, count=erased)
            return Outcome(target, target.key, "erased", reason, erased, total)
        error = SourceError(reason)
        audit(actor, backend.source, Action.ERASE, target, error=error, count=erased)
        result = "partly" if erased else "changed"
        return Outcome(target, target.key, result, reason, erased, total)


def _not_erasable(backend: MemoryBackend) -> str:
    """Why a request cannot erase here ("" where it can): it erases only what its export
    handed over, so a source it cannot export (or list) is not erased either."""
    for capability in (Capability.ERASE_SUBJECT, Capability.EXPORT, Capability.LIST):
        if capability not in backend.capabilities:
            return backend.missing_reason(capability)
    return ""


def all_items(backend: MemoryBackend, subject: Subject, target: SourceTarget) -> list[Item]:
    """Every item of the target, page after page."""
    items: list[Item] = []
    cursor: str | None = None
    while True:
        page = backend.read_page(subject, target, cursor)
        items += page.items
        cursor = page.next_cursor
        if cursor is None:
            return items


def export_name(key: str, files: list[ExportedFile]) -> str:
    """The file a target's export goes to, beside `files` already named: two keys that
    read alike as file names ("travel planner", "travel_planner") get "-2", never one."""
    base, taken, n = file_name(key), {f.name for f in files}, 2
    name = f"{base}.md"
    while name in taken:
        name, n = f"{base}-{n}.md", n + 1
    return name


def file_name(key: str) -> str:
    """A key as a file name inside an export's zip: letters, digits, '.', '_' and '-' only
    (no path separator, so never a path out of its folder)."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in key)[:100] or "memory"
