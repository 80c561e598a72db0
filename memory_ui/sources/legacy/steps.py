"""The legacy stores' audited steps over everything a person has in them, for requests
that cover every source (`protocol.Steps`): "Export everything" and support's deletion
request. Each is a step of `operations`, which audits it."""

from __future__ import annotations

from memory_ui.identity import Actor
from memory_ui.sources.legacy import operations
from memory_ui.sources.protocol import Erasure, Exported, ExportedFile


class LegacySteps:
    def plan(self, actor: Actor) -> Erasure:
        return operations.legacy_erasure_plan(actor)

    def export_all(self, actor: Actor) -> list[ExportedFile]:
        return [
            ExportedFile(file.name, file.text, file.store, file.versions)
            for file in operations.legacy_export_all(actor)
        ]

    def erase_all(self, actor: Actor, exported: Exported) -> Erasure:
        return operations.legacy_erase_subject(actor, exported)
