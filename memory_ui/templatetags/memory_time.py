"""`{% load memory_time %}` then `{{ when|ago }}`: "3 days ago", or "just now" under a
minute (Django's `timesince` alone says "0 minutes")."""

from datetime import datetime, timedelta

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
