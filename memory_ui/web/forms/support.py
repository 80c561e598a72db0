"""Support staff's input (look-up, reveal, a deletion request and its clear) and the
filters of the Activity page and the audit trail, as Django forms."""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.http import QueryDict
from django.utils.html import format_html

from memory_ui.audit import Action, source_choices
from memory_ui.sources.agent_memory import Target
from memory_ui.web.forms.confirm import NonceConfirmation, UPNConfirmation
from memory_ui.web.forms.fields import DatesInOrder

UPN_PATTERN = re.compile(r"^[A-Za-z0-9._%+'-]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
EVERY_MEMORY = "all"


def valid_upn(value: str) -> str | None:
    """The canonical form of a UPN (trimmed, lower case), or None when `value` is not one.
    Entra compares UPNs case-insensitively, but CoreAPI's substitution pattern and the
    audit trail compare text, so the overview URL, X-USER-IDENTITY, the audit subject and
    the confirmations all use this one form (docs/architecture.md, Identity and
    authorization). The pattern is ASCII, where lower() and casefold() agree."""
    value = value.strip()
    if len(value) > 254 or not UPN_PATTERN.fullmatch(value):
        return None
    return value.lower()


class LookupForm(forms.Form):
    upn = forms.CharField(
        label="User principal name",
        max_length=254,
        strip=True,
        widget=forms.EmailInput(attrs={"placeholder": "alice@contoso.com", "autocomplete": "off"}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, auto_id="%s", **kwargs)

    def clean_upn(self) -> str:
        upn = valid_upn(self.cleaned_data["upn"])
        if upn is None:
            raise forms.ValidationError("Enter a user principal name such as alice@contoso.com.")
        return upn


class SupportReasonField(forms.CharField):
    """Why support staff act for a user (it goes into the audit trail)."""

    def __init__(self, *, label: str, placeholder: str) -> None:
        super().__init__(
            label=label,
            max_length=500,
            min_length=5,
            strip=True,
            widget=forms.TextInput(attrs={"placeholder": placeholder}),
        )


class RevealForm(forms.Form):
    scope_key = forms.CharField(max_length=220, widget=forms.HiddenInput)
    reason = SupportReasonField(label="Why do you need to read it?", placeholder="Reason")

    @classmethod
    def for_row(cls, target: Target, row: int) -> RevealForm:
        """The form in row `row` of a user's overview: ids of its own, and instead of a
        visible label (the row's heading says which memory) a name that says it."""
        form = cls(initial={"scope_key": target.key}, auto_id=f"reveal-{row}-%s")
        form.fields["reason"].label = ""
        form.fields["reason"].widget.attrs["aria-label"] = f"Reason to reveal {target.label}"
        return form


class DeletionRequestForm(NonceConfirmation):
    """The start of "Handle a deletion request": reason and ticket (given once, for the
    export and the clear) and which memories, `all` meaning every one of them. The
    confirmation is issued for this user and this action and works once."""

    reason = SupportReasonField(
        label="Reason", placeholder="e.g. Privacy request received by email"
    )
    ticket = forms.RegexField(
        label="Ticket reference",
        max_length=100,
        widget=forms.TextInput(attrs={"placeholder": "e.g. PRIV-1234"}),
        regex=r"^[A-Za-z0-9][A-Za-z0-9._#/:-]*$",
        error_messages={"invalid": "Use letters, digits and . _ # / : - only."},
    )
    # Nothing ticked at first: support chooses "All memories" or the ones asked for.
    scopes = forms.MultipleChoiceField(
        label="Memories",
        widget=forms.CheckboxSelectMultiple,
        help_text="Tick “All memories”, or only the memories the user asked about. "
        "Nothing is chosen for you.",
        error_messages={
            "required": "Choose the memories to delete, or all of them. Tick “All memories” or "
            "the ones the user asked about."
        },
    )

    def __init__(self, *args: Any, scope_choices: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, auto_id="request-%s", **kwargs)
        self.keys = [key for key, _ in scope_choices]
        every = format_html(
            "<strong>{}</strong> (every one in the table above, whatever else is ticked)",
            "All memories",
        )
        self.fields["scopes"].choices = [(EVERY_MEMORY, every), *scope_choices]

    @classmethod
    def typed_again(cls, data: QueryDict) -> DeletionRequestForm:
        """The form on the page of a refusal by CoreAPI or the sign-in: the reason and
        ticket as typed, the memories chosen carried as hidden fields (the user's memories
        could not be listed; sent again, they are checked against the list)."""
        chosen = data.getlist("scopes")
        form = cls(
            initial={
                "reason": data.get("reason", ""),
                "ticket": data.get("ticket", ""),
                "scopes": chosen,
            },
            scope_choices=[(key, key) for key in chosen if key != EVERY_MEMORY],
        )
        form.fields["scopes"].widget = forms.MultipleHiddenInput()
        return form

    def clean_scopes(self) -> list[str]:
        chosen = self.cleaned_data["scopes"]
        if EVERY_MEMORY in chosen:
            return list(self.keys)
        return [key for key in self.keys if key in chosen]


class ClearRequestForm(UPNConfirmation, NonceConfirmation):
    """Clear what a deletion request exported: the user's UPN typed again (or carried by a
    retry) and a single-use confirmation. `scopes` narrows a retry to the failed ones."""

    scopes = forms.MultipleChoiceField(required=False)

    def __init__(self, *args: Any, keys: list[str], **kwargs: Any) -> None:
        super().__init__(*args, auto_id="clear-%s", **kwargs)
        self.fields["scopes"].choices = [(key, key) for key in keys]
        self.keys = keys

    def clean_scopes(self) -> list[str]:
        chosen = self.cleaned_data["scopes"] or self.keys
        return [key for key in self.keys if key in chosen]


class AuditFilterForm(DatesInOrder):
    """The audit trail's filters: people by UPN, a ticket, an action, whole days."""

    DATE_ERRORS = {"invalid": "Enter a date with the date picker."}

    subject = forms.CharField(label="Subject UPN", required=False, max_length=254)
    actor = forms.CharField(label="Actor UPN", required=False, max_length=254)
    ticket = forms.CharField(label="Ticket", required=False, max_length=100)
    action = forms.ChoiceField(
        label="Action", required=False, choices=[("", "Any"), *Action.choices]
    )
    system = forms.ChoiceField(label="System", required=False)
    date_from = forms.DateField(
        label="From",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        error_messages=DATE_ERRORS,
    )
    date_to = forms.DateField(
        label="To",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        error_messages=DATE_ERRORS,
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, auto_id="audit-%s", **kwargs)
        self.fields["system"].choices = [("", "Any"), *source_choices()]

    @property
    def problem(self) -> str:
        """What the page says above the filters when one is wrong (each says its own)."""
        if set(self.errors) <= {"date_from", "date_to"}:
            return "Check the dates below."
        return "Check the filters below."


class ActivityFilterForm(forms.Form):
    """Which of a user's own events to show: one memory (a target key: `user`, or
    `agent:<name>` for an agent's own memory and what it sees), one memory system and one
    action."""

    # A bookmarked filter can name a memory or action gone since: the page says so above
    # the events, the field only where to choose again.
    GONE = {"invalid_choice": "Choose from the list."}

    memory = forms.ChoiceField(label="Memory", required=False, error_messages=GONE)
    system = forms.ChoiceField(label="System", required=False, error_messages=GONE)
    action = forms.ChoiceField(
        label="Action",
        required=False,
        choices=[("", "Any action"), *Action.choices],
        error_messages=GONE,
    )

    def __init__(self, *args: Any, memory_choices: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, auto_id="filter-%s", **kwargs)
        self.fields["memory"].choices = [("", "Any memory"), *memory_choices]
        self.fields["system"].choices = [("", "Any system"), *source_choices()]
