"""The excerpt each finding is shown with: a little of its line, every finding in it
masked (the review list never shows a secret whole)."""

from __future__ import annotations

import bisect

from memory_ui.memory.sensitive.kinds import (
    API_KEY,
    CARD,
    FINANCE,
    HEALTH,
    IBAN,
    NATIONAL_ID,
    PASSWORD,
    PHONE,
    PRIVATE_KEY,
)
from memory_ui.text import without_bidi_controls

_EXCERPT_CONTEXT = 32
_MASK = "\u2022"  # •


def _mask(value: str, kind: str) -> str:
    """`value` as the review list shows it: never whole."""
    if kind in (HEALTH, FINANCE):
        return value  # a word, not a secret: the excerpt says why the entry was flagged
    if kind in (API_KEY, PASSWORD, PRIVATE_KEY):
        # A token's recognisable prefix (ghp_, AKIA, sk-…) helps; the rest, its length and
        # any part of a password do not.
        shown = value[:4] if kind == API_KEY and len(value) >= 20 else ""
        return f"{shown}{_MASK * 8}"
    keep = {CARD: 4, IBAN: 4, NATIONAL_ID: 2, PHONE: 2}.get(kind, 0)
    alnum = [i for i, c in enumerate(value) if c.isalnum()]
    visible = set(alnum[-keep:]) if keep and len(alnum) > keep * 2 else set()
    if kind == IBAN:
        visible |= set(alnum[:2])  # the country
    return "".join(c if not c.isalnum() or i in visible else _MASK for i, c in enumerate(value))


def excerpt(text: str, start: int, end: int, spans: list[tuple[int, int, str]]) -> str:
    """The finding with a little of its line around it, every finding in it masked."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line_end = len(text) if line_end < 0 else line_end
    lo = max(line_start, start - _EXCERPT_CONTEXT)
    hi = max(end, min(line_end, end + _EXCERPT_CONTEXT))  # a private key spans lines
    pieces = []
    position = lo
    for s, e, kind in spans[max(0, bisect.bisect_left(spans, (lo,)) - 1) :]:
        if s >= hi:
            break
        if e <= position:
            continue
        if s < position or e > hi:
            # Cut by the excerpt's edge: what shows of it must not add to another excerpt.
            s, e = max(s, position), min(e, hi)
            masked = _MASK * 8
        elif kind == PRIVATE_KEY:
            masked = _mask_key(text[s:e])
        else:
            masked = _mask(text[s:e], kind)
        pieces.append(text[position:s])
        pieces.append(masked)
        position = e
    pieces.append(text[position:hi])
    excerpt = " ".join(without_bidi_controls("".join(pieces)).split())
    return ("\u2026 " if lo > line_start else "") + excerpt + (" \u2026" if hi < line_end else "")


def masked(text: str, spans: list[tuple[int, int, str]]) -> str:
    """`text` whole (a short one: an entry's reason) with every finding in it masked as an
    excerpt masks it. `spans` are sorted and disjoint, as a scan claims them."""
    pieces = []
    position = 0
    for s, e, kind in spans:
        masked = _mask_key(text[s:e]) if kind == PRIVATE_KEY else _mask(text[s:e], kind)
        pieces += [text[position:s], masked]
        position = e
    pieces.append(text[position:])
    return "".join(pieces)


def _mask_key(value: str) -> str:
    header = value.split("\n", 1)[0].strip()
    return f"{header} {_MASK * 8}" if header.startswith("-----BEGIN") else _MASK * 8
