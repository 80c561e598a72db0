"""Input for the generic source pages (`views.sources`): which target and item, an item's
new text, Undo of a delete, and the typed confirmation of a clear. The source is in the URL
and looked up in the registry; a target key is looked up among the person's own targets, and
an item key is the source's to check, so neither is trusted here beyond its shape."""

from __future__ import annotations

from typing import Any

from django import forms

from memory_ui.web.forms.confirm import PhraseConfirmation
from memory_ui.web.forms.fields import MAX_EDIT_BYTES

MAX_KEY = 1024
SOURCE_CLEAR_PHRASE = "clear"


class SourceTargetForm(forms.Form):
    target = forms.CharField(max_length=MAX_KEY, strip=False)


class SourceItemForm(SourceTargetForm):
    item = forms.CharField(max_length=MAX_KEY, strip=False)


class SourceEditForm(SourceItemForm):
    version = forms.CharField(max_length=MAX_KEY)
    text = forms.CharField(
        label="Text", strip=False, required=False, widget=forms.Textarea(attrs={"rows": 8})
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The page starts in its text, as the legacy edit does; a form sent back always
        # comes with an alert, which takes the focus instead.
        if not self.is_bound:
            self.fields["text"].widget.attrs["autofocus"] = True

    def clean_text(self) -> str:
        text = self.cleaned_data["text"]
        if len(text.encode()) > MAX_EDIT_BYTES:
            raise forms.ValidationError("That is more text than one item may hold here.")
        return text


class SourceUndoForm(SourceTargetForm):
    undo = forms.CharField(max_length=100)


class SourceClearForm(PhraseConfirmation, SourceTargetForm):
    PHRASE = SOURCE_CLEAR_PHRASE


# "What <agent> is told about me": a question as long as a person types one, a correction as
# long as a few sentences (MemoryOS takes up to 4000 characters; docs/memoryos.md, S3).
MAX_QUESTION = 500
MAX_CORRECTION = 1000
SUGGESTED_QUESTION = "What do you know about me?"


class PreviewForm(forms.Form):
    """Which of the person's agents, and the question to ask as that agent would. The
    agents are the source's targets for the signed-in person; any other is a 404 before
    this form is read."""

    target = forms.ChoiceField(label="Agent")
    question = forms.CharField(
        label="Question",
        max_length=MAX_QUESTION,
        initial=SUGGESTED_QUESTION,
        help_text="What the agent would be asked; the suggested one is filled in.",
    )

    def __init__(self, *args: Any, agents: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["target"].choices = agents


class ReportForm(SourceItemForm):
    """ "This is wrong" on one item of a preview the person was shown (`preview`: the token
    the session keeps it under) and what is true instead."""

    preview = forms.CharField(max_length=100)
    correction = forms.CharField(
        label="What is true",
        max_length=MAX_CORRECTION,
        widget=forms.Textarea(attrs={"rows": 3}),
    )
