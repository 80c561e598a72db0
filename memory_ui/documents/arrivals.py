"""What arrived in a memory while a person was changing it, when that is only entries
appended after what they saw (docs/architecture.md, Changes made meanwhile).

Agents append to a memory at any time, and an append only ever adds a block at the end
(`documents.appended`): the document as it was, without its trailing whitespace, a blank
line, then a heading. So a person's change computed from the version they saw still holds
for the current document when the current document is that version followed by whole
appended entries: the change is applied to what they saw and the appended entries are put
back after it, verbatim. Anything else (an entry changed or removed, the document replaced)
is a real overlap, and `appended_since` says None.

A person's version carries only the SHA-256 of what they saw, so the split is found by
hashing the current document's text before each of its last entry headings.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_ui.documents import Entry, content_hash, entry_label, parse_document

# How many of the latest entries may have arrived meanwhile: each one tried costs a hash
# of the text before it, so a long document is not hashed hundreds of times.
MAX_ARRIVED = 50
# The endings the seen version may have had where the append stripped trailing whitespace.
_ENDINGS = ("\n", "", "\r\n", "\n\n")


@dataclass(frozen=True)
class Arrived:
    """The current document split into the version the person saw and what came after."""

    seen: str  # the version they saw, byte for byte (its SHA-256 is their version's)
    tail: str  # the entries appended since, verbatim, from their first heading on
    entries: tuple[Entry, ...]  # those entries, to name them

    @property
    def notice(self) -> str:
        """What to tell the person: what arrived, and that it is kept."""
        labels = [f"\u201c{entry_label(e.reason or e.body)}\u201d" for e in self.entries]
        if len(labels) == 1:
            return f"{labels[0]} was added while you were changing this memory; both are kept."
        named = ", ".join(labels[:3])
        more = f" and {len(labels) - 3} more" if len(labels) > 3 else ""
        return (
            f"{len(labels)} entries were added while you were changing this memory "
            f"({named}{more}); all are kept."
        )


def appended_since(current: str, seen_sha256: str) -> Arrived | None:
    """`current` as the version with SHA-256 `seen_sha256` followed by whole appended
    entries (the fewest that explain it), or None when it is not that."""
    document = parse_document(current)
    headed = [entry for entry in document.entries if entry.kind != "preamble"]
    for position in range(len(headed) - 1, max(len(headed) - 1 - MAX_ARRIVED, -1), -1):
        entry = headed[position]
        before = "".join(document.lines[: entry.start_line]).rstrip()
        for ending in _ENDINGS if before else ("",):
            if content_hash(before + ending) == seen_sha256:
                tail = "".join(document.lines[entry.start_line :])
                return Arrived(before + ending, tail, tuple(headed[position:]))
    return None


def with_arrivals(text: str, arrived: Arrived) -> str:
    """`text` (a change to the seen version) with the arrived entries after it, joined the
    way an append joins them."""
    if not text.strip():
        return arrived.tail
    return f"{text.rstrip()}\n\n{arrived.tail}"
