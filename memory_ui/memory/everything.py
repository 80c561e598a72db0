"""The sources beside the primary one in requests that cover a person's whole memory:
"Export everything" (the person's own, and support's for a deletion request) and what a
deletion request covers. It loops over the registry and names no source.

An export that cannot reach a source still hands over what it could: the archive's
manifest and the page name each source that is missing (`OthersExport.missing`), and the
download goes on. What each source handed over (`OthersExport.exported`: source -> target
-> item -> version) is what its erasure must still find."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from memory_ui.identity import Actor
from memory_ui.sources import registry
from memory_ui.sources.protocol import Capability, Exported, Source, SourceError

logger = logging.getLogger("memory_ui.memory.everything")


def missing_message(source: Source) -> str:
    """What the manifest and the page say of a source the export could not reach."""
    return f"{source.title} could not be reached; their memories are not in this file."


@dataclass(frozen=True)
class OthersExport:
    """The other sources' part of an "Export everything": files for the zip (path inside
    it, markdown; one folder per source), what each source handed over (None: not
    exported), and one manifest entry per source that could not be reached."""

    files: list[tuple[str, str]] = field(default_factory=list)
    exported: dict[str, Exported] = field(default_factory=dict)
    missing: list[dict[str, str]] = field(default_factory=list)

    @property
    def message(self) -> str:
        """What the page that began the download says, when a source is missing."""
        return " ".join(entry["message"] for entry in self.missing)


def exportable() -> list[Source]:
    """The other sources "Export everything" reads."""
    return [
        source
        for source in registry.others()
        if source.steps is not None and source.can(Capability.EXPORT)
    ]


def others_export(actor: Actor) -> OthersExport:
    """The subject's memory in every other source, read before the first byte of the zip
    is sent; a source that fails is named as missing (never a failed download)."""
    result = OthersExport()
    for source in exportable():
        assert source.steps is not None  # exportable() keeps sources with steps only
        try:
            files = source.steps.export_all(actor)
        except SourceError as exc:
            logger.warning("Export everything without %s: %s", source.name, type(exc).__name__)
            message = missing_message(source)
            result.missing.append(
                {"source": source.name, "label": source.title, "message": message}
            )
            result.exported[source.name] = None
            continue
        result.files.extend((f"{source.name}/{file.name}", file.text) for file in files)
        result.exported[source.name] = {file.target: file.versions for file in files}
    return result
