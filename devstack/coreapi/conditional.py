"""Conditional writes: a Memory Portal extension the real CoreAPI contract lacks
(docs/conditional-writes.md).

- A stored document's version is its strong entity tag: `"<sha256 hex of content_markdown,
  UTF-8>"`, lower-case hex in double quotes. A missing document reads as `""`, so it has
  the tag of the empty string, like an empty one.
- `If-Match` on import and clear is `*` or a comma-separated list of quoted entity tags
  (RFC 9110, 13.1.1), compared strongly: character for character. `*` always matches,
  since every user or agent document reads as something (`""` at least).
- Anything else is malformed (400): an empty value, `*` inside a list, unquoted values, and
  weak tags (`W/"..."`), which a strong comparison could never match anyway.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

IF_MATCH = "If-Match"  # request header, and its key in ValidationProblemDetails.errors
ETAG = "ETag"
PRECONDITION_FAILED_DETAIL = "The memory changed since the version in If-Match."

# One list element and the separator after it. etagc: %x21 / %x23-7E / obs-text; commas are
# legal inside the quotes, so the list is scanned, not split. Empty elements (", ,") are
# tolerated, as RFC 9110 (5.6.1) asks of list recipients.
_ELEMENT = re.compile(r'[ \t]*("[\x21\x23-\x7e\x80-\xff]*")[ \t]*(?:,[ \t,]*|$)')
_MALFORMED = (
    'If-Match must be * or a comma-separated list of quoted entity tags, e.g. "abc", "def".'
)


def entity_tag(content_markdown: str) -> str:
    """The strong ETag of a stored document's content."""
    return f'"{hashlib.sha256(content_markdown.encode("utf-8")).hexdigest()}"'


@dataclass(frozen=True)
class IfMatch:
    """A parsed If-Match header; `tags` None means `*`."""

    tags: frozenset[str] | None

    def matches(self, content_markdown: str) -> bool:
        return self.tags is None or entity_tag(content_markdown) in self.tags


def parse_if_match(value: str | None) -> IfMatch | None:
    """None for an absent header; ValueError (a message for the client) if malformed."""
    if value is None:
        return None
    text = value.strip(" \t")
    if text == "*":
        return IfMatch(None)
    tags: set[str] = set()
    position = len(text) - len(text.lstrip(" \t,"))  # leading empty elements
    while position < len(text):
        match = _ELEMENT.match(text, position)
        if match is None:
            raise ValueError(_MALFORMED)
        tags.add(match[1])
        position = match.end()
    if not tags:
        raise ValueError(_MALFORMED)
    return IfMatch(frozenset(tags))
