"""`{% load memory_time %}` then `{{ when|ago }}`: "3 days ago", or "just now" under a
minute (Django's `timesince` alone says "0 minutes"); `{{ when|utc_iso }}` for a <time
datetime>."""

from datetime import UTC, datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

register = template.Library()

JUST_NOW = timedelta(minutes=1)


@register.filter
def ago(when: datetime, now: datetime | None = None) -> str:
    # A time a little ahead (another clock) reads as now too, not as "0 minutes ago".
    if (now or timezone.now()) - when < JUST_NOW:
        return "just now"
    return f"{timesince(when, now)} ago"


@register.filter
def utc_iso(when: datetime) -> str:
    """`2026-04-23T10:00:00Z`: the shortest valid `datetime` of a <time>, five bytes less
    than `|date:'c'`'s `+00:00` (an entry's time is on every entry of a page)."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
