"""Export and import: downloads, uploads of one document or an archive, the restore."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest

from memory_ui.documents.versions import Version
from memory_ui.memory import uploads
from memory_ui.memory.archive import ArchiveLimits, ParsedArchive, read_archive
from memory_ui.memory.uploads import ImportText, UploadRefused
from memory_ui.web.forms.changes import SubmissionMixin
from memory_ui.web.forms.confirm import CheckboxConfirmation
from memory_ui.web.forms.fields import (
    IMPORT_MODES,
    VersionField,
)
from memory_ui.web.upload_handler import was_oversized


class DownloadForm(forms.Form):
    """The one-off token a page sends with a download, to learn when it began."""

    download_token = forms.RegexField(regex=r"^[A-Za-z0-9]{8,64}$", required=False)


class RefusableForm(forms.Form):
    """A form whose refusal carries an HTTP status (413 for too large, else 400)."""

    refusal: UploadRefused | None = None

    def refuse(self, refusal: UploadRefused) -> forms.ValidationError:
        self.refusal = refusal
        return forms.ValidationError(refusal.message, code="refused")

    @property
    def status(self) -> int:
        return self.refusal.status if self.refusal else 400


class ImportUploadForm(RefusableForm):
    """A markdown file (`file`) or pasted markdown (`pasted`), validated by
    `memory.uploads` (not by Django's fields, whose messages say less) into
    `cleaned_data["imported"]`."""

    def __init__(self, *args: Any, request: HttpRequest, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request = request

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        try:
            data["imported"] = self._imported(self.files.get("file"), self.data.get("pasted", ""))
        except UploadRefused as refusal:
            raise self.refuse(refusal) from refusal
        return data

    def _imported(self, upload: UploadedFile | None, pasted: str) -> ImportText:
        if was_oversized(self.request, "file"):
            raise uploads.too_large(None, uploads.max_bytes())
        if upload is not None and pasted.strip():
            raise UploadRefused(
                "You chose a file and pasted text. Import one at a time: "
                "empty the text box or remove the file."
            )
        if upload is not None:
            return uploads.validate_upload(upload)
        if pasted:
            return uploads.validate_paste(pasted)
        raise UploadRefused("Choose a markdown file or paste some markdown to import.")


class ImportConfirmForm(CheckboxConfirmation, SubmissionMixin, RefusableForm):
    """The previewed text comes back from the browser and is checked again, like any upload."""

    CONFIRM_FIELD = "confirm_replace"
    CONFIRM_MESSAGE = (
        "Replacing removes everything there now: tick “I understand” to go ahead, or choose append."
    )

    text = forms.CharField(required=False, strip=False)
    source = forms.CharField(required=False, strip=False)
    mode = forms.ChoiceField(
        choices=IMPORT_MODES,
        error_messages={
            "required": "Choose whether to append or to replace.",
            "invalid_choice": "Choose whether to append or to replace.",
        },
    )
    # A malformed version only matters for a replace, where clean() says so.
    version = forms.CharField(required=False, max_length=200)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # uploads.validate_paste checks the text, with messages that say more than Django's.
        self.fields["text"].validators = []

    def clean_version(self) -> Version | None:
        return Version.parse(self.cleaned_data["version"])

    def clean_text(self) -> ImportText:
        try:
            validated = uploads.validate_paste(self.cleaned_data["text"])
        except UploadRefused as refusal:
            raise self.refuse(refusal) from refusal
        source = self.data.get("source", "")[:200] or "pasted text"
        return ImportText(validated.text, source)

    def confirm_needed(self, data: dict[str, Any]) -> bool:
        return data.get("mode") == "replace"

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("mode") == "replace" and data.get("version") is None:
            raise forms.ValidationError(
                "This preview is incomplete; preview the import again.", code="bad_version"
            )
        return data


class ArchiveUploadForm(RefusableForm):
    """An "Export everything" zip (`archive`), read and checked by `memory.archive` into
    `cleaned_data["archive"]` (the upload) and `cleaned_data["parsed"]`."""

    def __init__(self, *args: Any, request: HttpRequest, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request = request
        self.limits = ArchiveLimits.from_settings()

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        data["archive"] = self.files.get("archive")
        try:
            data["parsed"] = self._parsed(data["archive"])
        except UploadRefused as refusal:
            raise self.refuse(refusal) from refusal
        return data

    def _parsed(self, upload: UploadedFile | None) -> ParsedArchive:
        if was_oversized(self.request, "archive"):
            raise uploads.too_large(None, self.limits.max_archive_bytes, "The archive")
        if upload is None:
            raise UploadRefused("Choose the .zip file that “Export everything” made.")
        if not (upload.name or "").lower().endswith(".zip"):
            raise UploadRefused(
                f"“{upload.name}” is not a .zip file. To import one markdown file, "
                "choose the memory it belongs to below."
            )
        parsed = read_archive(upload, self.limits)
        if not parsed.files:
            raise UploadRefused("The archive lists no memory to import.")
        return parsed


class RestoreForm(CheckboxConfirmation):
    """Which files of a staged archive go back, how, and the version each preview showed."""

    CONFIRM_FIELD = "confirm_replace"
    CONFIRM_MESSAGE = (
        "Replacing overwrites the chosen memories: tick “I understand” to go ahead, "
        "or choose append."
    )

    mode = forms.ChoiceField(
        choices=IMPORT_MODES,
        error_messages={
            "required": "Choose whether to replace or to append.",
            "invalid_choice": "Choose whether to replace or to append.",
        },
    )
    scopes = forms.MultipleChoiceField(
        error_messages={"required": "Choose at least one memory to import; nothing was imported."}
    )

    def __init__(self, *args: Any, usable: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.usable = usable
        self.fields["scopes"].choices = [(key, key) for key in usable]
        for key in self.data.getlist("scopes") if hasattr(self.data, "getlist") else ():
            self.fields[f"version-{key}"] = VersionField(required=False)

    def clean_scopes(self) -> list[str]:
        return list(dict.fromkeys(self.cleaned_data["scopes"]))

    def confirm_needed(self, data: dict[str, Any]) -> bool:
        return data.get("mode") == "replace"

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        data["versions"] = {key: data.get(f"version-{key}") for key in data.get("scopes", [])}
        if data.get("mode") == "replace" and None in data["versions"].values():
            raise forms.ValidationError("This preview is incomplete; reload it and try again.")
        return data

    def unusable(self) -> list[str]:
        sent = self.data.getlist("scopes") if hasattr(self.data, "getlist") else []
        return [key for key in sent if key not in self.usable]
