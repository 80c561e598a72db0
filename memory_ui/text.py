"""Plain-text hygiene every layer needs (the audit trail, the memory layer, forms): pure,
imports nothing from memory_ui, so anything may import it."""

from __future__ import annotations

import re

# Bidirectional controls (embeddings, overrides, isolates, marks) reorder the text around
# them: in a one-line reason they can make "approved" read as something else.
_BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def without_bidi_controls(text: str) -> str:
    """One line of text people or agents wrote, as it is stored, without reordering."""
    return _BIDI_CONTROLS.sub("", text)
