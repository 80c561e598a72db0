"""`{% load legacy_stores %}`: whether the legacy memory stores are configured, so the
dashboard shows their section's placeholder only when there is a source to load."""

from django import template

from memory_ui.sources.legacy.operations import legacy_enabled

register = template.Library()


@register.simple_tag
def legacy_on() -> bool:
    return legacy_enabled()
