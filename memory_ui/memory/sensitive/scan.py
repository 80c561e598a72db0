"""The two entry points: every finding in a text, and the same grouped by the part of
a document it is in."""

from __future__ import annotations

import bisect
import string
from dataclasses import dataclass

from memory_ui.documents import Document
from memory_ui.memory.sensitive.cards import find_cards
from memory_ui.memory.sensitive.excerpts import masked
from memory_ui.memory.sensitive.ibans import find_ibans
from memory_ui.memory.sensitive.kinds import DEFAULT_PHONE_REGION, KINDS, Limits, Match
from memory_ui.memory.sensitive.national_ids import find_national_ids
from memory_ui.memory.sensitive.parts import Part, document_parts, line_starts, part_at
from memory_ui.memory.sensitive.phones import find_phones
from memory_ui.memory.sensitive.scanner import Scanner
from memory_ui.memory.sensitive.secrets import find_secrets
from memory_ui.memory.sensitive.terms import find_terms

# ASCII letters lower-cased, same length and offsets: word searches run on this.
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_LIMITS = Limits()  # frozen: one shared default is safe


@dataclass(frozen=True, slots=True)
class Flagged:
    part: Part
    findings: tuple[Match, ...]
    reason: str = ""  # the entry's reason, every finding in it masked (never shown whole)

    @property
    def kinds(self) -> list[str]:
        found = {finding.kind for finding in self.findings}
        return [kind for kind in KINDS if kind in found]


@dataclass(frozen=True, slots=True)
class Scan:
    flagged: list[Flagged]
    complete: bool  # False when the work budget ran out before the end of the document


def sensitive_scan(
    document: Document,
    *,
    phone_region: str | None = DEFAULT_PHONE_REGION,
    limits: Limits = _LIMITS,
) -> Scan:
    """Every part of `document` with something that may be sensitive, in document order."""
    matches, complete = sensitive_find(document.text, phone_region=phone_region, limits=limits)
    parts = document_parts(document)
    starts = line_starts(document.text)
    by_part: dict[int, list[Match]] = {}
    for match in matches:
        line = bisect.bisect_right(starts, match.start) - 1
        where = part_at(parts, line)
        if where is not None:
            by_part.setdefault(where, []).append(match)
    flagged = [
        # One line per kind and excerpt: "diabetes" and "insulin" in one sentence are one.
        Flagged(
            parts[i],
            tuple({(m.kind, m.excerpt): m for m in found}.values()),
            _masked_reason(document.text, parts[i], found, phone_region, limits),
        )
        for i, found in sorted(by_part.items())
    ]
    return Scan(flagged, complete)


def _masked_reason(
    text: str, part: Part, found: list[Match], phone_region: str | None, limits: Limits
) -> str:
    """The entry's reason as the review shows it: what a scan of the reason alone finds,
    and any finding of the entry that the reason repeats, masked."""
    reason = part.entry.reason if part.entry else None
    if not reason:
        return ""
    spans = [
        (m.start, m.end, m.kind)
        for m in sensitive_find(reason, phone_region=phone_region, limits=limits)[0]
    ]
    for match in found:
        value = text[match.start : match.end]
        at = reason.find(value)
        while value and at >= 0:
            end = at + len(value)
            if not any(s < end and at < e for s, e, _ in spans):
                bisect.insort(spans, (at, end, match.kind))
            at = reason.find(value, end)
    return masked(reason, spans)


def sensitive_find(
    text: str,
    *,
    phone_region: str | None = DEFAULT_PHONE_REGION,
    limits: Limits = _LIMITS,
) -> tuple[list[Match], bool]:
    """What in `text` may be sensitive, in text order, and whether all of it was checked."""
    scan = Scanner(text, limits, text.translate(_ASCII_LOWER))
    for step in (find_secrets, find_cards, find_ibans, find_national_ids, find_terms):
        step(scan)
    find_phones(scan, phone_region)
    return scan.matches(), not scan.exhausted
