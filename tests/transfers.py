"""Export and import as the portal answers them, checked the same way whether CoreAPI is
the fake (tests/views), the devstack (tests/integration) or a browser downloads the file
(tests/browser)."""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from memory_ui.models import AuditEvent


def today() -> str:
    """The date a download's file name carries."""
    return datetime.now(UTC).strftime("%Y-%m-%d")


def zip_of(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


# Uploads that restoring an "Export everything" zip refuses (400): (file name, bytes, what
# the message says).
BAD_ARCHIVES = [
    pytest.param("export.zip", b"# not a zip\n", "not a zip file", id="not-zip"),
    pytest.param("notes.md", b"# markdown\n", "is not a .zip file", id="not-dot-zip"),
    pytest.param("export.zip", zip_of({"user.md": "- a\n"}), "no manifest.json", id="no-manifest"),
]


def audit(action: str, **fields: object) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=action, **fields))


def assert_markdown_download(response, stem: str) -> None:
    """One memory as a markdown file called `<stem>-<today>.md`, never cached."""
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="{stem}-{today()}.md"'
    assert "no-store" in response["Cache-Control"]


def export_everything(client: Client) -> bytes:
    """The "Export everything" zip, streamed as a download called `memory-export-<today>.zip`."""
    response = client.get("/export/everything")
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == f'attachment; filename="memory-export-{today()}.zip"'
    return b"".join(response.streaming_content)


def manifest_files(archive: zipfile.ZipFile, agents: Iterable[str]) -> dict[str | None, Any]:
    """The files alice's "Export everything" manifest lists, by agent (None: the shared
    memory): one for the shared memory and one for each of `agents`."""
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["format"] == "memory-portal-export" and manifest["version"] == 1
    assert manifest["upn"] == "alice@contoso.com"
    entries = {entry["agent_name"]: entry for entry in manifest["files"]}
    assert set(entries) == {None, *agents}
    return entries


def assert_download_token_comes_back_as_a_cookie(client: Client) -> None:
    """The page's download token returns as a strict cookie (the page then knows the
    download started); anything but a token is not echoed."""
    response = client.get("/memory/user/export", {"download_token": "abc123def456"})
    assert response.cookies["download_ready"].value == "abc123def456"
    assert response.cookies["download_ready"]["samesite"] == "Strict"
    odd = client.get("/memory/user/export", {"download_token": "<script>"})
    assert "download_ready" not in odd.cookies


# --- restoring an "Export everything" zip --------------------------------------------------


def make_archive(documents: dict[str | None, str], upn: str = "alice@contoso.com") -> bytes:
    """A zip as "Export everything" writes it (see memory_ui's archive module)."""
    files = []
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for agent, text in documents.items():
            path = f"agent-{agent}.md" if agent else "user.md"
            data = text.encode()
            archive.writestr(path, data)
            files.append(
                {
                    "path": path,
                    "scope": "agent" if agent else "user",
                    "agent_name": agent,
                    "agent_object_id": None,
                    "updated_on": None,
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "bytes": len(data),
                }
            )
        manifest = {
            "format": "memory-portal-export",
            "version": 1,
            "upn": upn,
            "exported_at": "2026-12-01T09:00:00Z",
            "files": files,
        }
        archive.writestr("manifest.json", json.dumps(manifest))
    return buffer.getvalue()


def upload(client: Client, data: bytes, name: str = "export.zip", **kwargs):
    zip_file = SimpleUploadedFile(name, data, content_type="application/zip")
    return client.post("/import/archive", {"archive": zip_file}, **kwargs)


def plan(client: Client, url: str) -> tuple[str, dict[str, str]]:
    """The preview's apply URL and the version of each memory it shows."""
    page = client.get(url).content.decode()
    action = re.search(r'action="(/import/archive/[^"]+/apply)"', page)
    assert action, page[:2000]
    versions = dict(re.findall(r'name="version-([^"]+)" value="([^"]*)"', page))
    return action[1], versions
