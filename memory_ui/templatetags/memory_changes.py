"""`{% load memory_changes %}`: what change forms on the memory page need from the document."""

from __future__ import annotations

import re
import secrets
import textwrap

from django import template
from django.utils.html import format_html

from memory_ui.documents.versions import Version
from memory_ui.sources.agent_memory import Memory
from memory_ui.web.held_forms import OWNER_FIELD, owner_hint

register = template.Library()


@register.filter
def version_token(memory: Memory | None) -> str:
    """The version a delete form was rendered from, for its hidden `version` field (the
    document hashed once per page: `Version.of`)."""
    return Version.of(memory).token() if memory is not None else ""


_SUBMISSION = re.compile(r"[A-Za-z0-9_-]{16,64}")


@register.filter
def dedent(text: str) -> str:
    """A nested list item's source without its indentation, so it renders as a list item
    rather than as indented code."""
    return textwrap.dedent(text)


@register.simple_tag
def submission_token(given: str = "") -> str:
    """A fresh key for one rendering of a form that adds to memory: the same form sent
    twice (a double click, a reload) adds once (`submission_claim`). A form given
    back after a failure keeps the key it was sent with (`given`), so sending it again
    settles that attempt first (`stores.submission_unsettled`)."""
    if given and _SUBMISSION.fullmatch(given):
        return given
    return secrets.token_urlsafe(16)


@register.simple_tag(takes_context=True)
def form_owner(context: template.Context) -> str:
    """The signed owner hint of a form people type into (`web.held_forms`): what they typed
    survives the end of their session, for them only."""
    identity = context.get("identity")
    if identity is None:
        return ""
    return format_html(
        '<input type="hidden" name="{}" value="{}">', OWNER_FIELD, owner_hint(identity.oid)
    )
