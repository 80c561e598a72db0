"""`{% load memory_sources %}`: the dashboard's section of each memory system beside the
primary one, from the registry (its own section where it has pages of its own, else the
generic one), so the dashboard names no source."""

from dataclasses import dataclass

from django import template
from django.urls import reverse

from memory_ui.memory.everything import not_exported
from memory_ui.sources import registry
from memory_ui.sources.protocol import Source

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


@dataclass(frozen=True)
class LeftOut:
    title: str
    why: str


@register.simple_tag
def not_in_export() -> list[LeftOut]:
    """The systems "Export everything" cannot include, each with why: named beside the
    button, so the file is never taken for all there is."""
    return [LeftOut(source.title, why) for source, why in not_exported()]
