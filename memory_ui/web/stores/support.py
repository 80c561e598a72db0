"""What the session keeps of support staff's work between requests: single-use
confirmations, look-ups (which were made, which still owe their audit event, the opaque
ids that stand for people in addresses) and deletion requests under way (reason, ticket, which memories, the versions their export handed over,
the outcome of the clear).

A request lives in the session of the staff member who started it, bound to the user it is
for, so its id confirms nothing for another user or another person.
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass, field
from typing import Any

from django.contrib.sessions.backends.base import SessionBase

from memory_ui.memory.receipts import Counted, ReceiptRow, other_rows, primary_title

SESSION_REQUESTS = "support_requests"
REQUESTS_KEPT = 10
SESSION_LOOKUPS_DUE = "support_lookups_due"


@dataclass
class Exported:
    """One memory as the request's export handed it over: the version a clear must still
    find (`operations.Version` token) and its size."""

    version: str
    size: int
    entries: int | None = None


# A clear's statuses in an erasure receipt's words (memory.receipts).
RECEIPT_OUTCOMES = {
    "cleared": "erased",
    "left": "partly",
    "changed": "changed meanwhile",
    "unknown": "unknown",
}


@dataclass
class ClearOutcome:
    """What the clear did to one memory: `cleared` (read back empty), `left` (cleared, but
    read back it holds something again: an agent wrote to it since), `changed` (since the
    export, so nothing cleared), `failed` or `unknown` (no answer, or no read-back; it may
    still be cleared). The `after` fields are what the read-back found at `read_at`, and
    `version_after` its version, the one "Erase again" may clear."""

    key: str
    label: str
    status: str
    message: str = ""
    bytes_before: int | None = None
    sha256_before: str = ""
    bytes_after: int | None = None
    sha256_after: str = ""
    entries_before: int | None = None
    entries_after: int | None = None
    read_at: str = ""
    version_after: str = ""

    def receipt_row(self, system: str) -> ReceiptRow:
        return ReceiptRow(
            system=system,
            target=self.label,
            outcome=RECEIPT_OUTCOMES.get(self.status, "failed"),
            reason=self.message,
            before=Counted(self.entries_before, self.bytes_before, self.sha256_before),
            after=Counted(self.entries_after, self.bytes_after, self.sha256_after),
            read_back_at=self.read_at,
        )


@dataclass
class DeletionRequest:
    id: str
    upn: str
    reason: str
    ticket: str
    keys: list[str]
    everything: bool
    started_at: str
    exported: dict[str, Exported] = field(default_factory=dict)
    exported_at: str = ""
    cleared_at: str = ""
    outcomes: list[ClearOutcome] = field(default_factory=list)
    # Other sources' rows (memory.everything): source, target, result, reason, and how
    # many items were erased of how many (total None: not known).
    other_sources: list[dict[str, Any]] = field(default_factory=list)
    # What the export handed over of each other source (source -> target -> item ->
    # version; a source's None: not exported).
    others_exported: dict[str, dict[str, dict[str, str]] | None] = field(default_factory=dict)
    # The erasure receipt of the latest clear (models.ErasureReceipt's id).
    receipt_id: str = ""

    @property
    def title(self) -> str:
        return f"Deletion request {self.ticket}"

    @property
    def exported_all(self) -> bool:
        return all(key in self.exported for key in self.keys)

    @property
    def headline(self) -> str:
        """What the clear did, from the rows below it (the result page's heading): what was
        really erased, and never "all" while any memory, file or system is left."""
        cleared = sum(o.status == "cleared" for o in self.outcomes)
        if not self.other_sources:
            if self.outcomes and cleared == len(self.outcomes):
                return "Cleared" if cleared == 1 else f"All {cleared} cleared"
            if cleared:
                return f"Partly cleared: {cleared} of {len(self.outcomes)}"
            return "Nothing was cleared"
        erased = sum(row.get("erased", 0) for row in self.other_sources)
        found = sum(row.get("total") or 0 for row in self.other_sources)
        left = cleared < len(self.outcomes) or any(
            row["result"] != "erased" for row in self.other_sources
        )
        if not cleared and not erased:
            return "Nothing was cleared"
        if not left:
            files = _counted(erased, "file", "files")
            return (
                f"All cleared: {_counted(cleared, 'memory', 'memories')}, {files} in other systems"
            )
        memories = f"{cleared} of {_counted(len(self.outcomes), 'memory', 'memories')}"
        files = f"{erased} of {_counted(found, 'file', 'files')}" if found else "none"
        return f"Partly cleared: {memories}, {files} in other systems; what is left is listed below"

    @property
    def left(self) -> list[str]:
        """Memories a read-back found written to again after their clear."""
        return [o.key for o in self.outcomes if o.status == "left"]

    @property
    def others_left(self) -> bool:
        """Another system read back with items still there after its erasure."""
        return any(row["result"] == "partly" for row in self.other_sources)

    @property
    def receipt_rows(self) -> list[ReceiptRow]:
        system = primary_title()
        return [o.receipt_row(system) for o in self.outcomes] + other_rows(self.other_sources)

    @property
    def retryable(self) -> list[str]:
        """Memories whose clear failed without changing anything: worth sending again."""
        return [o.key for o in self.outcomes if o.status in ("failed", "unknown")]

    def record_outcomes(self, outcomes: list[ClearOutcome], when: str) -> None:
        """Keep each memory's newest outcome, in the request's order."""
        newest = {o.key: o for o in self.outcomes} | {o.key: o for o in outcomes}
        self.outcomes = [newest[key] for key in self.keys if key in newest]
        self.cleared_at = when

    @classmethod
    def from_session(cls, raw: dict[str, Any]) -> DeletionRequest:
        return cls(
            **{
                **raw,
                "exported": {key: Exported(**value) for key, value in raw["exported"].items()},
                "outcomes": [ClearOutcome(**value) for value in raw["outcomes"]],
            }
        )


def _counted(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _requests(session: SessionBase) -> dict[str, dict[str, Any]]:
    return dict(session.get(SESSION_REQUESTS, {}))


def request_start(
    session: SessionBase,
    *,
    upn: str,
    reason: str,
    ticket: str,
    keys: list[str],
    everything: bool,
    when: str,
) -> DeletionRequest:
    started = DeletionRequest(
        secrets.token_urlsafe(12), upn.casefold(), reason, ticket, keys, everything, when
    )
    kept = list(_requests(session).items())[-(REQUESTS_KEPT - 1) :]
    session[SESSION_REQUESTS] = {**dict(kept), started.id: asdict(started)}
    return started


def request_get(session: SessionBase, upn: str, request_id: str) -> DeletionRequest | None:
    """The request `request_id` of this session, when it is for `upn`."""
    raw = _requests(session).get(request_id)
    if raw is None or raw["upn"] != upn.casefold():
        return None
    return DeletionRequest.from_session(raw)


def request_save(session: SessionBase, request: DeletionRequest) -> None:
    session[SESSION_REQUESTS] = {**_requests(session), request.id: asdict(request)}


# --- Single-use confirmations (support): a replayed POST does nothing, and a confirmation
# issued for one user and one action (export or clear) confirms nothing else, so a form
# for alice cannot export bob's memory.

SESSION_NONCES = "support_nonces"
NONCES_KEPT = 21


def _nonces(session: SessionBase) -> list[list[str]]:
    """[nonce, casefolded UPN, action], oldest first. Bare strings (issued before nonces
    were bound) confirm nothing and are dropped."""
    kept = session.get(SESSION_NONCES, [])
    return [n for n in kept if isinstance(n, list) and len(n) == 3]


def nonce_issue(session: SessionBase, upn: str, action: str) -> str:
    """A confirmation for `action` on `upn`'s memory, good once."""
    nonce = secrets.token_urlsafe(16)
    recent = _nonces(session)[-(NONCES_KEPT - 1) :]
    session[SESSION_NONCES] = [*recent, [nonce, upn.casefold(), action]]
    return nonce


def nonce_spend(session: SessionBase, nonce: str, upn: str, action: str) -> bool:
    """Use `nonce` up; True only when it was issued for this `upn` and `action`. Sent for
    another user or action it is used up all the same: a form never posts it there."""
    nonces = _nonces(session)
    found = next((n for n in nonces if n[0] == nonce), None)
    if found is None:
        return False
    nonces.remove(found)
    session[SESSION_NONCES] = nonces
    return found[1:] == [upn.casefold(), action]


# --- Opaque ids for people in addresses: a UPN in a URL ends up in access logs, browser
# history and Referer headers, so support pages and the audit trail's filters carry a
# random id instead, which only this session resolves (another staff member's session,
# or this one after it ended, knows nothing of it). One id per person per session, so
# an address stays good for as long as the session remembers the person.

SESSION_PEOPLE = "support_people"
SESSION_LOOKUPS = "support_lookups"
PEOPLE_KEPT = 20  # look-ups remembered; ids kept: theirs and as many others


def person_id(session: SessionBase, upn: str) -> str:
    """The id that stands for `upn` (casefolded) in this session's addresses."""
    upn = upn.casefold()
    people: dict[str, str] = dict(session.get(SESSION_PEOPLE, {}))
    known = next((pid for pid, person in people.items() if person == upn), None)
    pid = known or secrets.token_urlsafe(16)
    people.pop(pid, None)  # the newest last, so the least recently used goes first
    # Never the id of someone whose look-up stands: the audit trail's filters make ids
    # too, and must not close a looked-up user's pages (an open deletion request's).
    looked_up_now = set(session.get(SESSION_LOOKUPS, []))
    others = [other for other, person in people.items() if person not in looked_up_now]
    for stale in others[: max(0, len(people) + 1 - 2 * PEOPLE_KEPT)]:
        del people[stale]
    session[SESSION_PEOPLE] = {**people, pid: upn}
    return pid


def person_upn(session: SessionBase, pid: str) -> str | None:
    """The UPN `pid` stands for in this session, or None (unknown, expired, elsewhere)."""
    return session.get(SESSION_PEOPLE, {}).get(pid)


# --- Support look-ups: an overview opens only after a look-up through the (CSRF-checked)
# form, so a link from elsewhere cannot write audit events in staff's names.


def lookup_remember(session: SessionBase, upn: str) -> str:
    """Record the look-up of `upn`; returns the opaque id its pages' addresses carry."""
    recent = [u for u in session.get(SESSION_LOOKUPS, []) if u != upn.casefold()]
    session[SESSION_LOOKUPS] = [*recent[-(PEOPLE_KEPT - 1) :], upn.casefold()]
    return person_id(session, upn)


def looked_up(session: SessionBase, upn: str) -> bool:
    return upn.casefold() in session.get(SESSION_LOOKUPS, [])


# --- One look-up audit event per visit: the look-up form's POST makes one due, and the
# overview that follows records it; going back to the overview later records nothing.


def lookup_audit_due(session: SessionBase, upn: str, due: bool = True) -> None:
    pending = [u for u in session.get(SESSION_LOOKUPS_DUE, []) if u != upn.casefold()]
    session[SESSION_LOOKUPS_DUE] = (
        [*pending[-(PEOPLE_KEPT - 1) :], upn.casefold()] if due else pending
    )


def lookup_audit_is_due(session: SessionBase, upn: str) -> bool:
    return upn.casefold() in session.get(SESSION_LOOKUPS_DUE, [])
