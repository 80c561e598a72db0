"""Moving or copying one entry: where to and how (the chooser and its preview), the
confirmation, and finishing a move whose removal failed. The destination is a target key
(`user`, `agent:<name>`); the view resolves it against the user's own agents."""

from __future__ import annotations

import re

from django import forms

from memory_ui.memory.moves import Mode
from memory_ui.web.forms.changes import EntryForm, SubmissionMixin
from memory_ui.web.forms.fields import VersionField

DESTINATION = re.compile(r"^(user|agent:[a-zA-Z][a-zA-Z0-9_-]{0,99})$")
MODES = [(Mode.MOVE.value, "Move"), (Mode.COPY.value, "Copy")]


class MoveChoiceForm(EntryForm):
    """Which entry, and (for the preview) where to and whether it leaves its memory."""

    to = forms.RegexField(regex=DESTINATION, required=False, max_length=120)
    mode = forms.ChoiceField(choices=MODES, required=False)
    # Sent by the chooser's Preview button; "Change" links back with `to` and `mode` only.
    step = forms.ChoiceField(choices=[("preview", "preview")], required=False)

    @property
    def chosen(self) -> bool:
        """The preview was asked for, with a destination and a mode: not the chooser."""
        data = self.cleaned_data
        return bool(data.get("step") and data.get("to") and data.get("mode"))


class MoveConfirmForm(SubmissionMixin, MoveChoiceForm):
    """The preview's confirmation: both memories at the versions it read."""

    version = VersionField(required=True)
    to_version = VersionField(required=True)

    def clean(self) -> dict[str, object]:
        data = super().clean()
        if not (data.get("to") and data.get("mode")):
            raise forms.ValidationError("Choose where the entry goes, and move or copy.")
        return data


class MoveRetryForm(EntryForm):
    """Finish a move that left the entry in both memories: remove it from the source."""

    version = VersionField(required=True)
    to = forms.RegexField(regex=DESTINATION, max_length=120)
