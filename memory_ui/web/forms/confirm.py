"""Confirmations before something cannot be undone, as form mixins: a ticked box, a typed
phrase, the user's UPN typed again, and a single-use nonce against replayed posts."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.sessions.backends.base import SessionBase
from django.utils.html import format_html

from memory_ui.web.stores.support import nonce_spend


class CheckboxConfirmation(forms.Form):
    """A box (or a button's value) saying "yes, go ahead". `confirm_needed` decides when
    it is needed (always, unless a subclass says otherwise)."""

    CONFIRM_FIELD = "confirm"
    CONFIRM_VALUES = ("true", "yes", "on")
    CONFIRM_MESSAGE = "Confirm to go ahead."

    def confirm_needed(self, data: dict[str, Any]) -> bool:
        return True

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        given = self.data.get(self.CONFIRM_FIELD, "")
        if self.confirm_needed(data) and given not in self.CONFIRM_VALUES:
            raise forms.ValidationError(self.CONFIRM_MESSAGE, code="unconfirmed")
        return data


class PhraseConfirmation(forms.Form):
    """A phrase typed exactly (case and spacing aside)."""

    PHRASE = ""
    PHRASE_REFUSED = "Type “{phrase}” to confirm; nothing was done."
    phrase = forms.CharField(max_length=100, widget=forms.TextInput(attrs={"autocomplete": "off"}))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["phrase"].label = format_html(
            "Type <strong>{}</strong> to confirm", self.PHRASE
        )

    def _post_clean(self) -> None:
        super()._post_clean()
        # A refused phrase takes the focus, to be typed again.
        if "phrase" in self.errors:
            self.fields["phrase"].widget.attrs["autofocus"] = True

    def clean_phrase(self) -> str:
        typed = " ".join(self.cleaned_data["phrase"].split())
        if typed.casefold() != self.PHRASE:
            raise forms.ValidationError(
                self.PHRASE_REFUSED.format(phrase=self.PHRASE), code="phrase"
            )
        return typed


class UPNConfirmation(forms.Form):
    """The user's UPN typed again; the form is built with `upn=`."""

    confirm_upn = forms.CharField(
        max_length=254, widget=forms.TextInput(attrs={"autocomplete": "off"})
    )

    def __init__(self, *args: Any, upn: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.upn = upn
        self.fields["confirm_upn"].label = format_html("Type <strong>{}</strong> to confirm", upn)

    def clean_confirm_upn(self) -> str:
        typed = self.cleaned_data["confirm_upn"].strip()
        if typed.casefold() != self.upn.casefold():
            raise forms.ValidationError(f"Type {self.upn} exactly to confirm.")
        return typed


class NonceConfirmation(forms.Form):
    """A single-use token issued with the form for one user and one action
    (`nonce_issue`). `spend_nonce`, once the form is otherwise valid, uses it up; a
    replay, or a token issued for another user or action, becomes a form error."""

    nonce = forms.CharField(widget=forms.HiddenInput, max_length=64)
    replayed = False

    def spend_nonce(self, session: SessionBase, *, upn: str, action: str) -> bool:
        if self.is_valid() and not nonce_spend(session, self.cleaned_data["nonce"], upn, action):
            self.replayed = True
            self.add_error(
                None,
                "That confirmation was already used, has expired or was issued for another "
                "user or action; nothing was done. Check the details and submit again.",
            )
        return self.is_valid()
