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
        try:
            return _VERSIONS[memory]
        except KeyError:
            pass
        except TypeError:  # not hashable or not weakly referenceable: hashed each time
            return cls._hashed(memory)
        version = _VERSIONS[memory] = cls._hashed(memory)
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


# Weak keys: a version is remembered only while its memory object lives (one request), and
# holds no content, only the hash and the stamp.
_VERSIONS: weakref.WeakKeyDictionary[Versioned, Version] = weakref.WeakKeyDictionary()
