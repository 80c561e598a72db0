"""Changes to one memory: edit, add a note, edit or delete an entry, clear, Undo."""

from __future__ import annotations

from typing import Any

from django import forms

from memory_ui.memory.documents import without_bidi_controls
from memory_ui.web.forms.confirm import CheckboxConfirmation, PhraseConfirmation
from memory_ui.web.forms.fields import (
    CLEAR_EVERYTHING_PHRASE,
    MAX_EDIT_BYTES,
    MAX_NOTE_BYTES,
    MAX_REASON_CHARS,
    MarkdownField,
    TargetForm,
    VersionField,
    hinted_label,
)


class EditForm(TargetForm):
    ACTIONS = ("save", "preview", "reapply", "overwrite")

    content = MarkdownField(required=False, max_bytes=MAX_EDIT_BYTES)
    version = VersionField()
    # The text the draft started from (version's text), to re-apply changes after a conflict.
    base = MarkdownField(required=False, max_bytes=MAX_EDIT_BYTES)
    # On a conflict page: the version stored when the conflict was shown ("overwrite" it).
    current_version = VersionField(required=False)
    action = forms.ChoiceField(choices=[(a, a) for a in ACTIONS], required=False)

    def clean_action(self) -> str:
        return self.cleaned_data["action"] or "save"

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("action") == "overwrite" and not data.get("current_version"):
            raise forms.ValidationError(
                "The page was missing which version you meant to overwrite; nothing was saved.",
                code="bad_version",
            )
        return data

    def typed(self) -> dict[str, str]:
        """What the user sent, as sent: it goes back to them whatever happens."""
        return {
            "draft": self.data.get("content", ""),
            "version": self.data.get("version", ""),
            "base": self.data.get("base", ""),
            "current_version": self.data.get("current_version", ""),
        }


class PreviewForm(forms.Form):
    content = MarkdownField(required=False, max_bytes=MAX_EDIT_BYTES)


class SubmissionMixin(forms.Form):
    """The key of one rendering of a form that adds to memory (`submission_claim`)."""

    submission = forms.RegexField(regex=r"^[A-Za-z0-9_-]{16,64}$", required=False)


class AppendForm(SubmissionMixin, TargetForm):
    content = MarkdownField(
        max_bytes=MAX_NOTE_BYTES,
        label=hinted_label("Note", "(markdown)"),
        help_text="Added at the end under a heading with today's date, as agents add notes.",
        widget=forms.Textarea(attrs={"rows": 5, "autofocus": True}),
    )
    reason = forms.CharField(
        required=False,
        max_length=MAX_REASON_CHARS,
        label=hinted_label("Why", "(optional, shown in the heading)"),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, auto_id="append-%s", **kwargs)

    def focus_alert(self) -> None:
        """Leave the focus to the page's error alert rather than the note."""
        self.fields["content"].widget.attrs.pop("autofocus", None)

    def clean_content(self) -> str:
        content: str = self.cleaned_data["content"]
        if not content.strip():
            raise forms.ValidationError("Write something to add.", code="required")
        return content

    def clean_reason(self) -> str:
        # The reason goes into the note's one-line heading.
        return " ".join(without_bidi_controls(self.cleaned_data["reason"]).split())


class EntryForm(TargetForm):
    """Which entry of which memory (the one-entry editor's link)."""

    index = forms.IntegerField(min_value=0, max_value=100_000)


class EntryEditForm(EntryForm):
    """One entry's text and reason, and the version the editor was opened on."""

    ACTIONS = ("save", "preview")

    version = VersionField()
    content = MarkdownField(required=False, max_bytes=MAX_EDIT_BYTES, label="Text")
    reason = forms.CharField(required=False, max_length=MAX_REASON_CHARS, label="Because")
    action = forms.ChoiceField(choices=[(a, a) for a in ACTIONS], required=False)

    def clean_action(self) -> str:
        return self.cleaned_data["action"] or "save"

    def clean_reason(self) -> str:
        # The reason goes into the entry's one-line heading.
        return " ".join(without_bidi_controls(self.cleaned_data["reason"]).split())

    def typed(self) -> dict[str, str]:
        """What the user sent, as sent: it goes back to them whatever happens."""
        return {
            "draft": self.data.get("content", ""),
            "reason": self.data.get("reason", ""),
            "version": self.data.get("version", ""),
        }


class DeleteEntryForm(TargetForm):
    version = VersionField()
    index = forms.IntegerField(min_value=0, max_value=100_000)


class DeleteLinesForm(TargetForm):
    version = VersionField()
    start = forms.IntegerField(min_value=0, max_value=10_000_000)
    end = forms.IntegerField(min_value=1, max_value=10_000_000)


class ClearForm(CheckboxConfirmation, TargetForm):
    CONFIRM_MESSAGE = "Nothing was cleared: confirm with the Clear button to go ahead."

    # The version the confirmation showed (absent when it could not be read).
    version = VersionField(required=False)


class UndoForm(TargetForm):
    token = forms.RegexField(regex=r"^[A-Za-z0-9_-]{8,64}$", max_length=64)


class ClearEverythingForm(PhraseConfirmation):
    """The typed phrase, and on a retry the memories that failed (keys of the user's own)."""

    PHRASE = CLEAR_EVERYTHING_PHRASE
    PHRASE_REFUSED = "Type “{phrase}” to confirm; nothing was cleared."
    scopes = forms.MultipleChoiceField(required=False)

    def __init__(self, *args: Any, keys: list[str] | tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, auto_id="clear-everything-%s", **kwargs)
        self.fields["scopes"].choices = [(key, key) for key in keys]
