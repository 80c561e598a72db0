"""`{% load memory_links %}` then `{{ target|target_url }}` or `{{ target|target_url:"export" }}`,
and `{{ target|entry_page:index }}`."""

from django import template

from memory_ui.sources.agent_memory import Target
from memory_ui.web import links

register = template.Library()


@register.filter
def target_url(target: Target, page: str = "memory") -> str:
    return links.target_url(target, page)


@register.filter
def entry_page(target: Target, index: int) -> str:
    return links.entry_page_url(target, index)
