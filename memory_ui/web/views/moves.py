"""Move or copy one entry to another of the person's memories (issue 22): choose where to
and how, see a preview (the entry as it will land, in which memory, what stays behind),
confirm once, undo once.

Each step is a plain GET or POST form, so it all works without JavaScript; with htmx the
panel takes the entry's place on its memory page (as the entry editor does), and once the
move is done the memory as it now is replaces the list, what was done above its entries
(Undo, its result, a retry likewise). Destinations
are only the user's own memories (`all_targets` of their agent list). The domain steps and
their version checks are in `memory_ui.memory.moves`; Undo is the batch delete's
(`stores.batch_undo`), one token for both memories.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from urllib.parse import urlencode, urlsplit

from django.http import Http404, HttpResponse
from django.template.loader import render_to_string
from django.urls import reverse

from memory_ui.documents import Entry, EntryEditError, parse_document
from memory_ui.identity import Actor
from memory_ui.memory.batch import Restored, batch_restore
from memory_ui.memory.moves import (
    DestinationChanged,
    EntryGone,
    EntryMovePlan,
    Mode,
    MoveDone,
    SourceChanged,
    entry_move,
    entry_move_preview,
    entry_remove_moved,
)
from memory_ui.sources.agent_memory import Target, all_targets
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_store
from memory_ui.web.access import as_named, on_memory, signed_in, user_agents
from memory_ui.web.errors import AgentsUnlisted
from memory_ui.web.forms import TargetForm, first_error
from memory_ui.web.forms.moves import MoveChoiceForm, MoveConfirmForm, MoveRetryForm
from memory_ui.web.htmx import (
    HtmxHttpRequest,
    into_memory_content,
    render_fragment,
    render_page,
    replacing,
)
from memory_ui.web.links import entry_url, target_query, target_url
from memory_ui.web.screens import memory_page
from memory_ui.web.stores.batch_undo import batch_undo_remember, batch_undo_take
from memory_ui.web.stores.claims import submission_claim, submission_release

TEMPLATE = "memory_ui/move.html"


@dataclass
class MoveScreen:
    """What move.html shows for entry `index` of `source`: the chooser (`choices`), the
    `plan` to confirm, what was `done`, what Undo `restored`, or why not (`error`, with
    `missing` when the entry is not there)."""

    source: Target
    index: int
    entry: Entry | None = None
    choices: list[Target] = field(default_factory=list)
    to: str = ""
    mode: str = Mode.MOVE.value
    plan: EntryMovePlan | None = None
    done: MoveDone | None = None
    undo_token: str | None = None
    restored: list[Restored] = field(default_factory=list)
    error: SourceError | str = ""
    missing: bool = False
    retry_version: str = ""  # the source as the preview read it, to finish a move later

    def context(self) -> dict[str, object]:
        values = {f.name: getattr(self, f.name) for f in dataclass_fields(self)}
        query = {**target_query(self.source), "index": self.index}
        return {
            **values,
            "target": self.source,
            "number": self.index + 1,
            "back_url": entry_url(self.source, self.index),
            "move_url": f"{reverse('memory_entry_move')}?{urlencode(query)}",
            "change_url": f"{reverse('memory_entry_move')}?"
            + urlencode({**query, "to": self.to, "mode": self.mode}),
        }


def _render(request: HtmxHttpRequest, screen: MoveScreen, status: int = 200) -> HttpResponse:
    return render_page(request, TEMPLATE, "move_panel", screen.context(), status)


def _answer(
    request: HtmxHttpRequest, actor: Actor, screen: MoveScreen, status: int = 200
) -> HttpResponse:
    """A result (moved, copied, in both, restored) and what is asked from it (Undo, the
    retry): on its memory page, that memory as it now is, the result above its entries and
    the focus on its heading, so the list and its counts show what happened; elsewhere
    (without JavaScript, or the move page opened on its own) the panel."""
    current = request.htmx.current_url_abs_path if request.htmx else None
    if not current or urlsplit(current).path != target_url(screen.source):
        return _render(request, screen, status)
    notice = render_to_string(
        f"{TEMPLATE}#move_notice", {**screen.context(), "in_notice": True}, request=request
    )
    loaded = memory_store().load(actor, screen.source)
    shown = memory_page(request, loaded, status=status, at_entry=screen.index, move_notice=notice)
    return into_memory_content(request, shown)


def _unlisted(request: HtmxHttpRequest, unlisted: AgentsUnlisted) -> HttpResponse:
    """Without the agent list nothing can be chosen or moved: say why, on the panel (or on
    the result above the memory's entries, for its Undo or retry)."""
    named = MoveChoiceForm(request.POST if request.method == "POST" else request.GET)
    screen = MoveScreen(as_named(unlisted.form), _index(named), error=unlisted.error)
    status = unlisted.error.portal_status
    if request.htmx and request.htmx.target == "memory-content":
        context = {**screen.context(), "in_notice": True}
        notice = render_fragment(request, f"{TEMPLATE}#move_notice", context, status)
        return replacing(request, notice, "#move-notice")
    return _render(request, screen, status)


def _index(form: MoveChoiceForm | MoveRetryForm) -> int:
    """The entry the form names (0 when it names none: the form's errors say so)."""
    form.is_valid()
    return form.cleaned_data.get("index") or 0


def _own(request: HtmxHttpRequest, form: TargetForm) -> dict[str, Target]:
    """Every memory of the user's own, by key; `AgentsUnlisted` when CoreAPI can't list
    their agents now."""
    try:
        return {t.key: t for t in all_targets(user_agents(request))}
    except SourceError as exc:
        raise AgentsUnlisted(form, exc) from exc


def _destinations(request: HtmxHttpRequest, form: TargetForm, source: Target) -> dict[str, Target]:
    """Every memory of the user's own but `source`, by key."""
    return {key: t for key, t in _own(request, form).items() if key != source.key}


def _posted(
    request: HtmxHttpRequest, form: MoveConfirmForm | MoveRetryForm, source: Target
) -> Target | None:
    """Where a posted form sends the entry: None when the form is refused (`first_error`
    says why); a destination not of the user's own is a 404."""
    if form.errors:
        return None
    choices = _destinations(request, form, source)
    if form.cleaned_data["to"] not in choices:
        raise Http404("No memory of yours has that name.")
    return choices[form.cleaned_data["to"]]


@on_memory(_unlisted, methods=("GET",))
def move(request: HtmxHttpRequest, actor: Actor, source: Target) -> HttpResponse:
    """The chooser (where to, move or copy), or with `step`, `to` and `mode` the preview."""
    form = MoveChoiceForm(request.GET)
    index = _index(form)
    if form.errors:
        return _render(request, MoveScreen(source, index, error=first_error(form)), 400)
    choices = _destinations(request, form, source)
    data = form.cleaned_data
    screen = MoveScreen(source, index, choices=list(choices.values()), to=data["to"])
    screen.mode = data["mode"] or Mode.MOVE.value
    try:
        if form.chosen:
            if data["to"] not in choices:
                raise Http404("No memory of yours has that name.")
            screen.plan = entry_move_preview(
                actor, source, index, choices[data["to"]], Mode(data["mode"])
            )
            screen.entry = screen.plan.entry
        else:
            entries = parse_document(memory_store().read(actor, source).content_markdown).entries
            if not 0 <= index < len(entries):
                raise EntryGone
            screen.entry = entries[index]
    except EntryGone:
        return _render(request, MoveScreen(source, index, missing=True), 404)
    except EntryEditError as exc:
        screen.error = str(exc)
        return _render(request, screen, 400)
    except SourceError as exc:
        screen.error = exc
        return _render(request, screen, exc.portal_status)
    return _render(request, screen)


@on_memory(_unlisted, methods=("POST",))
def confirm(request: HtmxHttpRequest, actor: Actor, source: Target) -> HttpResponse:
    """Move or copy as the preview showed it: both memories checked against the versions
    it read; each confirmation works once (its submission key)."""
    form = MoveConfirmForm(request.POST)
    index, destination = _index(form), _posted(request, form, source)
    if destination is None:
        return _render(request, MoveScreen(source, index, error=first_error(form)), 400)
    data = form.cleaned_data
    mode = Mode(data["mode"])
    screen = MoveScreen(source, index, to=data["to"], mode=mode.value)
    screen.retry_version = data["version"].token()
    owner = signed_in(request).oid
    if not submission_claim(owner, data["submission"]):
        screen.error = "This confirmation was already sent; nothing more was done."
        return _render(request, screen, 409)
    try:
        done = entry_move(
            actor,
            source,
            index,
            data["version"],
            destination,
            data["to_version"],
            mode,
        )
    except (SourceChanged, DestinationChanged, EntryGone, EntryEditError) as exc:
        submission_release(owner, data["submission"])
        screen.error = _refused(exc, source, destination)
        return _render(request, screen, 400 if isinstance(exc, EntryEditError) else 409)
    except SourceError as exc:
        if not exc.outcome_unknown:
            submission_release(owner, data["submission"])
        screen.error = exc
        return _render(request, screen, exc.portal_status)
    return _finished(request, actor, screen, done)


def _refused(exc: Exception, source: Target, destination: Target) -> str:
    """Why nothing was written, and what to do."""
    if isinstance(exc, SourceChanged):
        return f"{source.label} changed since the preview, so nothing was done. Look again."
    if isinstance(exc, DestinationChanged):
        return f"{destination.label} changed since the preview, so nothing was done. Look again."
    if isinstance(exc, EntryGone):
        return "That entry is not there any more (the memory changed). Nothing was done."
    return f"Nothing was done. {exc}"


def _finished(
    request: HtmxHttpRequest, actor: Actor, screen: MoveScreen, done: MoveDone
) -> HttpResponse:
    """The outcome, with one Undo for every memory it changed."""
    screen.done = done
    screen.undo_token = batch_undo_remember(request.session, done.undo_records())
    status = 200
    if done.removal_error is not None:
        status = done.removal_error.portal_status
    elif done.removal_changed:
        status = 409
    return _answer(request, actor, screen, status)


@on_memory(_unlisted, methods=("POST",))
def retry(request: HtmxHttpRequest, actor: Actor, source: Target) -> HttpResponse:
    """Finish a move that left the entry in both memories: remove it from the source, once
    it is found where it went."""
    form = MoveRetryForm(request.POST)
    index, destination = _index(form), _posted(request, form, source)
    if destination is None:
        return _render(request, MoveScreen(source, index, error=first_error(form)), 400)
    data = form.cleaned_data
    screen = MoveScreen(source, index, to=data["to"], retry_version=data["version"].token())
    try:
        done = entry_remove_moved(actor, source, index, data["version"], destination)
    except SourceChanged:
        screen.error = (
            f"{source.label} changed since the move, so the entry was not removed from it: "
            f"it is still in both. Delete it from {source.label} if you want."
        )
        return _answer(request, actor, screen, 409)
    except EntryGone:
        screen.error = (
            f"The entry is not in both memories any more (it is not in {destination.label}, "
            f"or not in {source.label}), so nothing was removed."
        )
        return _answer(request, actor, screen, 409)
    except SourceError as exc:
        screen.error = exc
        return _answer(request, actor, screen, exc.portal_status)
    return _finished(request, actor, screen, done)


@on_memory(_unlisted, methods=("POST",))
def undo(request: HtmxHttpRequest, actor: Actor, source: Target) -> HttpResponse:
    """One Undo for the move: each memory back as it was, if nothing changed it since."""
    form = MoveChoiceForm(request.POST)
    screen = MoveScreen(source, _index(form))
    targets = _own(request, form)
    records = batch_undo_take(request.session, request.POST.get("token", ""))
    if records is None:
        screen.error = "Undo is no longer available; nothing was changed."
        return _answer(request, actor, screen, 410)
    screen.restored = [
        batch_restore(actor, targets[r.target_key], r.before, r.after, r.count)
        for r in records
        if r.target_key in targets
    ]
    status = 200 if all(r.done for r in screen.restored) else 409
    return _answer(request, actor, screen, status)
