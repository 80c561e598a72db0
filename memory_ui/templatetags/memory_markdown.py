"""`{% load memory_markdown %}` then `{{ text|render_markdown }}` for untrusted memory markdown."""

from django import template
from django.utils.safestring import SafeString

from memory_ui.memory import documents

register = template.Library()


@register.filter
def render_markdown(text: str | None) -> SafeString:
    # A missing document renders as nothing rather than the string "None".
    return documents.render_markdown(text or "")
