"""Markdown people upload or paste for an import: checked before anything reaches CoreAPI.

docs/architecture.md, Faults and bad input: a size limit (`PORTAL_UPLOAD_MAX_BYTES`), UTF-8 only with a BOM stripped, no NUL
bytes, CRLF and CR normalised to LF, and nothing empty. Every refusal is an `UploadRefused`
with a message for the form, never an exception that would end as a 500.

Pure checks on bytes and text: what arrives over HTTP is capped by
`memory_ui.web.upload_handler.CappedUploadHandler` before it gets here.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.template.defaultfilters import filesizeformat

MARKDOWN_EXTENSIONS = (".md", ".markdown", ".txt")
ARCHIVE_FACTOR = 10  # an "Export everything" zip may be this many documents' limit

# Formats people pick by mistake: recognised by their first bytes, named in the message.
MAGIC_NUMBERS: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a zip archive (or a Word/Excel file)"),
    (b"PK\x05\x06", "a zip archive"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Office document"),
    (b"{\\rtf", "an RTF document"),
)
UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# C0 controls other than tab, LF, CR and form feed do not occur in text people write.
CONTROL_CHARACTERS = re.compile(r"[\x01-\x08\x0b\x0e-\x1f]")


class UploadRefused(Exception):
    """Why an upload or paste cannot be imported; `message` is for the form."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True)
class ImportText:
    """Validated markdown, ready for CoreAPI; `source` names where it came from."""

    text: str
    source: str

    @property
    def size_bytes(self) -> int:
        return len(self.text.encode())


def max_bytes() -> int:
    return settings.PORTAL_UPLOAD_MAX_BYTES


def too_large(size: int | None, limit: int, what: str = "The file") -> UploadRefused:
    """413, with the size when it is known (a skipped upload's is not)."""
    measured = f"is {filesizeformat(size)}" if size is not None else "is too large"
    return UploadRefused(f"{what} {measured}; the limit is {filesizeformat(limit)}.", status=413)


def check_extension(filename: str) -> None:
    suffix = PurePosixPath(filename.replace("\\", "/")).suffix.lower()
    if suffix not in MARKDOWN_EXTENSIONS:
        raise UploadRefused(
            f"“{filename}” is not a markdown or text file: choose a .md, .markdown or .txt file."
        )


def binary_kind(data: bytes) -> str | None:
    """What a binary file looks like, by its first bytes; None when it may be text."""
    for magic, kind in MAGIC_NUMBERS:
        if data.startswith(magic):
            return kind
    if data.startswith(UTF16_BOMS):
        return "UTF-16 text"
    return None


def decode_utf8(data: bytes) -> str:
    """Bytes of a markdown file to text: UTF-8 only, any BOM dropped, no NUL or binary."""
    kind = binary_kind(data)
    if kind:
        raise UploadRefused(f"This looks like {kind}, not markdown. Choose a .md or .txt file.")
    if b"\x00" in data:
        raise UploadRefused("The text contains NUL bytes, so it is not a text file.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _not_utf8(data) from exc
    if CONTROL_CHARACTERS.search(text):
        raise UploadRefused("The text contains control characters, so it is not a text file.")
    return text


def _not_utf8(data: bytes) -> UploadRefused:
    # Latin-1 (and Windows-1252) decode anything, so "looks like text" is the test:
    # mostly printable characters once read that way.
    legacy = data.decode("cp1252", errors="replace")
    printable = sum((ch.isprintable() and ch != "\ufffd") or ch in "\t\n\r\f" for ch in legacy)
    if legacy and printable / len(legacy) > 0.95:
        return UploadRefused(
            "The file is not UTF-8 (it looks like Latin-1 or Windows-1252 text). "
            "Open it in your editor, save the file as UTF-8, and upload it again."
        )
    return UploadRefused("This is not a text file (it is not valid UTF-8). Choose a .md file.")


def normalise(text: str, source: str) -> ImportText:
    """LF line ends only, and something other than whitespace to import."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise UploadRefused(
            "There is nothing to import: the text is empty."
            if not text
            else "There is nothing to import: the text is only whitespace."
        )
    return ImportText(text, source)


def validate_bytes(data: bytes, source: str, *, limit: int | None = None) -> ImportText:
    limit = max_bytes() if limit is None else limit
    if len(data) > limit:
        raise too_large(len(data), limit)
    return normalise(decode_utf8(data), source)


def validate_upload(upload: UploadedFile, *, limit: int | None = None) -> ImportText:
    """A file from `request.FILES`: its name, its declared size, then its bytes (capped)."""
    limit = max_bytes() if limit is None else limit
    name = upload.name or "upload"
    check_extension(name)
    if upload.size is not None and upload.size > limit:
        raise too_large(upload.size, limit)
    upload.seek(0)
    data = upload.read(limit + 1)  # never more than the limit, whatever `size` said
    return validate_bytes(data, name, limit=limit)


def validate_paste(text: str, *, limit: int | None = None) -> ImportText:
    """Text from a textarea. Browsers send CRLF line ends; Django already decoded UTF-8."""
    limit = max_bytes() if limit is None else limit
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:  # lone surrogates
        raise UploadRefused("The pasted text is not valid Unicode.") from exc
    if len(data) > limit:
        raise too_large(len(data), limit, "The pasted text")
    text = text.removeprefix("\ufeff")
    if "\x00" in text:
        raise UploadRefused("The text contains NUL characters, which markdown cannot hold.")
    if CONTROL_CHARACTERS.search(text):
        raise UploadRefused("The text contains control characters, which markdown cannot hold.")
    return normalise(text, "pasted text")
