"""Every input an end user's memory pages take, as Django forms: which memory, what to
write, the version a change started from, uploads and confirmations. Support staff's forms
and the Activity filters are in `memory_ui.web.support_forms`.

Forms check what was sent, never CoreAPI: which memory a `scope`/`agent` pair means is
resolved by the view (`access.target_for`), so an agent that isn't the user's is a 404
there and a forged scope is a form error here (400).
"""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest

from memory_ui.coreapi import Agent
from memory_ui.memory import uploads
from memory_ui.memory.archive import ArchiveLimits, ParsedArchive, read_archive
from memory_ui.memory.documents import without_bidi_controls
from memory_ui.memory.operations import Version
from memory_ui.memory.targets import Target, all_targets, valid_agent_name
from memory_ui.memory.uploads import ImportText, UploadRefused
from memory_ui.web.confirm import CheckboxConfirmation, PhraseConfirmation
from memory_ui.web.upload_handler import was_oversized

# A whole document, as large as an import may be (so whatever was imported can be edited);
# notes are short by nature.
MAX_DOCUMENT_BYTES = settings.PORTAL_UPLOAD_MAX_BYTES
# A whole document being edited: whatever CoreAPI would take back in one write.
MAX_EDIT_BYTES = settings.COREAPI_MAX_BODY_BYTES
MAX_NOTE_BYTES = 64 * 1024
MAX_REASON_CHARS = 200
CLEAR_EVERYTHING_PHRASE = "clear everything"
IMPORT_MODES = [("append", "Append"), ("replace", "Replace")]

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


def first_error(form: forms.Form) -> str:
    for errors in form.errors.values():
        return str(errors[0])
    return "Check the form and try again."


# --- which memory, and changes to it ---------------------------------------------------


class TargetForm(forms.Form):
    """Which memory: the user's own (`scope=user`) or one of their agents' (`scope=agent`)."""

    scope = forms.ChoiceField(
        choices=[("user", "Shared with every agent"), ("agent", "An agent's memory")]
    )
    agent = forms.CharField(required=False, max_length=100)

    def clean_agent(self) -> str:
        agent = self.cleaned_data["agent"]
        if agent and not valid_agent_name(agent):
            raise forms.ValidationError("Not an agent name.", code="agent")
        return agent

    @property
    def names_a_memory(self) -> bool:
        """Whether `scope` and `agent` are well formed (whatever else is wrong)."""
        self.is_valid()
        return "scope" not in self.errors and "agent" not in self.errors


class ViewForm(forms.Form):
    """How a memory page shows the document: formatted or as markdown, which page of it,
    or the page that holds one entry."""

    view = forms.ChoiceField(
        choices=[("rendered", "Formatted"), ("raw", "Markdown")], required=False
    )
    page = forms.IntegerField(min_value=1, max_value=10_000_000, required=False)
    entry = forms.IntegerField(min_value=0, max_value=10_000_000, required=False)

    @classmethod
    def chosen(cls, data: Any) -> dict[str, Any]:
        """The valid choices among `data`; a bad value means its default."""
        form = cls(data)
        form.is_valid()
        chosen = {name: form.cleaned_data.get(name) for name in ("view", "page", "entry")}
        chosen["view"] = chosen["view"] or "rendered"
        return chosen


class AgentListForm(forms.Form):
    """Which of the user's agents the dashboard lists, and in which order."""

    SORTS = {"name": "Name (A to Z)", "-name": "Name (Z to A)"}

    q = forms.CharField(required=False, max_length=100, label="Find an agent")
    sort = forms.ChoiceField(choices=list(SORTS.items()), required=False, label="Sort by")

    def chosen(self, agents: list[Agent]) -> list[Agent]:
        """`agents` filtered by name, display name or description, then sorted; all of them
        by name when the form is not valid."""
        data = self.cleaned_data if self.is_valid() else {}
        words = (data.get("q") or "").casefold().split()
        listed = [
            agent
            for agent in agents
            if all(
                word in f"{agent.name} {agent.display_name} {agent.description}".casefold()
                for word in words
            )
        ]
        listed.sort(key=lambda agent: agent.display_name.casefold() or agent.name)
        if data.get("sort") == "-name":
            listed.reverse()
        return listed


class CardsForm(forms.Form):
    """The agent cards one request loads (names only: object ids come from the agent list)."""

    name = forms.MultipleChoiceField()

    def __init__(self, data: Any, agents: list[Agent], most: int) -> None:
        super().__init__(data)
        self.most = most
        self.fields["name"].choices = [(agent.name, agent.name) for agent in agents]

    def clean_name(self) -> list[str]:
        names = list(dict.fromkeys(self.cleaned_data["name"]))
        if len(names) > self.most:
            raise forms.ValidationError(f"At most {self.most} cards at a time.")
        return names


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
    """The key of one rendering of a form that adds to memory (`stores.submission_claim`)."""

    submission = forms.RegexField(regex=r"^[A-Za-z0-9_-]{16,64}$", required=False)


class AppendForm(SubmissionMixin, TargetForm):
    content = MarkdownField(max_bytes=MAX_NOTE_BYTES, label="Note")
    reason = forms.CharField(required=False, max_length=MAX_REASON_CHARS, label="Why")

    def clean_content(self) -> str:
        content: str = self.cleaned_data["content"]
        if not content.strip():
            raise forms.ValidationError("Write something to add.", code="required")
        return content

    def clean_reason(self) -> str:
        # The reason goes into the note's one-line heading.
        return " ".join(without_bidi_controls(self.cleaned_data["reason"]).split())

    def typed(self) -> dict[str, str]:
        return {"content": self.data.get("content", ""), "reason": self.data.get("reason", "")}


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
        super().__init__(*args, **kwargs)
        self.fields["scopes"].choices = [(key, key) for key in keys]


# --- export and import -------------------------------------------------------------------


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


# --- search ------------------------------------------------------------------------------


class SearchForm(forms.Form):
    """Filters for searching all of a user's memory. `agent` chooses one memory: an agent
    from the user's own list (CoreAPI's answer, given by the view; any other name is a form
    error, 400), `SHARED` for the shared memory, or empty for every memory. Dates are whole
    days in the portal's time zone."""

    SHARED = "_shared"  # never an agent name: those start with a letter

    q = forms.CharField(
        label="Text", required=False, max_length=200, strip=True, widget=forms.SearchInput
    )
    agent = forms.ChoiceField(label="Memory", required=False)
    reason = forms.CharField(label="Reason contains", required=False, max_length=200, strip=True)
    date_from = forms.DateField(
        label="From", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    date_to = forms.DateField(
        label="To", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )

    def __init__(self, *args: Any, agents: list[Agent] | None, **kwargs: Any) -> None:
        """`agents` None: the user's agent list could not be read. An agent chosen then
        stays chosen (when it is a well-formed name) but names no memory (`targets`)."""
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        chosen = self.data.get("agent", "")
        if agents is None:
            unknown = [(chosen, chosen)] if valid_agent_name(chosen) else []
        else:
            unknown = []
        self.fields["agent"].choices = [
            ("", "Every memory"),
            (self.SHARED, "Shared with every agent"),
            *((agent.name, agent.display_name) for agent in agents or ()),
            *unknown,
        ]
        self.agents = agents or []

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        first, last = data.get("date_from"), data.get("date_to")
        if first and last and first > last:
            self.add_error("date_to", "The end date is before the start date.")
        return data

    def targets(self) -> list[Target]:
        """The memories to search (after `is_valid()`)."""
        chosen = self.cleaned_data["agent"]
        if chosen == self.SHARED:
            return [Target("user")]
        if chosen:
            return [Target("agent", a) for a in self.agents if a.name == chosen]  # or none
        return all_targets(self.agents)

    @classmethod
    def choice(cls, target: Target) -> str:
        """The `agent` value that searches only `target`."""
        return target.agent_name or cls.SHARED
