"""Reading memory: the view of one page, the dashboard's list and its card batches."""

from __future__ import annotations

from typing import Any

from django import forms

from memory_ui.sources.agent_memory import Agent
from memory_ui.web.forms.fields import TargetForm


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


class SeenForm(TargetForm):
    """ "Mark as seen" for one memory, as the page showed it (its version token)."""

    version = forms.CharField(max_length=200)
