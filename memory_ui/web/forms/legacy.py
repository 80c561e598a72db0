"""Input for the legacy memory stores' screens: which file (a path under /memories/), an
edit of one entry or of the whole file, Undo of a delete, and the typed confirmation of a
clear. The store itself is never a form field: it is in the URL and looked up among the
configured stores (`legacy_ops.legacy_store`), so an unknown one is a 404 in the view."""

from __future__ import annotations

from typing import Any

from django import forms

from memory_ui.documents.versions import Version
from memory_ui.web.forms.confirm import PhraseConfirmation
from memory_ui.web.forms.fields import MAX_EDIT_BYTES

MAX_PATH = 1024  # the stores' own limit (docs/legacy-stores.md, Paths)
PATH_PREFIX = "/memories/"
LEGACY_CLEAR_PHRASE = "clear"


class LegacyFileForm(forms.Form):
    """One file of the store, by path (only the shape is checked here; the store says
    whether it exists)."""

    path = forms.CharField(max_length=MAX_PATH, strip=False)

    def clean_path(self) -> str:
        path = self.cleaned_data["path"]
        if not path.startswith(PATH_PREFIX) or len(path) == len(PATH_PREFIX):
            raise forms.ValidationError("Not a memory file path.", code="path")
        return path


class LegacyLineForm(forms.Form):
    """Which entry the line editor opens (`?line=`): a line number, or none. A digit int()
    refuses ("²") is a malformed address like any other, not an error of the portal's."""

    line = forms.IntegerField(min_value=0, required=False)


class LegacyFileVersionField(forms.CharField):
    """The version of the legacy file a user started from (`Version.token()`), as a
    required hidden field; a bad one asks to reload the file."""

    def clean(self, value: Any) -> Version:
        text = super().clean(value)
        version = Version.parse(text)
        if version is None:
            raise forms.ValidationError("This form is out of date; reload the file.")
        return version


class LegacyReplaceForm(LegacyFileForm):
    """The whole file rewritten: `action` is preview (show the differences) or save."""

    text = forms.CharField(strip=False, required=False, widget=forms.Textarea)
    version = LegacyFileVersionField(max_length=200)
    action = forms.ChoiceField(choices=[("preview", "Preview"), ("save", "Save")])

    def clean_text(self) -> str:
        text = self.cleaned_data["text"]
        if len(text.encode()) > MAX_EDIT_BYTES:
            raise forms.ValidationError("That is more text than one file may hold here.")
        return text


class LegacyEntryForm(LegacyFileForm):
    """One entry (one line) of the file changed: `old` is the line as shown, `new` what
    replaces it; the store refuses unless `old` is in the file exactly once."""

    old = forms.CharField(max_length=MAX_EDIT_BYTES, strip=False)
    new = forms.CharField(max_length=MAX_EDIT_BYTES, strip=False, required=False)
    version = LegacyFileVersionField(max_length=200)
    action = forms.ChoiceField(choices=[("preview", "Preview"), ("save", "Save")])

    def clean_new(self) -> str:
        new = self.cleaned_data["new"]
        if "\n" in new.strip("\n"):
            raise forms.ValidationError("An entry is one line; edit the whole file for more.")
        return new.strip("\n")


class LegacyUndoForm(forms.Form):
    undo = forms.CharField(max_length=64)


class LegacyClearForm(PhraseConfirmation):
    PHRASE = LEGACY_CLEAR_PHRASE


class LegacyMoveForm(forms.Form):
    """A move into CoreAPI: one file (`path`) or, without it, every file of the store; the
    legacy copies verified in CoreAPI are deleted only when `delete_verified` is ticked."""

    path = forms.CharField(max_length=MAX_PATH, strip=False, required=False)
    delete_verified = forms.BooleanField(required=False)

    def clean_path(self) -> str:
        path = self.cleaned_data["path"]
        if path and (not path.startswith(PATH_PREFIX) or len(path) == len(PATH_PREFIX)):
            raise forms.ValidationError("Not a memory file path.", code="path")
        return path
