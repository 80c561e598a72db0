"""An item's History on the generic source pages: the person's own changes to it (edits,
resolves, deletes, Undos, restores) newest first, each with its diff, and "Restore this
version" for the version before each (kept encrypted for PORTAL_HISTORY_RETENTION_DAYS:
memory_ui/history.py, keyed per item by `sources.item_history`).

A restore is a conditional write through `generic.item_put_back`: over an item that is still
there, only if it is still the version the History showed (else 409, nothing written), the
lines others, agents, added since kept after it; a
deleted item only if it is still gone, by the source's restore, else added again as a new
item, else not offered, with the source's sentence. A read-only target offers none (its
sentence; a post is a 403 page). Only the person's own versions: another's is a 404.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from memory_ui.audit import Action
from memory_ui.history import Change, with_arrivals
from memory_ui.sources import generic
from memory_ui.sources.item_history import item_change, item_changes
from memory_ui.sources.protocol import Capability, Item, SourceError
from memory_ui.web.access import user_actor
from memory_ui.web.forms.sources import SourceItemForm, SourceRestoreForm
from memory_ui.web.history_lines import Happened, your_changes
from memory_ui.web.htmx import HtmxHttpRequest, redirect_to, render_page
from memory_ui.web.screens import not_done
from memory_ui.web.source_pages import Place, source_action

CHANGED = (
    "Nothing was restored: it was changed since this page was shown. Here it is as it is "
    "now: restore again if you still want that version."
)


@dataclass(frozen=True)
class Restoring:
    """What "Restore this version" does to the item here (`does`), or why it is not offered
    (`why_not`, one sentence; `does` is then "")."""

    does: str = ""
    why_not: str = ""


def _restoring(place: Place, there: bool) -> Restoring:
    """What a restore does to an item that is `there` now, or has been deleted."""
    if there:
        if place.allows(Capability.EDIT_ITEM):
            return Restoring("as it was before this change, in place of what it says now")
        return Restoring(why_not=place.refusal(Capability.EDIT_ITEM))
    if place.allows(Capability.RESTORE_ITEM):
        note = place.source.restore_note
        return Restoring(
            "brought back as it was before this change" + (f": {note}" if note else "")
        )
    if place.allows(Capability.APPEND):
        return Restoring(
            f"added again as a new {place.source.items[0]}, as it was before this change"
        )
    return Restoring(why_not=place.refusal(Capability.RESTORE_ITEM))


@dataclass(frozen=True)
class ItemHistory:
    """One item's History page: the item as it is now (None: deleted), the person's changes
    to it, and what a restore does here."""

    place: Place
    key: str
    current: Item | None
    happened: list[Happened]
    restoring: Restoring
    version: str  # of the item as shown ("": shown deleted): what a restore starts from
    gone_by: str = ""  # not there now: the person's latest change to it (an audit action)


_GONE = {
    Action.RESTORE_VERSION: "you brought it back already, under another key.",
    Action.UNDO: "you brought it back already, under another key.",
    "": "it is not here now, and your latest change to it was not its delete.",
}


def _retention() -> dict[str, int]:
    return {"retention_days": settings.PORTAL_HISTORY_RETENTION_DAYS}


def _current(request: HtmxHttpRequest, place: Place, key: str) -> Item | None:
    """The item as it is now; None when the source says it is not there (deleted)."""
    assert place.target is not None
    try:
        return generic.item_read(user_actor(request), place.backend, place.target, key)
    except SourceError as exc:
        if exc.portal_status == 404:
            return None
        raise


def _page(
    request: HtmxHttpRequest, place: Place, key: str, error: str = "", status: int = 200
) -> HttpResponse:
    assert place.target is not None
    upn = user_actor(request).who.upn
    changes = item_changes(upn, place.source.name, place.target, key)
    try:
        current = _current(request, place, key)
    except SourceError as exc:
        context = {"place": place, "key": key, "load_error": exc, "error": error} | _retention()
        template = "memory_ui/sources/history.html"
        return render_page(request, template, "history", context, exc.portal_status)
    if current is None and not changes:
        raise Http404("No such item.")
    restoring = _restoring(place, current is not None)
    gone_by = changes[0].action if current is None and changes else ""
    if gone_by and gone_by != Action.DELETE_ENTRY:
        # Not deleted by the person last: brought back under another key, or gone some
        # other way; nothing here to put back (a restore would be refused, 409).
        restoring = Restoring(why_not=_GONE.get(gone_by, _GONE[""]))
    page = ItemHistory(
        place,
        key,
        current,
        your_changes(changes),
        restoring,
        generic.version_of(current) if current is not None else "",
        gone_by,
    )
    context = {"place": place, "page": page, "key": key, "error": error} | _retention()
    return render_page(request, "memory_ui/sources/history.html", "history", context, status)


@require_GET
@source_action(None)
def history(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """The History of one item of the person's, there now or deleted within the retention."""
    form = SourceItemForm(request.GET)
    if not form.is_valid():
        raise Http404("No such item.")
    return _page(request, place, form.cleaned_data["item"])


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def _with_arrivals(change: Change, since: list[Change]) -> Callable[[str], str]:
    """The version before `change`, followed by the lines of the item as it is now that
    others, agents, added or rewrote after it (`history.with_arrivals`: a file's entries
    are its lines, as its page edits them), verbatim. An item of one line (a memory an
    agent superseded) is one value, not lines added: it goes back to that version alone,
    as the History showed it."""

    def restored(now: str) -> str:
        if len(_lines(now)) <= 1:
            return change.before
        added = with_arrivals(change, since, now, _lines)
        if not added:
            return change.before
        return change.before.rstrip("\n") + "\n" + "\n".join(added) + "\n"

    return restored


@require_POST
@source_action(None)
def restore(request: HtmxHttpRequest, place: Place) -> HttpResponse:
    """Put back the version before one of the person's changes to the item (a conditional
    write), then back to the History of the item as restored (a new one where it was added
    again)."""
    assert place.target is not None
    form = SourceRestoreForm(request.POST)
    if not form.is_valid():
        raise Http404("No such version of this item.")
    data, actor = form.cleaned_data, user_actor(request)
    key, version = data["item"], data["version"]
    change = item_change(actor.who.upn, place.source.name, place.target, key, data["change"])
    if change is None or change.unreadable or not change.before:
        raise Http404("No such version of this item.")
    since = [
        c
        for c in item_changes(actor.who.upn, place.source.name, place.target, key)
        if c.id >= change.id
    ]
    restoring = _restoring(place, there=bool(version))
    if not restoring.does:
        if place.target.read_only:
            context = {"place": place, "message": restoring.why_not}
            return render(request, "memory_ui/sources/refused.html", context, status=403)
        raise Http404(restoring.why_not)
    try:
        restored = generic.item_put_back(
            actor, place.backend, place.target, key, _with_arrivals(change, since), version
        )
    except generic.ItemChanged:
        return _page(request, place, key, CHANGED, status=409)
    except SourceError as exc:
        return _page(request, place, key, not_done("Nothing was restored.", exc), exc.portal_status)
    when = f"{change.at:%-d %B %Y, %H:%M} UTC"
    as_new = f" as {restored.key}" if restored.key != key else ""
    messages.success(request, f"Restored {key}{as_new} as it was before your change of {when}.")
    # Added to another item (APPEND), which keeps no change of it: that item's own page.
    appended = restored.key != key and not place.allows(Capability.RESTORE_ITEM)
    page_name = "source_item" if appended else "source_history"
    return redirect_to(request, place.item_url(restored.key, page_name))
