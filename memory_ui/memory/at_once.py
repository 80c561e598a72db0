"""Work over several memory systems at the same time, each with a deadline of its own, so a
request over every system takes about as long as its slowest one, and a system that does
not answer in PORTAL_SOURCE_DEADLINE_SECONDS is given up on while the others' answers are
kept (docs/performance.md, "Cross-system work")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings

from memory_ui import budget
from memory_ui.audit import audit_held, audit_save
from memory_ui.models import AuditEvent


def at_once(*steps: Callable[[], Any]) -> list[Any]:
    """Every step on a thread of its own, all started together, results in order. Each runs
    within the request's deadline and its own (PORTAL_SOURCE_DEADLINE_SECONDS from now),
    which its memory system's client keeps to: a slow system fails with its own error
    rather than keep the others waiting. What a step audits is saved afterwards on this
    thread, with the request's database connection; then the first step's exception, if
    any, is raised."""

    def run(step: Callable[[], Any]) -> tuple[Any, BaseException | None, list[AuditEvent]]:
        with budget.deadline(settings.PORTAL_SOURCE_DEADLINE_SECONDS), audit_held() as held:
            try:
                return step(), None, held
            except Exception as exc:  # raised on the request's thread, once audited
                return None, exc, held

    outcomes = budget.fan_out(run, steps, at_once=len(steps))
    for _, _, held in outcomes:
        audit_save(held)
    for _, error, _ in outcomes:
        if error is not None:
            raise error
    return [result for result, _, _ in outcomes]
