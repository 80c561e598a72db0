"""Input for the generic source pages (`views.sources`, `views.source_changes`,
`views.source_history`, `views.source_move`): which target and item, an item's new text or
one entry of it (each previewed or saved), Undo of a delete, the restore of an earlier
version, the typed confirmation of a clear, and a move. The source is in the URL and looked
up in the registry; a target key is looked up among the person's own targets, and an item
key is the source's to check, so neither is trusted here beyond its shape."""

from __future__ import annotations

from typing import Any

from django import forms

from memory_ui.web.forms.confirm import PhraseConfirmation
from memory_ui.web.forms.fields import MAX_EDIT_BYTES

MAX_KEY = 1024
SOURCE_CLEAR_PHRASE = "clear"
ACTIONS = [("preview", "Preview"), ("save", "Save")]


class SourceTargetForm(forms.Form):
    target = forms.CharField(max_length=MAX_KEY, strip=False)


class SourceItemForm(SourceTargetForm):
    item = forms.CharField(max_length=MAX_KEY, strip=False)


class SourceLineForm(forms.Form):
    """Which entry the entry editor opens (`?line=`): a line number. A digit int() refuses
    ("²") is a malformed address like any other, not an error of the portal's."""

    line = forms.IntegerField(min_value=1)


class SourceChangeForm(SourceItemForm):
    """A change previewed (`action=preview`: the differences, nothing saved) or saved (the
    default), from the item's `version` when its editor opened."""

    version = forms.CharField(max_length=MAX_KEY)
    action = forms.ChoiceField(choices=ACTIONS, required=False)

    @property
    def previewing(self) -> bool:
        return self.cleaned_data.get("action") == "preview"


class SourceResolveForm(SourceItemForm):
    """Which of the versions an item holds at once stays (`keep`, its place in the list),
    from the item's `version` when its page showed them."""

    version = forms.CharField(max_length=MAX_KEY)
    keep = forms.IntegerField(min_value=0)


class SourceRestoreForm(SourceItemForm):
    """ "Restore this version" on an item's History: which change's version before, from the
    item's `version` when the History showed it ("": it showed the item deleted)."""

    change = forms.IntegerField(min_value=1)
    version = forms.CharField(max_length=MAX_KEY, required=False)


class SourceEditForm(SourceChangeForm):
    text = forms.CharField(
        label="Text", strip=False, required=False, widget=forms.Textarea(attrs={"rows": 12})
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The page starts in its text; a form sent back comes with an alert or a preview,
        # which takes the focus instead.
        if not self.is_bound:
            self.fields["text"].widget.attrs["autofocus"] = True

    def clean_text(self) -> str:
        text = self.cleaned_data["text"]
        if len(text.encode()) > MAX_EDIT_BYTES:
            raise forms.ValidationError("That is more text than one item may hold here.")
        return text


class SourceEntryForm(SourceChangeForm):
    """One entry (one line) of an item changed: `old` is the line as shown, `new` what
    replaces it; refused unless `old` is in the item exactly once."""

    old = forms.CharField(max_length=MAX_EDIT_BYTES, strip=False, widget=forms.HiddenInput)
    new = forms.CharField(
        label="New text of this entry",
        max_length=MAX_EDIT_BYTES,
        strip=False,
        required=False,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.fields["new"].widget.attrs["autofocus"] = True

    def clean_new(self) -> str:
        new = self.cleaned_data["new"]
        if "\n" in new.strip("\n"):
            raise forms.ValidationError("An entry is one line; edit the whole item for more.")
        return new.strip("\n")


class SourceUndoForm(SourceTargetForm):
    undo = forms.CharField(max_length=100)


class SourceClearForm(PhraseConfirmation, SourceTargetForm):
    PHRASE = SOURCE_CLEAR_PHRASE


class SourceMoveForm(SourceTargetForm):
    """A move of one item (`item`) or of the whole target (none), and whether to delete the
    copies the destination is verified to have."""

    item = forms.CharField(max_length=MAX_KEY, strip=False, required=False)
    delete_verified = forms.BooleanField(required=False)


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
