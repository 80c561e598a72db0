"""Search across every memory."""

from __future__ import annotations

from typing import Any

from django import forms

from memory_ui.sources.agent_memory import (
    USER_MEMORY_LABEL,
    Agent,
    Target,
    all_targets,
    valid_agent_name,
)
from memory_ui.web.forms.fields import DatesInOrder

MAX_SEARCH_CHARS = 200


class SearchForm(DatesInOrder):
    """Filters for searching all of a user's memory. `agent` chooses one memory: an agent
    from the user's own list (CoreAPI's answer, given by the view; any other name is a form
    error, 400), `SHARED` for the shared memory, or empty for every memory. Dates are whole
    days in the portal's time zone."""

    SHARED = "_shared"  # never an agent name: those start with a letter

    q = forms.CharField(
        label="Text",
        required=False,
        max_length=MAX_SEARCH_CHARS,
        strip=True,
        widget=forms.SearchInput,
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
            (self.SHARED, USER_MEMORY_LABEL),
            *((agent.name, agent.display_name) for agent in agents or ()),
            *unknown,
        ]
        self.agents = agents or []

    @property
    def filters_used(self) -> int:
        """How many of the filters under the text box are filled in: a phone shows them
        folded away only when none is."""
        filters = ("agent", "reason", "date_from", "date_to")
        return sum(bool(str(self.data.get(name, "")).strip()) for name in filters)

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


class QuickSearchForm(forms.Form):
    """The dashboard's search box: only the text, sent to the search page (`SearchForm`)."""

    q = forms.CharField(
        required=False,
        max_length=MAX_SEARCH_CHARS,
        widget=forms.SearchInput(
            attrs={"aria-label": "Search text", "placeholder": "Search all your memory"}
        ),
    )
