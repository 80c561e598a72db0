"""Links to a memory's own pages. Their routes (memory_ui.web.urls) are named
`<page>_<scope>` (`memory_agent`, `export_combined`, …), built by `Target.route`."""

from urllib.parse import urlencode

from django.urls import reverse

from memory_ui.sources.agent_memory import Target


def target_url(target: Target, page: str = "memory") -> str:
    name, args = target.route(page)
    return reverse(name, args=args)


def target_query(target: Target) -> dict[str, str]:
    """The hidden `scope`/`agent` fields of the change forms, as a query for their links."""
    query = {"scope": target.scope}
    if target.agent_name:
        query["agent"] = target.agent_name
    return query


def entry_page_url(target: Target, index: int) -> str:
    """An entry's own page: its editor, which offers Move or copy and Delete too."""
    return f"{reverse('memory_entry_edit')}?{urlencode({**target_query(target), 'index': index})}"


def entry_url(target: Target, index: int) -> str:
    """Where an entry lives: its memory's page that holds it, scrolled to it."""
    return f"{target_url(target)}?{urlencode({'entry': index})}#entry-{index}"
