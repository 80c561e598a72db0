"""Deleting an entry or a list item, and Undo (the document as it was, kept briefly in
the session: `stores.undo`).

Every flow works as plain form posts (PRG) and, with htmx, swaps fragments in place;
every change goes through the primary source's store (`registry.memory_store()`), which
checks versions and audits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect

from memory_ui.audit import Action
from memory_ui.documents import entry_label, parse_document, remove_entry, remove_lines
from memory_ui.identity import Actor
from memory_ui.resurfacing import deletions_forget, deletions_record, person_of
from memory_ui.sources.agent_memory import Loaded, Memory, MemoryChanged, NothingToChange, Target
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_source, memory_store
from memory_ui.web import forms
from memory_ui.web.access import on_memory
from memory_ui.web.htmx import (
    HtmxHttpRequest,
)
from memory_ui.web.links import target_url
from memory_ui.web.screens import (
    action_failed,
    agents_unavailable,
    memory_page,
    page_now,
)
from memory_ui.web.stores.undo import (
    UNDO_SECONDS,
    undo_forget,
    undo_record,
    undo_remember,
)

# --- delete an entry or a list item, and Undo ------------------------------------------


@dataclass(frozen=True)
class Removal:
    text: str  # the document without the removed part
    removed: str  # what was removed, to show or re-add after a failed Undo
    label: str  # a few words naming it, for the notice "Deleted “…”. Undo"


def _remove_entry(text: str, data: dict[str, Any]) -> Removal | None:
    entries = parse_document(text).entries
    index = data["index"]
    if index >= len(entries):
        return None
    entry = entries[index]
    label = entry_label(entry.reason or entry.body)
    return Removal(remove_entry(text, index), entry.body, label)


def _remove_list_item(text: str, data: dict[str, Any]) -> Removal | None:
    start, end = data["start"], data["end"]
    # Only whole list items as the page showed them; never an arbitrary range of lines.
    for item in parse_document(text).list_items:
        if (item.start_line, item.end_line) == (start, end):
            return Removal(remove_lines(text, start, end), item.text, entry_label(item.text))
    return None


def _delete(
    request: HtmxHttpRequest,
    actor: Actor,
    target: Target,
    form: forms.DeleteEntryForm | forms.DeleteLinesForm,
    remove: Callable[[str, dict[str, Any]], Removal | None],
    what: str,
    **shown: Any,
) -> HttpResponse:
    """Remove what `remove` finds in the document as it is now, if it is still the version
    the page showed; Undo is offered after."""
    if not form.is_valid():
        messages.error(request, f"Nothing was deleted. {forms.first_error(form)}")
        return page_now(request, target, status=400, **shown)
    removals: list[Removal] = []

    def without(current: Memory) -> str | None:
        removal = remove(current.content_markdown, form.cleaned_data)
        if removal is None:
            return None
        removals.append(removal)
        return removal.text

    try:
        done = memory_store().rewrite(
            actor,
            target,
            without,
            started_from=form.cleaned_data["version"],
            action=Action.DELETE_ENTRY,
            keep_arrivals=True,
        )
    except MemoryChanged as exc:
        return _changed_meanwhile(request, target, exc.current, **shown)
    except NothingToChange as exc:
        messages.error(request, f"Nothing was deleted: that {what} does not exist.")
        return memory_page(request, Loaded(target, exc.current), status=400, **shown)
    except SourceError as exc:
        return action_failed(request, target, exc)
    deletions_record(person_of(actor), memory_source(), [removals[0].removed])
    if done.arrived:
        messages.info(request, done.arrived.notice)
    return _deleted(request, target, done.before, done.after, removals[0], what, shown)


def _deleted(
    request: HtmxHttpRequest,
    target: Target,
    before: Memory,
    after: Memory,
    removal: Removal,
    what: str,
    shown: dict[str, Any],
) -> HttpResponse:
    token = undo_remember(
        request.session, target, before.content_markdown, after, removal.removed, removal.label
    )
    # One notice per delete: with Undo, the notice above the entries (which names what went)
    # says it; a toast as well would say it twice.
    if not token:
        messages.success(request, f"Deleted the {what}. This memory is too large to keep for Undo.")
    if request.htmx:
        return memory_page(
            request, Loaded(target, after), undo_token=token, undo_label=removal.label, **shown
        )
    url = target_url(target)
    return redirect(f"{url}?{urlencode({'undo': token})}" if token else url)


def _changed_meanwhile(
    request: HtmxHttpRequest, target: Target, current: Memory, **shown: Any
) -> HttpResponse:
    messages.warning(
        request,
        "This memory changed since you opened it, so nothing was deleted. Here it is as it is now.",
    )
    return memory_page(request, Loaded(target, current), status=409, **shown)


@on_memory(agents_unavailable, methods=["POST"])
def delete_entry(request: HtmxHttpRequest, actor: Actor, target: Target) -> HttpResponse:
    form = forms.DeleteEntryForm(request.POST)
    return _delete(request, actor, target, form, _remove_entry, "entry")


@on_memory(agents_unavailable, methods=["POST"])
def delete_list_item(request: HtmxHttpRequest, actor: Actor, target: Target) -> HttpResponse:
    form = forms.DeleteLinesForm(request.POST)
    return _delete(request, actor, target, form, _remove_list_item, "item", items_open=True)


@on_memory(agents_unavailable, methods=["POST"])
def undo(request: HtmxHttpRequest, actor: Actor, target: Target) -> HttpResponse:
    """The document as it was before a delete, while nothing else changed it since."""
    form = forms.UndoForm(request.POST)
    token = form.cleaned_data["token"] if form.is_valid() else ""
    record = undo_record(request.session, token, target)
    if record is None:
        messages.error(
            request,
            f"Undo is no longer available (it lasts {UNDO_SECONDS // 60} minutes); "
            "nothing was changed.",
        )
        return page_now(request, target, status=410)
    try:
        done = memory_store().rewrite(
            actor,
            target,
            lambda _: record.before,
            started_from=record.after,
            action=Action.UNDO,
            keep_arrivals=True,
        )
    except MemoryChanged as exc:
        messages.warning(
            request,
            "This memory changed after the delete, so undoing it would lose that change. "
            "Nothing was changed; you can add what you deleted back as a new note.",
        )
        return memory_page(
            request, Loaded(target, exc.current), status=409, undo_conflict=record.removed
        )
    except SourceError as exc:
        return action_failed(request, target, exc)
    undo_forget(request.session, token)
    deletions_forget(person_of(actor), memory_source(), [record.removed])
    messages.success(request, "Restored what you deleted.")
    if done.arrived:
        messages.info(request, done.arrived.notice)
    if request.htmx:
        return memory_page(request, Loaded(target, done.after))
    return redirect(target_url(target))
