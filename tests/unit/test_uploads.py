"""Checks on markdown people upload or paste for an import (docs/architecture.md, Faults and bad input)."""

from __future__ import annotations

import codecs
import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from memory_ui.memory.uploads import (
    UploadRefused,
    validate_bytes,
    validate_paste,
    validate_upload,
)
from memory_ui.web.upload_handler import CappedUploadHandler, was_oversized

LIMIT = 1024


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def refusal(call, *args, **kwargs) -> UploadRefused:
    with pytest.raises(UploadRefused) as info:
        call(*args, **kwargs)
    return info.value


def test_good_utf8_with_emoji_and_accents_is_kept():
    text = "# Travel 🧳\n\n- Prefers Zürich → Genève by train ✈️ never\n"
    result = validate_upload(upload("notes.md", text.encode()), limit=LIMIT)
    assert result.text == text
    assert result.source == "notes.md"
    assert result.size_bytes == len(text.encode())


@pytest.mark.parametrize("name", ["memory.md", "memory.MARKDOWN", "notes.txt"])
def test_markdown_and_text_extensions_are_accepted(name):
    assert validate_upload(upload(name, b"- fact\n"), limit=LIMIT).text == "- fact\n"


@pytest.mark.parametrize("name", ["memory.pdf", "memory.md.exe", "memory", "notes.docx"])
def test_other_extensions_are_refused(name):
    error = refusal(validate_upload, upload(name, b"- fact\n"), limit=LIMIT)
    assert error.status == 400
    assert ".md" in error.message and name in error.message


def test_png_is_refused_as_binary():
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    error = refusal(validate_upload, upload("photo.md", png), limit=LIMIT)
    assert "PNG image" in error.message


def test_zip_renamed_to_md_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.md", "hello")
    error = refusal(validate_upload, upload("export.md", buffer.getvalue()), limit=LIMIT)
    assert "zip" in error.message


def test_undecodable_bytes_are_refused_as_not_text():
    noise = bytes([0x81, 0x8D, 0x8F, 0x90, 0x9D, 0xC0, 0xC1, 0xF5, 0xFF] * 20)
    error = refusal(validate_bytes, noise, "noise.md", limit=LIMIT)
    assert "not a text file" in error.message


def test_latin1_is_refused_with_advice_to_save_as_utf8():
    latin1 = "- Préfère le café à Zürich, naïve façade\n".encode("latin-1")
    error = refusal(validate_upload, upload("notes.md", latin1), limit=LIMIT)
    assert error.status == 400
    assert "save the file as UTF-8" in error.message


def test_utf16_is_refused():
    data = codecs.BOM_UTF16_LE + "- fact\n".encode("utf-16-le")
    assert "UTF-16" in refusal(validate_bytes, data, "x.md", limit=LIMIT).message


def test_over_the_limit_is_refused_with_413():
    error = refusal(validate_upload, upload("big.md", b"a" * (LIMIT + 1)), limit=LIMIT)
    assert error.status == 413
    assert "limit is 1.0\xa0KB" in error.message


def test_exactly_the_limit_is_accepted():
    assert len(validate_upload(upload("ok.md", b"a" * LIMIT), limit=LIMIT).text) == LIMIT


def test_declared_size_is_not_trusted():
    """A file object whose `size` lies is still read only up to the limit."""
    lying = upload("big.md", b"a" * (LIMIT * 4))
    lying.size = 10
    assert refusal(validate_upload, lying, limit=LIMIT).status == 413


def test_pasted_text_is_measured_in_bytes_not_characters():
    text = "é" * (LIMIT // 2 + 1)  # fewer characters than the limit, more bytes
    assert len(text) < LIMIT
    error = refusal(validate_paste, text, limit=LIMIT)
    assert error.status == 413 and "pasted text" in error.message


@pytest.mark.parametrize("data", [b"", b"\xef\xbb\xbf"])
def test_empty_is_refused(data):
    assert "empty" in refusal(validate_bytes, data, "x.md", limit=LIMIT).message


@pytest.mark.parametrize("text", [" ", "\n\n\n", "\t \r\n \u00a0\n"])
def test_whitespace_only_is_refused(text):
    assert "only whitespace" in refusal(validate_paste, text, limit=LIMIT).message


def test_nul_bytes_are_refused():
    assert "NUL" in refusal(validate_bytes, b"- fact\x00\n", "x.md", limit=LIMIT).message
    assert "NUL" in refusal(validate_paste, "- fact\x00", limit=LIMIT).message


def test_other_control_characters_are_refused():
    assert "control characters" in refusal(validate_paste, "a\x1b[31mred", limit=LIMIT).message


def test_bom_is_stripped():
    assert validate_bytes(codecs.BOM_UTF8 + b"- fact\n", "x.md", limit=LIMIT).text == "- fact\n"
    assert validate_paste("\ufeff- fact\n", limit=LIMIT).text == "- fact\n"


def test_crlf_and_cr_are_normalised_to_lf():
    assert validate_bytes(b"a\r\nb\rc\n", "x.md", limit=LIMIT).text == "a\nb\nc\n"
    assert validate_paste("# Notes\r\n\r\n- one\r\n- two", limit=LIMIT).text == (
        "# Notes\n\n- one\n- two"
    )


def test_tabs_and_form_feeds_are_text():
    assert validate_paste("- a\tb\f\n", limit=LIMIT).text == "- a\tb\f\n"


class _Request:
    pass


def test_capped_handler_skips_oversized_files_and_remembers_them(settings):
    from django.core.files.uploadhandler import SkipFile

    settings.PORTAL_UPLOAD_MAX_BYTES = 100  # the cap is ten times this: 1000 bytes
    request = _Request()
    handler = CappedUploadHandler(request)
    handler.new_file("file", "big.zip", "application/zip", None)
    assert handler.receive_data_chunk(b"a" * 600, 0) == b"a" * 600
    with pytest.raises(SkipFile):
        handler.receive_data_chunk(b"a" * 600, 600)
    assert was_oversized(request, "file")
    assert not was_oversized(request, "other")
