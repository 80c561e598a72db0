"""`{% load memory_sources %}`: the dashboard's section of each memory system beside the
primary one, from the registry (its own section where it has pages of its own, else the
generic one), so the dashboard names no source; and links to a source's target or item."""

from dataclasses import dataclass

from django import template
from django.urls import reverse

from memory_ui.memory.everything import not_exported
from memory_ui.sources import registry
from memory_ui.sources.protocol import Source
from memory_ui.web.source_pages import Place, source_item_url, source_target_url

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
def source_target_link(source: Source, target: str, page: str = "source_target") -> str:
    """`{% source_target_link source key %}`: a page of one of the source's targets."""
    return source_target_url(source, target, page)


@register.simple_tag
def source_item_link(source: Source, target: str, item: str, page: str = "source_item") -> str:
    """`{% source_item_link source target_key item_key %}`: a page of one item."""
    return source_item_url(source, target, item, page)


@register.filter
def source_page(place: Place, page: str) -> str:
    """`{{ place|source_page:"source_clear" }}`: that page of the place's target."""
    return place.url(page)


@dataclass(frozen=True)
class LeftOut:
    title: str
    why: str


@register.simple_tag
def not_in_export() -> list[LeftOut]:
    """The systems "Export everything" cannot include, each with why: named beside the
    button, so the file is never taken for all there is."""
    return [LeftOut(source.title, why) for source, why in not_exported()]
