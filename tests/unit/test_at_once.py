"""memory.at_once: every system's step started together, each within its own deadline
inside the request's, what the steps audit saved on the calling thread (with its database
connection), and a step's failure raised only once everything is audited."""

from __future__ import annotations

import threading

import pytest

from memory_ui import budget
from memory_ui.audit import Action, audit_record
from memory_ui.identity import Identity
from memory_ui.memory.at_once import at_once
from memory_ui.models import AuditEvent

ALICE = Identity("oid-alice", "tid", "alice@contoso.com", "Alice", (), "x")


def test_the_steps_run_at_the_same_time() -> None:
    # Each step waits for the other: one after the other, the first would time out.
    both = threading.Barrier(2, timeout=5)

    def meet(value: int) -> int:
        both.wait()
        return value

    assert at_once(lambda: meet(1), lambda: meet(2)) == [1, 2]


def test_each_step_has_its_own_deadline_within_the_requests(settings) -> None:
    settings.PORTAL_SOURCE_DEADLINE_SECONDS = 2.0
    with budget.deadline(60):
        left = at_once(budget.remaining, budget.remaining)
    assert all(0 < seconds <= 2.0 for seconds in left)
    with budget.deadline(1.0):
        assert all(seconds <= 1.0 for seconds in at_once(budget.remaining, budget.remaining))


@pytest.mark.django_db
def test_what_the_steps_audit_is_saved_in_order_on_this_thread() -> None:
    def exports(name: str) -> str:
        audit_record(ALICE, Action.EXPORT, source=name)
        return name

    # Nested, as "Export everything" runs the other sources inside one of its own steps.
    outer = at_once(
        lambda: exports("coreapi"),
        lambda: at_once(lambda: exports("legacy"), lambda: exports("notebook")),
    )

    assert outer == ["coreapi", ["legacy", "notebook"]]
    saved = AuditEvent.objects.order_by("id").values_list("source", flat=True)
    assert list(saved) == ["coreapi", "legacy", "notebook"]


@pytest.mark.django_db
def test_a_failing_step_is_raised_once_the_others_are_audited() -> None:
    def fails() -> None:
        audit_record(ALICE, Action.EXPORT, source="coreapi")
        raise LookupError("down")

    with pytest.raises(LookupError):
        at_once(fails, lambda: audit_record(ALICE, Action.EXPORT, source="notebook"))
    assert AuditEvent.objects.count() == 2
