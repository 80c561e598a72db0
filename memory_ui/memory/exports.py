"""Export everything as a zip, and one archived document put back. Audited like every
step of the primary source's store (`registry.memory_store()`)."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial

from django.utils import timezone

from memory_ui.audit import Action
from memory_ui.budget import fan_out
from memory_ui.documents import content_hash
from memory_ui.documents.versions import Version
from memory_ui.identity import Actor
from memory_ui.memory.archive import ArchiveFile, ExportedDocument, build_manifest, zip_stream
from memory_ui.memory.at_once import at_once
from memory_ui.memory.everything import OthersExport
from memory_ui.sources.agent_memory import Agent, AlreadyAdded, Target, all_targets
from memory_ui.sources.registry import memory_store


def export_archive(
    actor: Actor,
    agents: list[Agent],
    upn: str,
    *,
    now: datetime | None = None,
    others: Callable[[], OthersExport] = OthersExport,
) -> tuple[Iterator[bytes], OthersExport]:
    """Everything `actor` may read for `upn`, as "Export everything" zip bytes, and what
    `others` (the other sources' part, `everything.others_export`) found. Every document is
    fetched now, the primary source's and the others' at the same time, each within its own
    deadline (`at_once`); a primary failure raises CoreAPIError, with every export audited
    first, while another source that fails or does not answer in time is in the manifest
    as missing. The returned iterator then only compresses. Works for support staff too."""
    documents, found = at_once(partial(_documents, actor, agents), others)
    exported_at = now or timezone.now()
    manifest = build_manifest(documents, upn, exported_at, found.files, found.missing)
    return zip_stream(documents, manifest, exported_at, found.files), found


def _documents(actor: Actor, agents: list[Agent]) -> list[ExportedDocument]:
    targets = all_targets(agents)
    # The export body is raw markdown; its time stamp comes from a read, made meanwhile.
    with ThreadPoolExecutor(max_workers=1) as reader:
        reads = reader.submit(
            contextvars.copy_context().run,  # the request's correlation id goes along
            fan_out,
            lambda target: memory_store().read(actor, target),
            targets,
        )
        texts = memory_store().export_many(actor, targets)
        memories = reads.result()
    return [
        ExportedDocument(target, text, memory.updated_on)
        for target, text, memory in zip(targets, texts, memories, strict=True)
    ]


ALREADY_RESTORED = "Already restored before the interruption; not written again"


def restore_file(
    actor: Actor,
    target: Target,
    archived: ArchiveFile,
    mode: str,
    started_from: Version | None,
    *,
    earlier: datetime | None = None,
) -> str:
    """Put one archived document back and say what was done. "replace" restores it byte
    for byte (an empty file clears), unless the document changed since `started_from`
    (MemoryChanged); "append" adds it under an import heading. Raises CoreAPIError.

    `earlier`: an attempt at this file began then and its outcome was never recorded (the
    request stopped, or CoreAPI did not answer). The document is checked first, and what
    landed then is not written again."""
    if archived.text is None:
        raise ValueError(f"{archived.path} cannot be restored: {archived.problem}")
    if mode == "replace":
        if earlier is not None:
            now = memory_store().read(actor, target).content_markdown
            if content_hash(now) == content_hash(archived.text):
                return ALREADY_RESTORED
        memory_store().replace(
            actor, target, archived.text, started_from=started_from, action=Action.IMPORT
        )
        return "Replaced" if archived.text.strip() else "Cleared (empty in the archive)"
    if mode != "append":
        raise ValueError(f"unknown import mode {mode!r}")
    if not archived.text.strip():
        return "Nothing to add (empty in the archive)"
    try:
        memory_store().import_append(actor, target, archived.text, earlier=earlier)
    except AlreadyAdded:
        return ALREADY_RESTORED
    return "Appended"
