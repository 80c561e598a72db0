"""Django's own upload handling, kept bounded: what arrives is never stored beyond what
the portal could accept."""

from __future__ import annotations

from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest

from memory_ui.memory import uploads


class CappedUploadHandler(FileUploadHandler):
    """First in FILE_UPLOAD_HANDLERS: a file bigger than anything the portal accepts (an
    "Export everything" zip) is skipped rather than written to memory or disk, and its
    field name remembered, so the form can say "too large" rather than "no file"."""

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        if start + len(raw_data) > upload_cap():
            if self.request is not None:
                oversized = getattr(self.request, _OVERSIZED, set())
                oversized.add(self.field_name)
                setattr(self.request, _OVERSIZED, oversized)
            raise SkipFile
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handler builds the file


_OVERSIZED = "_memory_portal_oversized_uploads"


def upload_cap() -> int:
    return uploads.ARCHIVE_FACTOR * uploads.max_bytes()


def was_oversized(request: HttpRequest, field_name: str) -> bool:
    return field_name in getattr(request, _OVERSIZED, set())
