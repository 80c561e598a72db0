"""Changes to one memory: edit, add a note, edit or delete an entry, clear, Undo."""

from __future__ import annotations

from typing import Any

from django import forms
from django.urls import reverse_lazy

from memory_ui.documents import without_bidi_controls
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


def _previewed(rows: int, **attrs: object) -> forms.Textarea:
    """A markdown textarea whose typing refreshes the editor's preview
    (edit.html#preview, `#edit-preview`) after a pause, one request at a time."""
    return forms.Textarea(
        attrs={
            "rows": rows,
            "spellcheck": "true",
            "hx-post": reverse_lazy("memory_edit_preview"),
            "hx-trigger": "input changed delay:400ms",
            "hx-params": "content",
            "hx-target": "#edit-preview",
            "hx-swap": "outerHTML",
            "hx-sync": "this:replace",
            **attrs,
        }
    )


class Autofocused(forms.Form):
    """A change form that puts the focus on its text, unless the page has an alert."""

    def focus_alert(self) -> None:
        """Leave the focus to the page's alert (an error, a conflict) rather than the text."""
        self.fields["content"].widget.attrs.pop("autofocus", None)


class EditForm(TargetForm):
    ACTIONS = ("save", "preview", "reapply", "overwrite")

    content = MarkdownField(
        required=False,
        max_bytes=MAX_EDIT_BYTES,
        label="Markdown",
        help_text="Leave it empty to clear this memory. Headings such as "
        "“## Added 2026-12-02T10:00:00Z — reason” keep entries apart.",
        widget=_previewed(rows=18),
    )
    version = VersionField()
    # The text the draft started from (version's text), to re-apply changes after a conflict.
    base = MarkdownField(required=False, max_bytes=MAX_EDIT_BYTES)
    # On a conflict page: the version stored when the conflict was shown ("overwrite" it).
    current_version = VersionField(required=False)
    action = forms.ChoiceField(choices=[(a, a) for a in ACTIONS], required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, auto_id="edit-%s", **kwargs)

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


class AppendForm(Autofocused, SubmissionMixin, TargetForm):
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


class EntryEditForm(Autofocused, EntryForm):
    """One entry's text and reason, and the version the editor was opened on. `index`
    names its fields' ids (`entry-content-3`): a page can hold more than one editor."""

    ACTIONS = ("save", "preview")

    version = VersionField()
    reason = forms.CharField(
        required=False,
        max_length=MAX_REASON_CHARS,
        label=hinted_label("Because", "(why it is remembered; optional)"),
    )
    content = MarkdownField(
        required=False,
        max_bytes=MAX_EDIT_BYTES,
        label="Text",
        help_text="Markdown. Only this entry changes; when it was added and by which session "
        "stay as they were.",
        widget=_previewed(rows=8, autofocus=True),
    )
    action = forms.ChoiceField(choices=[(a, a) for a in ACTIONS], required=False)

    def __init__(self, *args: Any, index: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, auto_id=f"entry-%s-{index}", **kwargs)

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


class RestoreVersionForm(TargetForm):
    """ "Restore this version" on a memory's History: which change's version before."""

    change = forms.IntegerField(min_value=1)
    # The version the History showed: a restore refuses if the person changed it since;
    # entries agents appended since are kept after the restored version.
    version = VersionField()


class ClearEverythingForm(PhraseConfirmation):
    """The typed phrase, and on a retry the memories that failed (keys of the user's own)."""

    PHRASE = CLEAR_EVERYTHING_PHRASE
    PHRASE_REFUSED = "Type “{phrase}” to confirm; nothing was cleared."
    scopes = forms.MultipleChoiceField(required=False)

    def __init__(self, *args: Any, keys: list[str] | tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, auto_id="clear-everything-%s", **kwargs)
        self.fields["scopes"].choices = [(key, key) for key in keys]
