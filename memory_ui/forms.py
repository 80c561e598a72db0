"""Forms for changing memory: which document (checked against the user's own agents),
what to write, and the version a change was based on.

Which document comes from hidden `scope` and `agent` fields, so every form resolves it
with `access.scope_target`: an agent name that is not in the user's own list is a 404
(raised from `is_valid`), a forged scope value is a form error the view answers with 400.
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.conf import settings
from django.http import HttpRequest

from memory_ui.access import scope_target
from memory_ui.coreapi import CoreAPIError
from memory_ui.operations import Target, Version

# A whole document, as large as an import may be (so whatever was imported can be edited);
# notes are short by nature.
MAX_DOCUMENT_BYTES = settings.PORTAL_UPLOAD_MAX_BYTES
MAX_NOTE_BYTES = 64 * 1024
MAX_REASON_CHARS = 200
CLEAR_EVERYTHING_PHRASE = "clear everything"

_NEWLINES = re.compile(r"\r\n?")


class MarkdownField(forms.CharField):
    """Markdown typed into a textarea: kept as typed apart from line endings (browsers send
    CRLF), and limited in bytes, which is what CoreAPI stores."""

    def __init__(self, *, max_bytes: int, **kwargs: Any) -> None:
        super().__init__(strip=False, **kwargs)
        self.max_bytes = max_bytes

    def to_python(self, value: Any) -> str:
        return _NEWLINES.sub("\n", super().to_python(value))

    def validate(self, value: str) -> None:
        super().validate(value)
        size = len(value.encode())
        if size > self.max_bytes:
            raise forms.ValidationError(
                f"This is {size:,} bytes; the limit is {self.max_bytes:,} bytes.", code="too_big"
            )


class VersionField(forms.CharField):
    """The hidden token of the version a change started from (`operations.Version`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=200, **kwargs)

    def clean(self, value: Any) -> Version | None:
        token = super().clean(value)
        if not token:
            return None
        version = Version.parse(token)
        if version is None:
            raise forms.ValidationError(
                "The page was missing which version of the memory you started from; "
                "reload it and try again.",
                code="bad_version",
            )
        return version


class TargetForm(forms.Form):
    """Which memory: the user's own (`scope=user`) or one of their agents' (`scope=agent`)."""

    scope = forms.ChoiceField(choices=[("user", "Your memory"), ("agent", "An agent's memory")])
    agent = forms.CharField(required=False, max_length=100)

    def __init__(self, *args: Any, request: HttpRequest, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request = request
        self.target: Target | None = None
        # Set when the user's agents could not be listed: the view answers with its status.
        self.coreapi_error: CoreAPIError | None = None

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if "scope" in data and "agent" in data:
            try:
                agent = scope_target(self.request, data["scope"], data["agent"] or None)
            except CoreAPIError as exc:
                self.coreapi_error = exc
                raise forms.ValidationError(exc.message, code="coreapi") from exc
            self.target = Target(data["scope"], agent)
        return data


class EditForm(TargetForm):
    ACTIONS = ("save", "preview", "reapply", "overwrite")

    content = MarkdownField(required=False, max_bytes=MAX_DOCUMENT_BYTES)
    version = VersionField()
    # The text the draft started from (version's text), to re-apply changes after a conflict.
    base = MarkdownField(required=False, max_bytes=MAX_DOCUMENT_BYTES)
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


class PreviewForm(forms.Form):
    content = MarkdownField(required=False, max_bytes=MAX_DOCUMENT_BYTES)


class AppendForm(TargetForm):
    content = MarkdownField(max_bytes=MAX_NOTE_BYTES, label="Note")
    reason = forms.CharField(required=False, max_length=MAX_REASON_CHARS, label="Why")

    def clean_content(self) -> str:
        content: str = self.cleaned_data["content"]
        if not content.strip():
            raise forms.ValidationError("Write something to add.", code="required")
        return content

    def clean_reason(self) -> str:
        # The reason goes into the note's one-line heading.
        return " ".join(self.cleaned_data["reason"].split())


class DeleteEntryForm(TargetForm):
    version = VersionField()
    index = forms.IntegerField(min_value=0, max_value=100_000)


class DeleteLinesForm(TargetForm):
    version = VersionField()
    start = forms.IntegerField(min_value=0, max_value=10_000_000)
    end = forms.IntegerField(min_value=1, max_value=10_000_000)


class ClearForm(TargetForm):
    confirm = forms.BooleanField(required=False)


class UndoForm(TargetForm):
    token = forms.RegexField(regex=r"^[A-Za-z0-9_-]{8,64}$", max_length=64)


class ClearEverythingForm(forms.Form):
    phrase = forms.CharField(max_length=100, label="Confirmation")

    def clean_phrase(self) -> str:
        typed = " ".join(self.cleaned_data["phrase"].split())
        if typed.casefold() != CLEAR_EVERYTHING_PHRASE:
            raise forms.ValidationError(
                f"Type “{CLEAR_EVERYTHING_PHRASE}” to confirm; nothing was cleared.",
                code="phrase",
            )
        return typed
