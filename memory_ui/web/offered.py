"""What a source's pages offer in one place (a legacy store, a generic source's target):
each action behind the capability it needs, and one sentence for each one missing, before
anyone clicks (docs/architecture.md, Memory sources)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memory_ui.sources.protocol import Capability

# The actions the pages offer, each behind the capability it needs.
ACTIONS = (
    (Capability.EDIT_ITEM, "edit"),
    (Capability.DELETE_ITEM, "delete"),
    (Capability.RESTORE_ITEM, "undo"),
    (Capability.CLEAR_TARGET, "clear"),
    (Capability.EXPORT, "export"),
)


@dataclass(frozen=True)
class Offered:
    edit: bool = False
    delete: bool = False
    undo: bool = False
    clear: bool = False
    export: bool = False
    missing: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def of(
        cls, allows: Callable[[Capability], bool], missing: Callable[[Capability], str]
    ) -> Offered:
        """`allows(capability)` here, and `missing(capability)`: the sentence where not. An
        edit without a version check says so too."""
        offered = {name: allows(capability) for capability, name in ACTIONS}
        sentences = [missing(capability) for capability, name in ACTIONS if not offered[name]]
        if offered["edit"] and not allows(Capability.CONDITIONAL_WRITE):
            sentences.append(missing(Capability.CONDITIONAL_WRITE))
        return cls(**offered, missing=tuple(dict.fromkeys(sentences)))
