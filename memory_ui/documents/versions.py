"""A document's version as a person saw it: when it was last changed and its hash, so a
change made meanwhile is noticed before a write (every source with text keeps one)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from memory_ui.documents.entries import content_hash


class Versioned(Protocol):
    updated_on: datetime | None
    content_markdown: str


@dataclass(frozen=True)
class Version:
    """What a user saw when they began: enough to notice a change made meanwhile."""

    updated_on: str
    sha256: str

    @classmethod
    def of(cls, memory: Versioned) -> Version:
        """Hashed once per memory object: a page asks several times (its visit, its forms'
        hidden field, its parsed parts' cache), and a 1 MiB document takes milliseconds."""
        # By identity: a memory's own hash and equality would read its whole text again.
        key = id(memory)
        found = _VERSIONS.get(key)
        if found is not None and found[0]() is memory:
            return found[1]
        version = cls._hashed(memory)
        try:
            alive = weakref.ref(memory, lambda _gone, key=key: _VERSIONS.pop(key, None))
        except TypeError:  # not weakly referenceable: hashed each time
            return version
        _VERSIONS[key] = (alive, version)
        return version

    @classmethod
    def _hashed(cls, memory: Versioned) -> Version:
        stamp = memory.updated_on.isoformat() if memory.updated_on else ""
        return cls(stamp, content_hash(memory.content_markdown))

    def token(self) -> str:
        """For a hidden form field."""
        return f"{self.updated_on}|{self.sha256}"

    @classmethod
    def parse(cls, token: str) -> Version | None:
        stamp, sep, digest = token.rpartition("|")
        if not sep or len(digest) != 64:
            return None
        return cls(stamp, digest)


# id(memory) -> (a weak reference to it, its version): remembered only while the memory
# object lives (a request), dropped when it goes; no content, only the hash and the stamp.
_VERSIONS: dict[int, tuple[weakref.ref, Version]] = {}
