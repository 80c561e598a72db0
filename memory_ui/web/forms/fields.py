"""What every form of the portal shares: the size limits, which memory a form names
(`TargetForm`), markdown and version fields, and the first error to show."""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.conf import settings
from django.utils.html import format_html
from django.utils.safestring import SafeString

from memory_ui.documents.versions import Version
from memory_ui.sources.agent_memory import USER_MEMORY_LABEL, valid_agent_name

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


def hinted_label(label: str, hint: str) -> SafeString:
    """A field's label with a muted aside, e.g. "Note (markdown)"."""
    return format_html('{} <small class="muted">{}</small>', label, hint)


class DatesInOrder(forms.Form):
    """A filter form with `date_from` and `date_to`: the end may not come before the start."""

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        first, last = data.get("date_from"), data.get("date_to")
        if first and last and first > last:
            self.add_error("date_to", "The end date is before the start date.")
        return data


def first_error(form: forms.Form) -> str:
    for errors in form.errors.values():
        return str(errors[0])
    return "Check the form and try again."


class TargetForm(forms.Form):
    """Which memory: the user's own (`scope=user`) or one of their agents' (`scope=agent`)."""

    scope = forms.ChoiceField(choices=[("user", USER_MEMORY_LABEL), ("agent", "An agent's memory")])
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
