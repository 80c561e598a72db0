"""The protocol every memory source implements, and the types it speaks in: below every
source package, so an adapter imports these and nothing of another source.

A source is one package under `memory_ui/sources/` (docs/architecture.md, Memory sources),
registered by `memory_ui.sources.registry` from settings. Its backend must name the targets
a subject has; everything else is a declared capability (reading a target's items page by
page too: `LIST`, which a service that only answers an agent's question lacks), and pages
offer an action only where the source (and, for a legacy store, its privileges) allows it,
saying in one sentence why where it does not. Every source's errors derive from
`SourceError`, so a page catches and translates them once.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from memory_ui.identity import Actor
    from memory_ui.sources.agent_memory import AgentMemoryStore


class SourceError(Exception):
    """Base of every source's failures, with what pages show: a user-safe `message` (also
    `str(error)`), the source's `status` (None for a transport failure), the HTTP status
    the portal answers with (`portal_status`), whether a write may have been applied all
    the same (`outcome_unknown`), the call's `correlation_id` where the source sends one,
    whether signing in again can help (`sign_in_helps`: only where the person's own
    sign-in expired, never where a source refused the portal's own credentials), and
    whether trying again can (`retry_helps`: not where a refusal would only be repeated)."""

    portal_status = 502
    outcome_unknown = False
    sign_in_helps = False
    retry_helps = True
    correlation_id = ""

    def __init__(self, message: str = "", *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class Capability(enum.Flag):
    NONE = 0
    SEARCH = enum.auto()
    APPEND = enum.auto()
    EDIT_ITEM = enum.auto()
    DELETE_ITEM = enum.auto()
    RESTORE_ITEM = enum.auto()
    CLEAR_TARGET = enum.auto()
    ERASE_SUBJECT = enum.auto()
    EXPORT = enum.auto()
    IMPORT = enum.auto()
    CONDITIONAL_WRITE = enum.auto()  # a write with a version precondition
    LIST = enum.auto()  # a target's items read page by page (`read_page`, `read_item`)
    # What an agent is told about a person for one question, and "this is wrong" on one of
    # those items (`preview`, `report`).
    PREVIEW = enum.auto()
    # An item holding several versions at once (`Item.held`, a conflict): the person keeps
    # one, written as the item's text (`replace_item`), which leaves that version alone.
    RESOLVE = enum.auto()


# What a read-only target refuses though its source can (`SourceTarget.read_only`).
CHANGES = (
    Capability.APPEND
    | Capability.EDIT_ITEM
    | Capability.DELETE_ITEM
    | Capability.RESTORE_ITEM
    | Capability.CLEAR_TARGET
    | Capability.RESOLVE
)


class Unsupported(Exception):
    """The source lacks the capability; `str()` is the one sentence users see."""


@dataclass(frozen=True)
class Subject:
    """Whose memory: the verified identity (never anything the browser sent)."""

    upn: str
    oid: str


@dataclass(frozen=True)
class SourceTarget:
    """One memory of a subject in one source: a CoreAPI document, a legacy store's files."""

    source: str
    key: str  # unique within the source (CoreAPI: scope/agent; legacy: the store's full name)
    title: str
    description: str = ""
    agent: str | None = None  # the agent it belongs to, when configuration says so
    # Why the portal may not change it ("" where it may): a read-only legacy store. The
    # changing capabilities (`CHANGES`) are then offered nowhere for it, this said instead.
    read_only: str = ""
    # True: what agents share with others (the memory-api's `include_shared`), shown to the
    # subject but not kept about them alone: never counted, exported or erased as theirs.
    shared: bool = False


@dataclass(frozen=True)
class Version:
    """One version of an item the source keeps beside its text: an earlier one a change
    replaced (`Item.history`), or one of several held at once (`Item.held`)."""

    text: str
    created: dt.datetime | None = None
    replaced: dt.datetime | None = None


@dataclass(frozen=True)
class Item:
    """One item of a target: a CoreAPI entry, a legacy file. `text` None = not loaded."""

    key: str  # unique within the target (legacy: the path)
    description: str
    updated: dt.datetime | None
    text: str | None = None
    version: str | None = None  # for conditional writes, where the source has them
    has_text: bool = True  # False: the source says the item is empty (without loading it)
    # Earlier versions the source still keeps, oldest first, where its read returns them.
    history: tuple[Version, ...] = ()
    # The versions it holds at once where there are several (a conflict: RESOLVE).
    held: tuple[Version, ...] = ()


@dataclass(frozen=True)
class ItemsPage:
    target: SourceTarget
    items: tuple[Item, ...]
    next_cursor: str | None = None


@dataclass(frozen=True)
class Outcome:
    """One row of a clear or an erasure: what happened to one target or item, and why."""

    target: SourceTarget | None
    key: str
    result: str  # "erased" | "partly" | "not possible" | "failed"
    reason: str = ""
    # A target's row: how many of its items were erased, of how many (None: not known).
    erased: int = 0
    total: int | None = None
    # How many items a read-back after the erasure found still there (None: not read back).
    left: int | None = None


@dataclass(frozen=True)
class Erasure:
    outcomes: tuple[Outcome, ...] = field(default_factory=tuple)
    read_at: str = ""  # when the erasure was read back (ISO 8601; "": it was not)


@dataclass(frozen=True)
class ExportedFile:
    """One file a source adds to "Export everything": its name inside the source's folder,
    its markdown, the target it came from, and the version of each item in it (item key ->
    version token), which an erasure after the export must still find."""

    name: str
    text: str
    target: str = ""
    versions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Origin:
    """Where a previewed item came from, as the source records it (any part may be unknown)."""

    service: str | None = None
    event: str | None = None
    observed: dt.datetime | None = None
    writer: str | None = None


@dataclass(frozen=True)
class PreviewItem:
    """One item an agent is given for a question, ranked: what it says, how the source
    files and weighs it, when an agent last used it, and where it came from."""

    key: str
    text: str
    category: str = ""
    importance: float | None = None
    relevance: float | None = None
    last_used: dt.datetime | None = None
    origin: Origin | None = None


class PreviewState(enum.StrEnum):
    FULL = "full"
    DEGRADED = "degraded"  # memory answered, in a reduced mode
    PASSTHROUGH = "passthrough"  # the agent went on without memory
    BLOCKED = "blocked"  # memory refused to answer for now


@dataclass(frozen=True)
class Preview:
    """What a target's agent is given about a person for one question: `context`, the exact
    text the agent reads, and the top `limit` items behind it (never everything the source
    keeps). `reference` is the source's name for this answer, which a report names ("":
    nothing to report on); `notice` the source's sentence when `state` is not FULL;
    `clarification` a question an agent will ask the person in a conversation ("": none)."""

    target: SourceTarget
    question: str
    context: str
    items: tuple[PreviewItem, ...]
    limit: int
    reference: str = ""
    state: PreviewState = PreviewState.FULL
    notice: str = ""
    clarification: str = ""


# What a deletion request's export kept of a source, for its erasure: target -> item ->
# version token (None: the source was not in the export, so nothing is erased).
type Exported = dict[str, dict[str, str]] | None


@runtime_checkable
class Steps(Protocol):
    """A source's audited steps over everything a person has in it: what requests that
    cover every source ("Export everything", support's deletion request) call. Each raises
    the source's `SourceError` when the source as a whole cannot be reached; what one
    target could not do is a row of its result instead."""

    def plan(self, actor: Actor) -> Erasure:
        """What an erasure would cover, changing nothing and reading no contents: a row per
        target, "to erase" with its items counted (`total`), or "not possible" and why
        (a target known to hold memory the portal cannot reach, with whom to ask)."""
        ...

    def export_all(self, actor: Actor) -> list[ExportedFile]: ...

    def erase_all(self, actor: Actor, exported: Exported) -> Erasure:
        """Erases what `exported` handed over and is unchanged since: a row per target,
        erased / partly / changed / not possible / failed, and why."""
        ...


@dataclass(frozen=True)
class Source:
    """A memory system as the registry holds it (`memory_ui.sources.registry`): a short
    `name` (kept on every audit event), what people read (`title`, a one-line
    `description`), whether it is being turned down, what it can do (`capabilities`, with
    one sentence per missing one in `missing`), and its `steps`. A source that no person's
    memory can be reached in has no capability and no steps, only `unreachable`: why, and
    whom to ask (`owner`). `primary`: the source the portal's own memory pages and restorable
    archive are built on; `section`: the URL name of its lazy section on the dashboard
    where it has pages of its own, else `backend` serves the generic source pages."""

    name: str
    title: str
    description: str
    capabilities: Capability = Capability.NONE
    missing: dict[Capability, str] = field(default_factory=dict)
    turned_down: bool = False
    primary: bool = False
    steps: Steps | None = None
    section: str = ""
    unreachable: str = ""
    owner: str = ""
    # Why it cannot list, said to support (their overview of a person): set it where the
    # sentence pages show the person (`cannot_list`) speaks to them ("" where it serves both).
    cannot_list_to_support: str = ""
    # Whom to ask about memory in this system the portal was never told of ("": none).
    others_note: str = ""
    items: tuple[str, str] = ("item", "items")  # what one of its items is called, and many
    targets: tuple[str, str] = ("memory", "memories")  # and one of its targets, and many
    # How a sentence names the system ("the older system"), where a target's name alone
    # does not say which keeps it: pages then say "<target> in <system>".
    system: str = ""
    # What a target is in that system ("the memory store"), where people may need its key
    # (support, an administrator): pages show the key behind "Details". "": they need not.
    key_name: str = ""
    # What its pages say first, beside "being turned down" where it is.
    notice: str = ""
    # What a change and a delete do to what the source keeps, where it keeps more than the
    # item shows (an earlier version, a deleted item): said beside each ("" where nothing).
    edit_note: str = ""
    delete_note: str = ""
    # What an Undo or a restore of a deleted item brings back where it is not that item
    # (a new one, another key), said beside each ("" where the item itself comes back).
    restore_note: str = ""
    # The adapter for one actor: what search, the generic source pages (unless it has a
    # `section` of its own) and the move into the primary source read through.
    backend: Callable[[Actor], MemoryBackend] | None = None
    # The primary source's agent-memory store, which the portal's own memory pages use.
    memories: AgentMemoryStore | None = None
    # Where its own pages were before it had the generic ones ("memory/<prefix>"): their
    # addresses redirect to the generic pages, so bookmarks keep working.
    moved_from: str = ""
    # The targets configuration names, known without asking the source (Activity links a
    # past event only to a target the portal still has).
    target_keys: frozenset[str] = frozenset()

    def missing_reason(self, capability: Capability) -> str:
        return self.missing.get(capability, f"This is not possible in {self.title}.")

    def can(self, capability: Capability) -> bool:
        return capability in self.capabilities

    @property
    def kept_in(self) -> str:
        """What follows a target's name to say which system keeps it ("" where nothing)."""
        return f"in {self.system}" if self.system else ""

    @property
    def cannot_list(self) -> str:
        """Why its items cannot be listed ("" where they can): what pages say instead of
        an empty list, which would claim it keeps nothing."""
        return "" if self.can(Capability.LIST) else self.missing_reason(Capability.LIST)

    @property
    def previews(self) -> bool:
        return self.can(Capability.PREVIEW)

    @property
    def invitation(self) -> str:
        """The dashboard section's link, before its contents load."""
        if self.turned_down:
            return "Show what older systems, being turned down, keep about you"
        return f"Show what {self.title} keeps about you"


@runtime_checkable
class MemoryBackend(Protocol):
    """Required: `source`, `capabilities`, `missing_reason`, `list_targets`. The optional
    operations below raise `Unsupported` unless `capabilities` declares them (`read_page`
    and `read_item`: LIST; `preview` and `report`: PREVIEW)."""

    source: str
    capabilities: Capability

    def missing_reason(self, capability: Capability) -> str: ...

    def list_targets(self, subject: Subject) -> list[SourceTarget]: ...

    def read_page(
        self, subject: Subject, target: SourceTarget, cursor: str | None = None
    ) -> ItemsPage: ...

    def read_item(self, subject: Subject, target: SourceTarget, key: str) -> Item: ...

    def search(self, subject: Subject, query: str) -> list[tuple[SourceTarget, Item]]: ...

    def append(self, subject: Subject, target: SourceTarget, text: str, reason: str) -> Item: ...

    def edit_item(
        self, subject: Subject, target: SourceTarget, key: str, old: str, new: str
    ) -> Item: ...

    def replace_item(self, subject: Subject, target: SourceTarget, key: str, text: str) -> Item: ...

    def delete_item(self, subject: Subject, target: SourceTarget, key: str) -> Item: ...

    def restore_item(self, subject: Subject, target: SourceTarget, item: Item) -> Item: ...

    def clear_target(self, subject: Subject, target: SourceTarget) -> list[Outcome]: ...

    def erase_subject(self, subject: Subject) -> Erasure: ...

    def export(self, subject: Subject, target: SourceTarget) -> str: ...

    def preview(self, subject: Subject, target: SourceTarget, question: str, limit: int) -> Preview:
        """What the target's agent is given about the subject for `question`: the top
        `limit`. It may change the source's state (when an item was last used, quota), so
        only when a person asks."""
        ...

    def report(
        self, subject: Subject, target: SourceTarget, reference: str, key: str, correction: str
    ) -> str:
        """The subject says item `key` of the preview `reference` is wrong, and what is true.
        The source takes it for correction (nothing is corrected yet); its receipt's id."""
        ...


@runtime_checkable
class TargetFinder(Protocol):
    """A backend that finds one of a subject's targets by key without listing them all
    (pages look up the target a URL names on every request)."""

    def find_target(self, subject: Subject, key: str) -> SourceTarget | None: ...


def require(backend: MemoryBackend, capability: Capability) -> None:
    """Raise Unsupported, with the source's sentence, unless the backend declares it."""
    if capability not in backend.capabilities:
        raise Unsupported(backend.missing_reason(capability))
