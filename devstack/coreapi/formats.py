"""Document formats the memory contract leaves open: append/import blocks and combined reads
(docs/architecture.md, Document formats).

The portal parses these headings to show provenance, so the shapes here are exact:

    {existing, trailing whitespace removed}\\n\\n          (only if the document was not empty)
    ## Added 2026-10-02T16:40:55Z — {reason}            (" — reason" only when given)
    > operation: {operation_id} · session: {session_id} (only when either is given)
    \\n
    {appended markdown, stripped}\\n
"""

from __future__ import annotations

import datetime as dt

EM_DASH = "\u2014"
MIDDLE_DOT = "\u00b7"


def heading_timestamp(at: dt.datetime) -> str:
    """UTC, ISO 8601 to the second, `Z` suffix: 2026-10-02T16:40:55Z."""
    return at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _one_line(value: str | None) -> str | None:
    """Provenance lives on a single heading/quote line; a newline would break the entry shape."""
    if value is None:
        return None
    collapsed = " ".join(value.split())
    return collapsed or None


def _provenance_line(operation_id: str | None, session_id: str | None) -> str | None:
    parts = []
    if operation_id:
        parts.append(f"operation: {operation_id}")
    if session_id:
        parts.append(f"session: {session_id}")
    return f"> {f' {MIDDLE_DOT} '.join(parts)}" if parts else None


def _add_block(existing: str, heading: str, provenance: str | None, content: str) -> str:
    base = existing.rstrip()
    lines = [heading]
    if provenance:
        lines.append(provenance)
    block = "\n".join(lines) + "\n\n" + content.strip() + "\n"
    return f"{base}\n\n{block}" if base else block


def append_entry(
    existing: str,
    content: str,
    at: dt.datetime,
    reason: str | None = None,
    operation_id: str | None = None,
    session_id: str | None = None,
) -> str:
    """The document after POST /memory/append."""
    heading = f"## Added {heading_timestamp(at)}"
    reason = _one_line(reason)
    if reason:
        heading += f" {EM_DASH} {reason}"
    provenance = _provenance_line(_one_line(operation_id), _one_line(session_id))
    return _add_block(existing, heading, provenance, content)


def import_entry(existing: str, content: str, at: dt.datetime) -> str:
    """The document after POST /memory/import with mode=append."""
    return _add_block(existing, f"## Imported {heading_timestamp(at)}", None, content)


def _is_blank(line: str) -> bool:
    # Markdown's notion of a blank line: only spaces and tabs (and a CR from CRLF text).
    return line.strip(" \t\r") == ""


def strip_blank_lines(text: str) -> str:
    """Drop whole blank lines at both ends; indentation of the first content line survives."""
    lines = text.split("\n")
    start = 0
    while start < len(lines) and _is_blank(lines[start]):
        start += 1
    end = len(lines)
    while end > start and _is_blank(lines[end - 1]):
        end -= 1
    return "\n".join(lines[start:end])


def combine(*documents: str) -> str:
    """scope=combined: non-empty parts joined by one blank line, ending with one newline."""
    parts = [part for part in (strip_blank_lines(doc) for doc in documents) if part]
    return "\n\n".join(parts) + "\n" if parts else ""
