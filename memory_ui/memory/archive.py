"""“Export everything” as a zip, and reading such a zip back for a restore.

Over 400 lines: one file format, written and read back; the reader checks exactly what
the writer promises, so they change together.

The archive holds one markdown file per stored document (user memory and each agent the
caller may read, empty documents included, so a restore puts back exactly what was there:
an empty file restored with "replace" clears that memory) and `manifest.json`:

    {"format": "memory-portal-export", "version": 1, "upn": …, "exported_at": …,
     "files": [{"path", "scope", "agent_name", "agent_object_id", "updated_on",
                "sha256", "bytes"}],
     "other_files": [{"path", "sha256", "bytes"}]}   (other sources' files, when any)

Export. `zip_stream` writes the zip one file at a time from documents fetched beforehand
(`memory.exports.export_archive` fetches them all first, so a CoreAPI failure is still
an error page and nothing half-done is downloaded). The documents are held in memory
meanwhile; the zip is not.

Restore. `read_archive` trusts nothing in the upload: sizes are checked as declared and
again while reading with a hard cap, names must be plain relative paths, and only regular
files compressed with stored or deflate are read. Problems with the archive as a whole
refuse it (`ArchiveRefused`); a file that fails its own checks (sha256, UTF-8, scope) is
kept in the result with its `problem`, so the preview can show it as skipped.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import stat
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO

from django.conf import settings
from django.template.defaultfilters import filesizeformat

from memory_ui.memory.uploads import ARCHIVE_FACTOR, UploadRefused
from memory_ui.sources.agent_memory import Target, memory_name, target_key, valid_agent_name

FORMAT = "memory-portal-export"
VERSION = 1
MANIFEST = "manifest.json"

MAX_FILES = 200
MAX_MANIFEST_BYTES = 256 * 1024
SAFE_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
NESTED_ARCHIVE_SUFFIXES = (".zip", ".jar", ".gz", ".tgz", ".7z", ".rar", ".tar", ".bz2", ".xz")
_DRIVE = re.compile(r"[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class ArchiveLimits:
    max_archive_bytes: int
    max_files: int
    max_file_bytes: int
    max_total_bytes: int

    @classmethod
    def from_settings(cls) -> ArchiveLimits:
        per_file = settings.PORTAL_UPLOAD_MAX_BYTES
        return cls(
            max_archive_bytes=ARCHIVE_FACTOR * per_file,
            max_files=MAX_FILES,
            max_file_bytes=per_file,
            max_total_bytes=ARCHIVE_FACTOR * per_file,
        )


# --- export ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportedDocument:
    target: Target
    text: str
    updated_on: datetime | None

    @property
    def path(self) -> str:
        return self.target.file_name

    @property
    def data(self) -> bytes:
        return self.text.encode("utf-8")


def _fingerprint(data: bytes) -> dict[str, str | int]:
    """What the manifest says of every file, whichever source it comes from, so a reader
    can check each one it was handed."""
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def build_manifest(
    documents: list[ExportedDocument],
    upn: str,
    exported_at: datetime,
    extra: Sequence[tuple[str, str]] = (),
    missing: Sequence[dict[str, str]] = (),
) -> dict:
    """`extra`: (path, markdown) of other sources' files (the legacy stores), listed apart
    under "other_files" so that restoring into CoreAPI leaves them alone. `missing`: the
    sources that could not be reached ({"source", "label", "message"}), listed under
    "missing_sources" so the file says what it lacks."""
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "upn": upn,
        "exported_at": _iso(exported_at.replace(microsecond=0)),
        "files": [
            {
                "path": doc.path,
                "scope": doc.target.scope,
                "agent_name": doc.target.agent.name if doc.target.agent else None,
                "agent_object_id": doc.target.agent_object_id,
                "updated_on": _iso(doc.updated_on) if doc.updated_on else None,
                **_fingerprint(doc.data),
            }
            for doc in documents
        ],
    }
    if extra:
        manifest["other_files"] = [
            {"path": path, **_fingerprint(text.encode("utf-8"))} for path, text in extra
        ]
    if missing:
        manifest["missing_sources"] = [dict(source) for source in missing]
    return manifest


class _Sink:
    """A write-only stream: zipfile writes into it, the response drains it. It has no
    `tell`/`seek`, so zipfile writes data descriptors instead of seeking back."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []

    def write(self, data: bytes) -> int:
        self._chunks.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def drain(self) -> bytes:
        data = b"".join(self._chunks)
        self._chunks.clear()
        return data


def _member(path: str, when: datetime) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(path, date_time=when.astimezone(UTC).timetuple()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3  # unix, so the mode below means what it says
    info.external_attr = (stat.S_IFREG | 0o644) << 16
    return info


def zip_stream(
    documents: list[ExportedDocument],
    manifest: dict,
    exported_at: datetime,
    extra: Sequence[tuple[str, str]] = (),
) -> Iterator[bytes]:
    """The zip, one chunk per file, manifest last."""
    sink = _Sink()
    with zipfile.ZipFile(sink, "w") as archive:
        for doc in documents:
            archive.writestr(_member(doc.path, exported_at), doc.data)
            yield sink.drain()
        for path, text in extra:
            archive.writestr(_member(path, exported_at), text.encode("utf-8"))
            yield sink.drain()
        body = json.dumps(manifest, indent=2, ensure_ascii=False).encode() + b"\n"
        archive.writestr(_member(MANIFEST, exported_at), body)
    yield sink.drain()


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


# --- restore -----------------------------------------------------------------------------


class ArchiveRefused(UploadRefused):
    """The zip cannot be used at all; `message` says why, for the form."""


@dataclass(frozen=True)
class ArchiveFile:
    """One document listed in the manifest. `text` is None when `problem` says why not."""

    path: str
    scope: str
    agent_name: str
    sha256: str
    size: int
    text: str | None
    problem: str = ""

    @property
    def key(self) -> str:
        return target_key(self.scope, self.agent_name)


@dataclass(frozen=True)
class ParsedArchive:
    upn: str
    exported_at: str
    files: list[ArchiveFile]
    unlisted: list[str] = field(default_factory=list)  # in the zip, not in the manifest

    @property
    def usable(self) -> list[ArchiveFile]:
        return [f for f in self.files if f.text is not None]


def read_archive(upload: bytes | IO[bytes], limits: ArchiveLimits) -> ParsedArchive:
    """Validate and unpack an "Export everything" zip; raises ArchiveRefused."""
    size = len(upload) if isinstance(upload, bytes) else _stream_size(upload)
    if size > limits.max_archive_bytes:
        raise ArchiveRefused(
            f"The archive is {filesizeformat(size)}; the limit is "
            f"{filesizeformat(limits.max_archive_bytes)}.",
            status=413,
        )
    source = io.BytesIO(upload) if isinstance(upload, bytes) else upload
    try:
        with zipfile.ZipFile(source) as archive:
            return _read(archive, limits)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError) as exc:
        raise ArchiveRefused(
            "This is not a zip file the portal can read (it may be damaged). "
            "Upload the .zip from “Export everything”."
        ) from exc
    except (RuntimeError, ValueError, OSError) as exc:  # zipfile's encryption / odd headers
        raise ArchiveRefused("The zip file could not be read safely.") from exc


def _stream_size(stream: IO[bytes]) -> int:
    stream.seek(0, 2)
    size = stream.tell()
    stream.seek(0)
    return size


def _read(archive: zipfile.ZipFile, limits: ArchiveLimits) -> ParsedArchive:
    members = archive.infolist()
    if len(members) > limits.max_files + 1:
        raise ArchiveRefused(
            f"The archive holds {len(members)} files; at most {limits.max_files} "
            "documents (plus manifest.json) can be restored at once."
        )
    names: dict[str, zipfile.ZipInfo] = {}
    declared = 0
    for info in members:
        _check_member(info, limits)
        if info.filename in names:
            raise ArchiveRefused(f"The archive holds “{info.filename}” twice.")
        names[info.filename] = info
        declared += info.file_size
    if declared > limits.max_total_bytes + MAX_MANIFEST_BYTES:
        raise ArchiveRefused(_total_too_large(limits))
    if MANIFEST not in names:
        raise ArchiveRefused(
            "The archive has no manifest.json, so the portal cannot tell which memory each "
            "file belongs to. Upload the .zip exactly as “Export everything” made it."
        )
    manifest = _manifest(_read_member(archive, names[MANIFEST], MAX_MANIFEST_BYTES))
    files: list[ArchiveFile] = []
    seen_paths: set[str] = set()
    seen_keys: set[str] = set()
    total = 0
    for entry in manifest["files"]:
        listed = _listed(entry)
        if listed.path in seen_paths:
            raise ArchiveRefused(f"manifest.json lists “{listed.path}” twice.")
        seen_paths.add(listed.path)
        if not listed.problem:
            if listed.key in seen_keys:
                raise ArchiveRefused(f"manifest.json lists two files for {_label(listed)}.")
            seen_keys.add(listed.key)
        info = names.get(listed.path)
        if info is None:
            files.append(_with_problem(listed, "listed in manifest.json but not in the zip"))
            continue
        if listed.problem:
            files.append(listed)
            continue
        data = _read_member(archive, info, limits.max_file_bytes)
        total += len(data)
        if total > limits.max_total_bytes:
            raise ArchiveRefused(_total_too_large(limits))
        files.append(_checked(listed, data))
    unlisted = sorted(name for name in names if name != MANIFEST and name not in seen_paths)
    return ParsedArchive(
        upn=_text(manifest.get("upn")),
        exported_at=_text(manifest.get("exported_at")),
        files=files,
        unlisted=unlisted,
    )


def unsafe_name(name: str) -> str | None:
    """Why a member name is not a plain relative path, or None when it is."""
    if not name:
        return "has an empty name"
    if "\\" in name:
        return "has a backslash in its name"
    if name.startswith("/") or _DRIVE.match(name):
        return "has an absolute path"
    if _CONTROL.search(name):
        return "has control characters in its name"
    if any(part in ("", ".", "..") for part in name.split("/")):
        return "has a path that leaves its folder"
    if len(name) > 255:
        return "has a name that is too long"
    return None


def _check_member(info: zipfile.ZipInfo, limits: ArchiveLimits) -> None:
    name = info.filename
    problem = unsafe_name(name.rstrip("/") if info.is_dir() else name)
    if problem:
        raise ArchiveRefused(f"A file in the archive {problem} ({name!r}); nothing was read.")
    mode = info.external_attr >> 16
    if info.is_dir() or stat.S_ISDIR(mode) or info.external_attr & 0x10:
        raise ArchiveRefused(f"The archive holds a folder (“{name}”); only files are expected.")
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG):
        raise ArchiveRefused(f"“{name}” is a link or special file, not a regular file.")
    if name.lower().endswith(NESTED_ARCHIVE_SUFFIXES):
        raise ArchiveRefused(f"“{name}” is an archive inside the archive; that is not restored.")
    if info.flag_bits & 0x1:
        raise ArchiveRefused(f"“{name}” is encrypted; the portal restores plain exports only.")
    if info.compress_type not in SAFE_METHODS:
        raise ArchiveRefused(f"“{name}” uses a compression method the portal does not read.")
    limit = MAX_MANIFEST_BYTES if name == MANIFEST else limits.max_file_bytes
    if info.file_size > limit:
        raise ArchiveRefused(
            f"“{name}” is {filesizeformat(info.file_size)}; the limit per file is "
            f"{filesizeformat(limit)}.",
            status=413,
        )


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    """At most `limit` bytes, whatever the headers claim (a decompression bomb stops here)."""
    with archive.open(info) as stream:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise ArchiveRefused(
            f"“{info.filename}” unpacks to more than {filesizeformat(limit)}; nothing was read.",
            status=413,
        )
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        raise ArchiveRefused(f"“{info.filename}” is a zip inside the zip; that is not restored.")
    return data


def _total_too_large(limits: ArchiveLimits) -> str:
    return (
        f"The archive unpacks to more than {filesizeformat(limits.max_total_bytes)}; "
        "restore it in parts."
    )


def _manifest(data: bytes) -> dict:
    try:
        manifest = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ArchiveRefused("manifest.json is not valid JSON.") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArchiveRefused("manifest.json is not from a Memory Portal export.")
    if manifest.get("version") != VERSION:
        raise ArchiveRefused(
            f"manifest.json is format version {manifest.get('version')!r}; "
            f"this portal reads version {VERSION}."
        )
    files = manifest.get("files")
    if not isinstance(files, list) or not all(isinstance(entry, dict) for entry in files):
        raise ArchiveRefused("manifest.json has no list of files.")
    return manifest


def _listed(entry: dict) -> ArchiveFile:
    """A manifest entry as a file to restore, or with the reason it cannot be."""
    path = entry.get("path")
    if not isinstance(path, str) or unsafe_name(path):
        raise ArchiveRefused("manifest.json names a file with an unusable path.")
    scope, agent_name = entry.get("scope"), entry.get("agent_name")
    sha256, size = entry.get("sha256"), entry.get("bytes")
    listed = ArchiveFile(
        path=path,
        scope=scope if isinstance(scope, str) else "",
        agent_name=agent_name if scope == "agent" and isinstance(agent_name, str) else "",
        sha256=sha256 if isinstance(sha256, str) else "",
        size=size if isinstance(size, int) and not isinstance(size, bool) else 0,
        text=None,
    )
    if scope == "combined":
        return _with_problem(listed, "“combined” is a view of two memories and is not restored")
    if scope not in ("user", "agent"):
        return _with_problem(listed, f"unknown scope {str(scope)[:40]!r}")
    if scope == "agent" and not valid_agent_name(listed.agent_name):
        return _with_problem(listed, "no valid agent name")
    if not _SHA256.fullmatch(listed.sha256):
        return _with_problem(listed, "no sha256 in manifest.json to check it against")
    return listed


def _checked(listed: ArchiveFile, data: bytes) -> ArchiveFile:
    # Restored byte for byte: no BOM stripping or line-end changes, unlike a typed upload.
    if hashlib.sha256(data).hexdigest() != listed.sha256:
        return _with_problem(listed, "its content does not match its sha256 in manifest.json")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _with_problem(listed, "it is not UTF-8 text")
    if "\x00" in text:
        return _with_problem(listed, "it contains NUL bytes")
    return ArchiveFile(listed.path, listed.scope, listed.agent_name, listed.sha256, len(data), text)


def _with_problem(listed: ArchiveFile, problem: str) -> ArchiveFile:
    return ArchiveFile(
        listed.path, listed.scope, listed.agent_name, listed.sha256, listed.size, None, problem
    )


def _label(listed: ArchiveFile) -> str:
    return memory_name(listed.scope, f"“{listed.agent_name}”")


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
