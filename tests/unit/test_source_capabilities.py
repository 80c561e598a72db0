"""The protocol's declared listing (LIST) and preview/feedback pair (PREVIEW), on the steps
every source that brings only its adapter shares (`sources.generic`, `memory.everything`):
a source that cannot list is never read page by page, never counted as "nothing", never
erased or exported; a preview and a report run only where declared, each audited with the
source's name and never its content."""

from __future__ import annotations

import pytest

from memory_ui.identity import Actor, CallerAuth, Identity
from memory_ui.memory.everything import not_exported_reason
from memory_ui.models import AuditEvent
from memory_ui.sources import generic, listing
from memory_ui.sources.generic import BackendSteps
from memory_ui.sources.protocol import (
    Capability,
    Item,
    ItemsPage,
    Preview,
    PreviewItem,
    Source,
    SourceError,
    SourceTarget,
    Subject,
    Unsupported,
)

ALICE = Actor(
    Identity("oid-alice", "tid", "alice@contoso.com", "Alice", (), "home"),
    CallerAuth(access_token="token"),
)
AGENT = SourceTarget("asked", "travel-planner", "Travel Planner", agent="travel-planner")
NO_LIST = "Asked cannot list: it only answers an agent's question."
NO_PREVIEW = "Asked is not given to agents."
SECRET = "Alice's passport number is X1234567."


class Asked:
    """A source that answers questions and takes corrections, erasable and exportable on
    paper, that cannot list; `capabilities` may take PREVIEW away."""

    source = "asked"

    def __init__(self, capabilities: Capability) -> None:
        self.capabilities = capabilities
        self.reports: list[tuple[str, str, str]] = []
        self.fail = False

    def missing_reason(self, capability: Capability) -> str:
        return {Capability.LIST: NO_LIST, Capability.PREVIEW: NO_PREVIEW}[capability]

    def list_targets(self, subject: Subject) -> list[SourceTarget]:
        return [AGENT]

    def read_page(
        self, subject: Subject, target: SourceTarget, cursor: str | None = None
    ) -> ItemsPage:
        raise AssertionError("a source without LIST is never read page by page")

    def read_item(self, subject: Subject, target: SourceTarget, key: str) -> Item:
        raise AssertionError("a source without LIST is never read item by item")

    def preview(self, subject: Subject, target: SourceTarget, question: str, limit: int) -> Preview:
        if self.fail:
            raise SourceError("Asked is unavailable.", status=503)
        item = PreviewItem("m1", SECRET, "fact", 9.0, 0.8)
        return Preview(target, question, f"- {SECRET}", (item,), limit, reference="r1")

    def report(
        self, subject: Subject, target: SourceTarget, reference: str, key: str, correction: str
    ) -> str:
        self.reports.append((reference, key, correction))
        return "job-1"


ALL = Capability.PREVIEW | Capability.ERASE_SUBJECT | Capability.EXPORT


def _source(capabilities: Capability) -> Source:
    return Source(
        name="asked",
        title="Asked",
        description="",
        capabilities=capabilities,
        missing={Capability.LIST: NO_LIST, Capability.PREVIEW: NO_PREVIEW},
        steps=BackendSteps(lambda actor: Asked(capabilities)),
    )


def test_a_source_that_cannot_list_says_why_instead_of_an_empty_list() -> None:
    assert _source(ALL).cannot_list == NO_LIST and _source(ALL).previews
    assert _source(ALL | Capability.LIST).cannot_list == ""
    assert not _source(Capability.LIST).previews

    listed = listing.targets_list(ALICE, Asked(ALL))

    assert [(entry.target, entry.items) for entry in listed] == [(AGENT, ())]
    with pytest.raises(Unsupported, match=NO_LIST):
        generic.target_page(ALICE, Asked(ALL), AGENT)


def test_it_is_never_erased_nor_exported_by_a_request_over_everything() -> None:
    steps = BackendSteps(lambda actor: Asked(ALL))

    (planned,) = steps.plan(ALICE).outcomes
    (erased,) = steps.erase_all(ALICE, {}).outcomes

    assert (planned.result, planned.reason) == ("not possible", NO_LIST)
    assert (erased.result, erased.reason) == ("not possible", NO_LIST)
    assert not_exported_reason(_source(ALL)) == NO_LIST
    assert not_exported_reason(_source(ALL | Capability.LIST)) == ""


@pytest.mark.django_db
def test_a_preview_and_a_report_are_audited_with_the_source_never_the_content() -> None:
    backend = Asked(ALL)

    preview = generic.target_preview(ALICE, backend, AGENT, "Where does Alice fly?", 10)
    receipt = generic.item_report(ALICE, backend, AGENT, preview.reference, "m1", "No: Y7654321")

    assert receipt == "job-1" and backend.reports == [("r1", "m1", "No: Y7654321")]
    events = list(AuditEvent.objects.order_by("id"))
    assert [(e.source, e.action, e.agent_name, e.outcome) for e in events] == [
        ("asked", "preview", "travel-planner", "ok"),
        ("asked", "report", "travel-planner", "ok"),
    ]
    assert events[0].count == 1
    stored = " ".join(str(value) for event in events for value in vars(event).values())
    assert SECRET not in stored and "Y7654321" not in stored and "Where does" not in stored


@pytest.mark.django_db
def test_a_failed_preview_is_audited_and_raised() -> None:
    backend = Asked(ALL)
    backend.fail = True

    with pytest.raises(SourceError):
        generic.target_preview(ALICE, backend, AGENT, "q", 10)

    (event,) = AuditEvent.objects.all()
    assert (event.action, event.outcome, event.error_status) == ("preview", "error", 503)


def test_nothing_is_asked_or_reported_where_preview_is_not_declared() -> None:
    backend = Asked(Capability.NONE)

    with pytest.raises(Unsupported, match=NO_PREVIEW):
        generic.target_preview(ALICE, backend, AGENT, "q", 10)
    with pytest.raises(Unsupported, match=NO_PREVIEW):
        generic.item_report(ALICE, backend, AGENT, "r1", "m1", "text")
    assert backend.reports == []
