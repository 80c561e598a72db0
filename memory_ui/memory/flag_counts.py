"""How many parts of a document may be sensitive, remembered per document version, so the
dashboard's notice does not scan every memory again on each load (docs/performance.md).

Only two numbers are kept per version: how many parts were flagged, and whether the scan
reached the end. Never the findings or the text: the key is an HMAC of the text (with
SECRET_KEY, so a guessed text cannot be checked against it) and the phone region the scan
used. They live in this process's memory, a bounded number, all forgotten when full.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from memory_ui.documents import Document
from memory_ui.memory.sensitive import sensitive_scan

LIMIT = 4096  # versions remembered; a count is about 200 bytes with its key


@dataclass(frozen=True, slots=True)
class FlagCount:
    flagged: int  # parts with something that may be sensitive
    complete: bool  # False when the scan's work budget ran out first


_counts: dict[bytes, FlagCount] = {}
_lock = threading.Lock()


def _key(text: str, phone_region: str | None) -> bytes:
    secret = settings.SECRET_KEY.encode()
    message = f"{phone_region or ''}\0{text}".encode()
    return hmac.new(secret, message, hashlib.sha256).digest()


def flag_count(text: str, document: Callable[[], Document], phone_region: str | None) -> FlagCount:
    """The count for `text`, scanning `document()` (its parse) only when this version of
    the text has not been counted in this process."""
    key = _key(text, phone_region)
    if (found := _counts.get(key)) is not None:
        return found
    scan = sensitive_scan(document(), phone_region=phone_region)
    count = FlagCount(len(scan.flagged), scan.complete)
    with _lock:
        if len(_counts) >= LIMIT:
            _counts.clear()
        _counts[key] = count
    return count


def forget() -> None:
    """Tests: start from no counts."""
    with _lock:
        _counts.clear()
