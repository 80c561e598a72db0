"""`{% load memory_sources %}`: the dashboard's section of each memory system beside the
primary one, from the registry (its own section where it has pages of its own, else the
generic one), so the dashboard names no source; and links to a source's target or item."""

from dataclasses import dataclass

from django import template
from django.urls import reverse

from memory_ui.sources import registry
from memory_ui.sources.protocol import Source
from memory_ui.web.source_pages import source_item_url, source_target_url

register = template.Library()


@dataclass(frozen=True)
class Section:
    source: Source
    url: str


@register.simple_tag
def source_sections() -> list[Section]:
    sections = []
    for source in registry.others():
        if source.section:
            sections.append(Section(source, reverse(source.section)))
        elif source.backend is not None:
            sections.append(Section(source, reverse("source_section", args=[source.name])))
    return sections


@register.simple_tag
def source_target_link(source: Source, target: str) -> str:
    """`{% source_target_link source key %}`: the page of one of the source's targets."""
    return source_target_url(source, target)


@register.simple_tag
def source_item_link(source: Source, target: str, item: str) -> str:
    """`{% source_item_link source target_key item_key %}`: where one item is shown."""
    return source_item_url(source, target, item)
