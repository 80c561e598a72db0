"""The legacy stores' audited steps over everything a person has in them, for requests
that cover every source (`protocol.Steps`): "Export everything" and support's deletion
request. Each is a step of `operations`, which audits it."""

from __future__ import annotations

from memory_ui.identity import Actor
from memory_ui.sources.legacy import operations
from memory_ui.sources.protocol import Covered, Erasure, Exported, ExportedFile, Unreachable


class LegacySteps:
    def coverage(self, actor: Actor) -> list[Covered]:
        return [
            Covered(store.title, count, "file")
            for store, count in operations.legacy_file_counts(actor)
        ]

    def export_all(self, actor: Actor) -> list[ExportedFile]:
        return [
            ExportedFile(file.name, file.text, file.store, file.versions)
            for file in operations.legacy_export_all(actor)
        ]

    def erase_all(self, actor: Actor, exported: Exported) -> Erasure:
        return operations.legacy_erase_subject(actor, exported)

    def unreachable(self) -> list[Unreachable]:
        return []
