"""`{% load memory_markdown %}` then `{{ text|render_markdown }}` for untrusted memory markdown,
or `{{ text|render_preview }}` for a draft or an upload of any size (the first
PREVIEW_CHARS only: see `memory_ui.documents.paging`), with `text|preview_cut` saying so."""

from django import template
from django.utils.safestring import SafeString

from memory_ui import documents
from memory_ui.documents.paging import PREVIEW_CHARS, shown_markdown

register = template.Library()


@register.filter
def render_markdown(text: str | None) -> SafeString:
    # A missing document renders as nothing rather than the string "None".
    return documents.render_markdown(text or "")


@register.filter
def render_preview(text: str | None) -> SafeString:
    return documents.render_markdown(shown_markdown(text or "", PREVIEW_CHARS))


@register.filter
def preview_cut(text: str | None) -> bool:
    """Whether `render_preview` shows only the start of `text`."""
    return len(text or "") > PREVIEW_CHARS
