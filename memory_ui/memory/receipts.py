"""Erasure receipts: when support's deletion request or a person's "Clear everything"
finishes, a signed account of it (memory_ui.signatures), per source and target: what was
there before (entries or items, bytes, sha256 where known), what a read-back found after
and when, and the outcome. Hashes and counts only, never content: a receipt is handed to
the person and kept as long as the audit trail.

Outcomes: "erased" (read back empty), "partly" (read back, something is still there: erase
again), "changed meanwhile" (it changed since the export, so nothing was erased),
"not possible" (why, and whom to ask), "failed" and "unknown" (no answer)."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import asdict, dataclass, replace
from typing import Any

from django.utils import timezone

from memory_ui.audit import audit_record
from memory_ui.documents import content_hash, count_entries
from memory_ui.identity import Identity
from memory_ui.models import AuditEvent, ErasureReceipt
from memory_ui.signatures import signed, signing_key_id
from memory_ui.sources import registry
from memory_ui.sources.agent_memory import Loaded

RECEIPT_TYPE = "memory-portal/erasure-receipt"
FORMAT_VERSION = 1

# The other sources' rows (memory.everything) in the receipt's words.
OTHER_OUTCOMES = {
    "erased": "erased",
    "partly": "partly",
    "changed since the export": "changed meanwhile",
    "not possible": "not possible",
}


@dataclass(frozen=True)
class Counted:
    """What a target held at one moment: entries or items, bytes, sha256 (None or "":
    not known; a source whose contents the portal never reads gives a count only)."""

    items: int | None = None
    bytes: int | None = None
    sha256: str = ""


@dataclass(frozen=True)
class ReceiptRow:
    system: str
    target: str
    outcome: str
    reason: str = ""
    before: Counted = Counted()
    after: Counted = Counted()
    read_back_at: str = ""

    @property
    def left(self) -> bool:
        """The read-back found something still there."""
        return self.outcome == "partly"


def primary_title() -> str:
    """The name of the system the portal's own memory pages are about (CoreAPI here)."""
    return next((s.title for s in registry.sources() if s.primary), "")


def other_rows(rows: list[dict[str, Any]]) -> list[ReceiptRow]:
    """The other sources' rows of a deletion request (memory.everything.others_erase)."""
    return [
        ReceiptRow(
            system=row["source"],
            target=row["target"],
            outcome=OTHER_OUTCOMES.get(row["result"], "failed"),
            reason=row["reason"],
            before=Counted(items=row.get("total")),
            after=Counted(items=row.get("left")),
            read_back_at=row.get("read_at", ""),
        )
        for row in rows
    ]


@dataclass(frozen=True)
class MemoryErasure:
    """A person's memories cleared: the receipt's rows, and the keys of those a read-back
    found written to again (to erase again)."""

    rows: list[ReceiptRow]
    left: list[str]


def _counted(loaded: Loaded | None) -> Counted:
    if loaded is None or loaded.memory is None:
        return Counted()
    text = loaded.memory.content_markdown
    return Counted(count_entries(text), len(text.encode()), content_hash(text))


def memory_erasure(
    before: list[Loaded], results: list[Loaded], read: list[Loaded], read_at: str
) -> MemoryErasure:
    """The rows of memories cleared in the primary source: each as read `before` the
    clear, its result, and what the read-back found (`read`, at `read_at`)."""
    system = primary_title()
    was = {loaded.key: loaded for loaded in before}
    found = {loaded.key: loaded for loaded in read}
    rows, left = [], []
    for result in results:
        row = ReceiptRow(
            system, result.target.label, "erased", before=_counted(was.get(result.key))
        )
        back = found.get(result.key)
        if result.error is not None:
            outcome = "unknown" if result.error.outcome_unknown else "failed"
            row = replace(row, outcome=outcome, reason=result.error.message)
        elif back is None or back.memory is None:
            why = back.error.message if back is not None and back.error else ""
            reason = f"It was cleared, but reading it back failed: {why}"
            row = replace(row, outcome="unknown", reason=reason, read_back_at=read_at)
        else:
            row = replace(row, after=_counted(back), read_back_at=read_at)
            if back.memory.has_content:
                reason = "Read back after the clear, it holds something again: erase again."
                row = replace(row, outcome="partly", reason=reason)
                left.append(result.key)
        rows.append(row)
    return MemoryErasure(rows, left)


def receipt_outcome(rows: list[ReceiptRow]) -> str:
    if rows and all(row.outcome == "erased" for row in rows):
        return "erased"
    if any(row.outcome in ("erased", "partly") for row in rows):
        return "partly"
    return "nothing erased"


def receipt_write(
    who: Identity,
    kind: str,
    rows: list[ReceiptRow],
    *,
    subject_upn: str,
    started_at: str,
    ticket: str = "",
) -> ErasureReceipt:
    """Sign and keep the receipt, and record its sha256 in the audit trail."""
    receipt_id = uuid.uuid4()
    document = {
        "type": RECEIPT_TYPE,
        "version": FORMAT_VERSION,
        "id": str(receipt_id),
        "kind": kind,
        "subject": subject_upn,
        "by": "support" if who.upn.casefold() != subject_upn.casefold() else "the person",
        "ticket": ticket,
        "started_at": started_at,
        "signed_at": timezone.now().isoformat(),
        "outcome": receipt_outcome(rows),
        "targets": [asdict(row) for row in rows],
    }
    data = signed(document)
    receipt = ErasureReceipt.objects.create(
        id=receipt_id,
        subject_upn=subject_upn,
        kind=kind,
        ticket=ticket,
        key_id=signing_key_id(),
        sha256=hashlib.sha256(data).hexdigest(),
        document=data.decode(),
    )
    # `after` is the receipt itself: the event keeps its size and sha256.
    audit_record(
        who,
        AuditEvent.Action.RECEIPT,
        subject_upn=subject_upn,
        after=receipt.document,
        ticket=ticket,
        source=AuditEvent.Source.PORTAL,
    )
    return receipt


def receipt_details(receipt: ErasureReceipt) -> dict[str, Any]:
    """The signed document of a stored receipt, for its printable page."""
    return json.loads(receipt.document)["document"]
