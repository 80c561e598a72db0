"""The "Export everything" zip: building it as a stream, and reading it back safely."""

from __future__ import annotations

import hashlib
import io
import json
import stat
import struct
import zipfile
from datetime import UTC, datetime

import pytest

from memory_ui.memory import archive, exports
from memory_ui.memory.archive import (
    ArchiveLimits,
    ArchiveRefused,
    ExportedDocument,
    build_manifest,
    read_archive,
    zip_stream,
)
from memory_ui.sources.agent_memory import Target
from memory_ui.sources.coreapi import Agent, CoreAPIUnavailable
from memory_ui.sources.registry import memory_store

LIMITS = ArchiveLimits(
    max_archive_bytes=64 * 1024, max_files=5, max_file_bytes=4096, max_total_bytes=8192
)
WHEN = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)
TRAVEL = Agent(
    name="travel-planner",
    object_id="/instances/0/providers/FoundationaLLM.Agent/agents/travel-planner",
    display_name="Travel Planner",
)
HELPDESK = Agent(
    name="it-helpdesk",
    object_id="/instances/0/providers/FoundationaLLM.Agent/agents/it-helpdesk",
    display_name="IT Helpdesk",
)
USER_TEXT = "# About me\r\n\r\n- Prefers aisle seats ✈️\n"  # CRLF kept: restores are exact


def documents() -> list[ExportedDocument]:
    return [
        ExportedDocument(Target("user"), USER_TEXT, WHEN),
        ExportedDocument(
            Target("agent", TRAVEL), "## Added 2026-01-01T00:00:00Z\n\n- Paris\n", None
        ),
        ExportedDocument(Target("agent", HELPDESK), "", WHEN),
    ]


def export_bytes(docs: list[ExportedDocument] | None = None) -> bytes:
    docs = documents() if docs is None else docs
    return b"".join(zip_stream(docs, build_manifest(docs, "alice@contoso.com", WHEN), WHEN))


def manifest_for(files: dict[str, bytes], **overrides: object) -> bytes:
    entries = []
    for path, data in files.items():
        agent = path.removesuffix(".md").partition("-")[2]
        entries.append(
            {
                "path": path,
                "scope": "agent" if agent else "user",
                "agent_name": agent or None,
                "agent_object_id": None,
                "updated_on": None,
                "sha256": hashlib.sha256(data).hexdigest(),
                "bytes": len(data),
            }
        )
    manifest = {"format": "memory-portal-export", "version": 1, "upn": "a@b", "files": entries}
    manifest.update(overrides)
    return json.dumps(manifest).encode()


def make_zip(members: dict[str, bytes], *, manifest: bytes | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        if manifest is not False:
            zf.writestr("manifest.json", manifest or manifest_for(members))
    return buffer.getvalue()


def refused(data: bytes, limits: ArchiveLimits = LIMITS) -> ArchiveRefused:
    with pytest.raises(ArchiveRefused) as info:
        read_archive(data, limits)
    return info.value


# --- building ----------------------------------------------------------------------------


def test_manifest_lists_every_document_with_hash_and_size():
    manifest = build_manifest(documents(), "alice@contoso.com", WHEN)
    assert manifest["format"] == "memory-portal-export"
    assert manifest["version"] == 1
    assert manifest["upn"] == "alice@contoso.com"
    assert manifest["exported_at"] == "2026-12-02T09:30:00Z"
    user, travel, helpdesk = manifest["files"]
    assert user == {
        "path": "user.md",
        "scope": "user",
        "agent_name": None,
        "agent_object_id": None,
        "updated_on": "2026-12-02T09:30:00Z",
        "sha256": hashlib.sha256(USER_TEXT.encode()).hexdigest(),
        "bytes": len(USER_TEXT.encode()),
    }
    assert travel["path"] == "agent-travel-planner.md"
    assert travel["agent_name"] == "travel-planner"
    assert travel["agent_object_id"] == TRAVEL.object_id
    assert travel["updated_on"] is None
    assert helpdesk["bytes"] == 0  # empty documents are exported too, for exact restores
    assert helpdesk["sha256"] == hashlib.sha256(b"").hexdigest()


def test_other_sources_files_have_their_hash_and_size_too():
    legacy = "# Travel\n\n- Prefers the window ✈️\n"  # not ASCII: size in bytes, not characters
    manifest = build_manifest(
        documents(), "alice@contoso.com", WHEN, extra=[("legacy/store.md", legacy)]
    )
    assert manifest["other_files"] == [
        {
            "path": "legacy/store.md",
            "sha256": hashlib.sha256(legacy.encode()).hexdigest(),
            "bytes": len(legacy.encode()),
        }
    ]
    assert {"sha256", "bytes"} <= manifest["files"][0].keys()


def test_zip_streams_one_chunk_per_file_through_a_sink_that_cannot_seek():
    sink = archive._Sink()
    assert not hasattr(sink, "seek") and not hasattr(sink, "tell")
    docs = documents()
    chunks = list(zip_stream(docs, build_manifest(docs, "alice@contoso.com", WHEN), WHEN))
    assert len(chunks) == len(docs) + 1  # each file as soon as it is packed, then the index
    assert all(chunks[:-1])
    with zipfile.ZipFile(io.BytesIO(b"".join(chunks))) as zf:
        assert zf.testzip() is None
        assert zf.namelist() == [
            "user.md",
            "agent-travel-planner.md",
            "agent-it-helpdesk.md",
            "manifest.json",
        ]
        assert zf.read("user.md") == USER_TEXT.encode()
        info = zf.getinfo("user.md")
        assert stat.S_ISREG(info.external_attr >> 16)
        assert info.date_time == (2026, 12, 2, 9, 30, 0)
        assert json.loads(zf.read("manifest.json"))["files"][1]["path"] == "agent-travel-planner.md"


def test_an_export_reads_back_exactly():
    parsed = read_archive(export_bytes(), LIMITS)
    assert parsed.upn == "alice@contoso.com"
    assert parsed.exported_at == "2026-12-02T09:30:00Z"
    assert [(f.key, f.text, f.problem) for f in parsed.files] == [
        ("user", USER_TEXT, ""),
        ("agent:travel-planner", "## Added 2026-01-01T00:00:00Z\n\n- Paris\n", ""),
        ("agent:it-helpdesk", "", ""),
    ]
    assert parsed.unlisted == []


def test_an_export_can_be_read_from_a_file_object():
    assert len(read_archive(io.BytesIO(export_bytes()), LIMITS).usable) == 3


def test_export_archive_fetches_everything_before_the_first_byte(monkeypatch):
    asked: list[list[str]] = []

    def export_many(actor, targets):
        asked.append([t.agent.name if t.agent else "user" for t in targets])
        raise CoreAPIUnavailable("CoreAPI is unavailable, try again.")

    # The CoreAPI calls replaced (the devstack cannot fail one export on cue).
    monkeypatch.setattr(memory_store(), "export_many", export_many)
    monkeypatch.setattr(memory_store(), "read", lambda actor, target: _memory())
    with pytest.raises(CoreAPIUnavailable):
        exports.export_archive(object(), [TRAVEL, HELPDESK], "alice@contoso.com")
    assert asked == [["user", "travel-planner", "it-helpdesk"]]


def test_export_archive_returns_a_lazy_stream(monkeypatch):
    monkeypatch.setattr(
        memory_store(), "export_many", lambda actor, targets: ["- fact\n"] * len(targets)
    )
    monkeypatch.setattr(memory_store(), "read", lambda actor, target: _memory())
    stream, _ = exports.export_archive(object(), [TRAVEL], "alice@contoso.com", now=WHEN)
    assert not isinstance(stream, bytes | list)
    parsed = read_archive(b"".join(stream), LIMITS)
    assert [f.key for f in parsed.files] == ["user", "agent:travel-planner"]
    assert all(f.text == "- fact\n" for f in parsed.files)


def _memory():
    from memory_ui.sources.coreapi import Memory

    return Memory(scope="user", upn="alice@contoso.com", updated_on=WHEN)


# --- refusing unsafe archives --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../user.md", "leaves its folder"),
        ("notes/../../user.md", "leaves its folder"),
        ("/etc/user.md", "absolute path"),
        ("C:/Users/user.md", "absolute path"),
        ("notes\\user.md", "backslash"),
        ("./user.md", "leaves its folder"),
    ],
)
def test_unsafe_names_refuse_the_whole_archive(name, reason):
    error = refused(make_zip({"user.md": b"- a\n", name: b"- b\n"}))
    assert reason in error.message


def test_directories_are_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.mkdir("notes")
        zf.writestr("user.md", "- a\n")
        zf.writestr("manifest.json", manifest_for({"user.md": b"- a\n"}))
    assert "folder" in refused(buffer.getvalue()).message


def test_symlinks_are_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        link = zipfile.ZipInfo("user.md")
        link.create_system = 3
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
        zf.writestr("manifest.json", manifest_for({"user.md": b"/etc/passwd"}))
    assert "link or special file" in refused(buffer.getvalue()).message


def test_nested_zips_are_refused_by_name_and_by_content():
    inner = make_zip({"user.md": b"- a\n"})
    assert "archive inside the archive" in refused(make_zip({"inner.zip": inner})).message
    assert "zip inside the zip" in refused(make_zip({"user.md": inner})).message


def test_too_many_files_are_refused():
    members = {f"agent-a{i}.md": b"- a\n" for i in range(LIMITS.max_files + 1)}
    assert "at most 5 documents" in refused(make_zip(members)).message


def test_a_decompression_bomb_is_refused_by_its_declared_size():
    bomb = make_zip({"user.md": bytes(50 * 1024 * 1024)})  # 50 MiB of zeros, ~50 KiB packed
    assert len(bomb) < LIMITS.max_archive_bytes
    error = refused(bomb)
    assert error.status == 413 and "user.md" in error.message


def test_a_bomb_that_lies_about_its_size_is_stopped_while_reading():
    data = bytes(2 * 1024 * 1024)
    bomb = bytearray(make_zip({"user.md": data}))
    # Claim 100 bytes in the central directory (and the local header, which has them too).
    central = bomb.index(b"PK\x01\x02")
    struct.pack_into("<I", bomb, central + 24, 100)
    struct.pack_into("<I", bomb, 22, 100)
    error = refused(bytes(bomb), ArchiveLimits(10**6, 5, 4096, 8192))
    assert "damaged" in error.message or "unpacks to more than" in error.message


def test_the_total_unpacked_size_is_capped():
    members = {f"agent-a{i}.md": b"x" * 3000 for i in range(4)}  # 12,000 bytes > 8192
    assert "unpacks to more than" in refused(make_zip(members)).message


def test_an_oversized_upload_is_refused_before_opening():
    error = refused(b"PK" + bytes(LIMITS.max_archive_bytes))
    assert error.status == 413


def test_something_that_is_not_a_zip_is_refused():
    assert "not a zip file" in refused(b"# just markdown\n").message


def test_encrypted_members_are_refused():
    data = bytearray(make_zip({"user.md": b"garbled"}))
    # zipfile cannot encrypt; set the "encrypted" flag bit in both headers of user.md.
    struct.pack_into("<H", data, 6, 0x1)
    struct.pack_into("<H", data, data.index(b"PK\x01\x02") + 8, 0x1)
    assert "encrypted" in refused(bytes(data)).message


# --- the manifest ------------------------------------------------------------------------


def test_a_missing_manifest_is_refused():
    assert "no manifest.json" in refused(make_zip({"user.md": b"- a\n"}, manifest=False)).message


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"[]", "not from a Memory Portal export"),
        (json.dumps({"format": "something-else", "version": 1}).encode(), "not from a Memory"),
        (json.dumps({"format": "memory-portal-export", "version": 2}).encode(), "version 2"),
        (json.dumps({"format": "memory-portal-export", "version": 1}).encode(), "no list"),
        (
            json.dumps(
                {"format": "memory-portal-export", "version": 1, "files": [{"path": "../x.md"}]}
            ).encode(),
            "unusable path",
        ),
    ],
)
def test_a_bad_manifest_is_refused(manifest, message):
    assert message in refused(make_zip({"user.md": b"- a\n"}, manifest=manifest)).message


def test_a_sha256_mismatch_refuses_that_file_only():
    members = {"user.md": b"- a\n", "agent-travel-planner.md": b"- b\n"}
    manifest = json.loads(manifest_for(members))
    manifest["files"][1]["sha256"] = hashlib.sha256(b"- tampered\n").hexdigest()
    parsed = read_archive(make_zip(members, manifest=json.dumps(manifest).encode()), LIMITS)
    user, travel = parsed.files
    assert user.text == "- a\n" and not user.problem
    assert travel.text is None and "does not match its sha256" in travel.problem


def test_unknown_and_combined_scopes_refuse_those_files():
    members = {"user.md": b"- a\n", "x.md": b"- b\n", "c.md": b"- c\n"}
    manifest = json.loads(manifest_for(members))
    manifest["files"][1]["scope"] = "team"
    manifest["files"][2].update(scope="combined", agent_name="travel-planner")
    parsed = read_archive(make_zip(members, manifest=json.dumps(manifest).encode()), LIMITS)
    assert parsed.files[0].problem == ""
    assert "unknown scope 'team'" in parsed.files[1].problem
    assert "combined" in parsed.files[2].problem
    assert [f.key for f in parsed.usable] == ["user"]


def test_an_agent_file_needs_a_valid_agent_name():
    members = {"agent-x.md": b"- b\n"}
    manifest = json.loads(manifest_for(members))
    manifest["files"][0]["agent_name"] = "../../etc"
    parsed = read_archive(make_zip(members, manifest=json.dumps(manifest).encode()), LIMITS)
    assert "agent name" in parsed.files[0].problem


def test_non_utf8_files_are_refused():
    parsed = read_archive(make_zip({"user.md": "- café\n".encode("latin-1")}), LIMITS)
    assert parsed.files[0].text is None and "not UTF-8" in parsed.files[0].problem


def test_listed_but_missing_and_unlisted_files_are_reported():
    manifest = manifest_for({"user.md": b"- a\n", "agent-gone.md": b"- b\n"})
    parsed = read_archive(
        make_zip({"user.md": b"- a\n", "extra.md": b"- c\n"}, manifest=manifest), LIMITS
    )
    assert "not in the zip" in parsed.files[1].problem
    assert parsed.unlisted == ["extra.md"]


def test_two_files_for_the_same_memory_are_refused():
    members = {"user.md": b"- a\n", "user-copy.md": b"- b\n"}
    manifest = json.loads(manifest_for(members))
    manifest["files"][1].update(scope="user", agent_name=None)
    error = refused(make_zip(members, manifest=json.dumps(manifest).encode()))
    assert "two files for your shared memory" in error.message
