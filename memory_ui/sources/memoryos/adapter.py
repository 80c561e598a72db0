"""MemoryOS (seed 002; docs/memoryos.md) as a `MemoryBackend`, with what the seed really
gives: it retrieves, for one person, one agent and one question, and takes feedback. It
offers no way to list, export, edit or delete a person's memories.

A target is one configured agent (MEMORYOS_AGENTS); the service cannot list its items
(no LIST). What the agent is told is `preview` (a retrieval, which moves last_accessed and
counts against quota, so only when a person asks), and "this is wrong" is `report`
(user_corrected feedback: the service queues a re-extraction; nothing is corrected yet).
Nothing here is audited: whoever calls it audits, with the source's name
(`sources.generic`).
"""

from __future__ import annotations

from collections.abc import Mapping

from memory_ui import directory
from memory_ui.directory import DirectoryError, DirectoryUnavailable
from memory_ui.sources.memoryos.client import LIMIT_MAX, MemoryOsClient
from memory_ui.sources.memoryos.errors import MemoryOsError, MemoryOsUnavailable
from memory_ui.sources.memoryos.types import (
    FeedbackReceipt,
    Retrieval,
    RetrievedMemory,
    external_user_id_for,
    needs_oid,
)
from memory_ui.sources.protocol import (
    Capability,
    Erasure,
    Item,
    ItemsPage,
    Origin,
    Outcome,
    Preview,
    PreviewItem,
    PreviewState,
    SourceTarget,
    Subject,
    Unsupported,
)

SOURCE = "memoryos"
TITLE = "MemoryOS"
CAPABILITIES = Capability.SEARCH | Capability.PREVIEW
NO_LIST = (
    "MemoryOS cannot list what it keeps about you: it only answers an agent's question. "
    "Ask a question to see what an agent is told."
)
# The same, to support, who cannot ask for the person (`Source.cannot_list_to_support`).
NO_LIST_TO_SUPPORT = (
    "MemoryOS cannot list what it keeps about a person: it only answers an agent's question."
)
# What a page says when the answer was not a full one (docs/memoryos.md, S8).
NOTICES = {
    PreviewState.DEGRADED: (
        "MemoryOS answered in a degraded mode: the memories below may fit the question less "
        "well than usual, and this is what the agent is given right now."
    ),
    PreviewState.PASSTHROUGH: (
        "MemoryOS passed this question through without memory: the agent is given nothing "
        "about you from it right now, which does not mean it keeps nothing."
    ),
    PreviewState.BLOCKED: (
        "MemoryOS is blocked for this service right now: the agent is given nothing about "
        "you from it, which does not mean it keeps nothing."
    ),
}
# `{contact}`: whom to ask instead (MEMORYOS_CONTACT, else "its operator").
_NO_ERASURE = "Not possible: MemoryOS offers no erasure through its API; ask {contact}."
_MISSING = {
    Capability.LIST: NO_LIST,
    Capability.APPEND: "MemoryOS takes memories from agents' conversations, not from the portal.",
    Capability.EDIT_ITEM: (
        "MemoryOS memories cannot be edited; report one as wrong and the service re-reads "
        "the conversation it came from."
    ),
    Capability.DELETE_ITEM: "MemoryOS offers no way to delete a memory through its API.",
    Capability.RESTORE_ITEM: "MemoryOS offers no way to delete a memory, so none to restore.",
    Capability.CLEAR_TARGET: "MemoryOS offers no way to clear an agent's memories.",
    Capability.ERASE_SUBJECT: _NO_ERASURE,
    Capability.EXPORT: "Not possible: MemoryOS offers no export through its API; ask {contact}.",
    Capability.IMPORT: "MemoryOS cannot import a document.",
    Capability.CONDITIONAL_WRITE: "MemoryOS takes no writes from the portal.",
}


def missing(contact: str = "") -> dict[Capability, str]:
    """Each missing capability's sentence, naming whom to ask where the portal cannot act
    (`contact`: MEMORYOS_CONTACT, else "its operator")."""
    return {c: text.format(contact=contact or "its operator") for c, text in _MISSING.items()}


MISSING = missing()
NO_ERASURE = MISSING[Capability.ERASE_SUBJECT]
NO_PERSON = (
    "The portal cannot name this person to MemoryOS: its rule needs their object id, which "
    "only their own sign-in gives where Microsoft Graph is not configured (GRAPH_BASE_URL)."
)


class MemoryOsNoPerson(MemoryOsError):
    portal_status = 409
    default_message = NO_PERSON


def _object_id(upn: str) -> str:
    """The person's object id from Microsoft Graph (memory_ui.directory), where configured;
    its failures as MemoryOS's own, said to support (only support acts by UPN)."""
    graph = directory.configured()
    if graph is None:
        raise MemoryOsNoPerson()
    try:
        return graph.object_id(upn)
    except DirectoryUnavailable as exc:
        raise MemoryOsUnavailable(exc.message, status=exc.status) from exc
    except DirectoryError as exc:
        raise MemoryOsNoPerson(exc.message, status=exc.status) from exc


class MemoryOsBackend:
    source = SOURCE
    capabilities = CAPABILITIES

    def __init__(
        self,
        client: MemoryOsClient,
        agents: Mapping[str, str],
        user_id_template: str,
        contact: str = "",
    ) -> None:
        self._client = client
        self._agents = dict(agents)  # agent id -> what people read
        self._template = user_id_template
        self._missing = missing(contact)

    def missing_reason(self, capability: Capability) -> str:
        return self._missing.get(capability, f"This is not possible in {TITLE}.")

    def external_user_id(self, subject: Subject) -> str:
        oid = subject.oid
        if not oid and needs_oid(self._template):  # support acting by UPN
            oid = _object_id(subject.upn)
        try:
            return external_user_id_for(self._template, subject.upn, oid)
        except (KeyError, ValueError) as exc:
            raise MemoryOsNoPerson() from exc

    def list_targets(self, subject: Subject) -> list[SourceTarget]:
        return [
            SourceTarget(SOURCE, agent_id, title, agent=agent_id)
            for agent_id, title in self._agents.items()
        ]

    def read_page(
        self, subject: Subject, target: SourceTarget, cursor: str | None = None
    ) -> ItemsPage:
        raise Unsupported(NO_LIST)

    def read_item(self, subject: Subject, target: SourceTarget, key: str) -> Item:
        raise Unsupported(NO_LIST)

    def retrieve(
        self, subject: Subject, target: SourceTarget, question: str, limit: int
    ) -> Retrieval:
        """The service's own answer for `target`'s agent and `question`, the top `limit`."""
        return self._client.retrieve(
            self.external_user_id(subject), question, agent_id=target.key, limit=limit
        )

    def preview(self, subject: Subject, target: SourceTarget, question: str, limit: int) -> Preview:
        """What `target`'s agent is given about the person for `question`: for this
        question, the top `limit`; never everything the service knows."""
        return _preview(target, question, limit, self.retrieve(subject, target, question, limit))

    def report(
        self, subject: Subject, target: SourceTarget, reference: str, key: str, correction: str
    ) -> str:
        """The person says memory `key` of retrieval `reference` is wrong and what is true;
        the id of the re-extraction the service queued (or of the feedback, without one)."""
        self.external_user_id(subject)  # only a person the service can be told of
        receipt: FeedbackReceipt = self._client.report_correction(
            reference, key, correction, {"agent_id": target.key, "reported_by": "memory-portal"}
        )
        return receipt.correction_job_id or receipt.feedback_id

    def search(self, subject: Subject, query: str) -> list[tuple[SourceTarget, Item]]:
        """One retrieval per configured agent, the most the service returns each."""
        return [
            (target, _item(memory))
            for target in self.list_targets(subject)
            for memory in self.retrieve(subject, target, query, LIMIT_MAX).memories
        ]

    def append(self, subject: Subject, target: SourceTarget, text: str, reason: str) -> Item:
        raise Unsupported(self.missing_reason(Capability.APPEND))

    def edit_item(
        self, subject: Subject, target: SourceTarget, key: str, old: str, new: str
    ) -> Item:
        raise Unsupported(self.missing_reason(Capability.EDIT_ITEM))

    def replace_item(self, subject: Subject, target: SourceTarget, key: str, text: str) -> Item:
        raise Unsupported(self.missing_reason(Capability.EDIT_ITEM))

    def delete_item(self, subject: Subject, target: SourceTarget, key: str) -> Item:
        raise Unsupported(self.missing_reason(Capability.DELETE_ITEM))

    def restore_item(self, subject: Subject, target: SourceTarget, item: Item) -> Item:
        raise Unsupported(self.missing_reason(Capability.RESTORE_ITEM))

    def clear_target(self, subject: Subject, target: SourceTarget) -> list[Outcome]:
        raise Unsupported(self.missing_reason(Capability.CLEAR_TARGET))

    def erase_subject(self, subject: Subject) -> Erasure:
        raise Unsupported(self.missing_reason(Capability.ERASE_SUBJECT))

    def export(self, subject: Subject, target: SourceTarget) -> str:
        raise Unsupported(self.missing_reason(Capability.EXPORT))


def _state(retrieval: Retrieval) -> PreviewState:
    if retrieval.blocked:
        return PreviewState.BLOCKED
    if retrieval.passthrough:
        return PreviewState.PASSTHROUGH
    if retrieval.degraded:
        return PreviewState.DEGRADED
    return PreviewState.FULL


def _preview(target: SourceTarget, question: str, limit: int, retrieval: Retrieval) -> Preview:
    state = _state(retrieval)
    clarification = retrieval.clarification
    return Preview(
        target=target,
        question=question,
        context=retrieval.context,
        items=tuple(_told(memory) for memory in retrieval.memories),
        limit=limit,
        reference=retrieval.retrieval_id or "",
        state=state,
        notice=NOTICES.get(state, ""),
        clarification=clarification.question if clarification else "",
    )


def _told(memory: RetrievedMemory) -> PreviewItem:
    origin = memory.provenance
    return PreviewItem(
        key=memory.id,
        text=memory.content,
        category=memory.category,
        importance=memory.importance,
        relevance=memory.relevance,
        last_used=memory.last_accessed,
        origin=Origin(origin.service, origin.event_id, origin.observed_at, origin.writer_id)
        if origin
        else None,
    )


def _item(memory: RetrievedMemory) -> Item:
    when = memory.provenance.observed_at if memory.provenance else None
    return Item(key=memory.id, description=memory.category, updated=when, text=memory.content)
