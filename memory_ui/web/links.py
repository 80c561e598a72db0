"""Links to a memory's own pages. Their routes (memory_ui.web.urls) are named
`<page>_<scope>` (`memory_agent`, `export_combined`, …), built by `Target.route`."""

from django.urls import reverse

from memory_ui.memory.targets import Target


def target_url(target: Target, page: str = "memory") -> str:
    name, args = target.route(page)
    return reverse(name, args=args)
