"""Editing one entry in place: its text and reason, with a live preview and the version
check. Only that entry's lines change (`documents.replace_entry`); the rest of the
document is written back as it was. Not offered on combined pages (read-only) or for a
memory too large to write back in one request. As a page of its own it is the entry's page
(where its Actions link goes without JavaScript), so it offers Move or copy and Delete too."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from datetime import datetime
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET

from memory_ui.documents import Entry, EntryEditError, parse_document, replace_entry
from memory_ui.documents.versions import Version
from memory_ui.identity import Actor
from memory_ui.resurfacing import deletions_of, person_of
from memory_ui.sources.agent_memory import Loaded, Memory, MemoryChanged, NothingToChange, Target
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_source, memory_store
from memory_ui.web import forms
from memory_ui.web.access import as_named, on_memory
from memory_ui.web.errors import AgentsUnlisted
from memory_ui.web.htmx import HtmxHttpRequest, into_memory_content, render_page
from memory_ui.web.links import entry_url, target_query
from memory_ui.web.screens import memory_page, not_done, saved_notices


@dataclass
class EntryPage:
    """What entry_edit.html shows of entry `index` of one memory: the draft and reason
    (started from `version`), the `entry` as it is stored, and at most one of: why the
    memory could not be loaded, why nothing was saved (`error`, with the `form`'s field
    errors), a conflict, that the entry is `missing`, or that the memory is too large
    (`too_large` bytes) to rewrite. `came_back`: when the person deleted the entry before,
    if it came back (its Delete reads "Delete again")."""

    target: Target
    index: int
    draft: str = ""
    reason: str = ""
    version: str = ""
    entry: Entry | None = None
    form: forms.EntryEditForm | None = None
    load_error: SourceError | None = None
    error: str = ""
    conflict: bool = False
    missing: bool = False
    too_large: int | None = None
    came_back: datetime | None = None

    def editor(self) -> forms.EntryEditForm:
        """The form as the editor shows it: as posted (with its errors) or else the draft,
        its ids named by the entry; the focus on the text unless an alert is shown."""
        data = self.form.data if self.form is not None else None
        initial = {"content": self.draft, "reason": self.reason}
        form = forms.EntryEditForm(data, initial=initial, index=self.index)
        if self.conflict or self.error:
            form.focus_alert()
        return form

    def context(self) -> dict[str, object]:
        # The template reads the fields by name; the preview starts as the draft.
        fields = {field.name: getattr(self, field.name) for field in dataclass_fields(self)}
        back = entry_url(self.target, self.index)
        move = {**target_query(self.target), "index": self.index}
        return {
            **fields,
            "form": self.editor(),
            "number": self.index + 1,
            "preview": self.draft,
            "back_url": back,
            "move_url": f"{reverse('memory_entry_move')}?{urlencode(move)}",
        }


def _render(request: HtmxHttpRequest, page: EntryPage, *, status: int = 200) -> HttpResponse:
    context = page.context()
    return render_page(request, "memory_ui/entry_edit.html", "entry_editor", context, status)


def _entry_of(loaded: Loaded, index: int) -> Entry | None:
    document = loaded.document
    if document is None or not 0 <= index < len(document.entries):
        return None
    return document.entries[index]


def _entry_unlisted(request: HtmxHttpRequest, unlisted: AgentsUnlisted) -> HttpResponse:
    """Without the agent list: the entry form for the memory as the request named it, with
    what was typed (after a POST) and why nothing was saved."""
    target, error = as_named(unlisted.form), unlisted.error
    form = forms.EntryEditForm(request.POST) if request.method == "POST" else None
    index = _index(form or forms.EntryForm(request.GET))
    if form is None:
        page = EntryPage(target, index, load_error=error)
    else:
        page = EntryPage(target, index, error=f"Nothing was saved. {error.message}", **form.typed())
    return _render(request, page, status=error.portal_status)


def _index(form: forms.EntryForm) -> int:
    """Which entry the request names (0 when it names none: the page says it is missing)."""
    form.is_valid()
    return form.cleaned_data.get("index") or 0


@require_GET
@login_required
def entry_page(
    request: HtmxHttpRequest, scope: str, index: int, agent_name: str = ""
) -> HttpResponse:
    """An entry's own address, `<its memory's page>/<index>`: the href of its Actions link,
    fifty times a memory page, so shorter than the editor's query it leads to (the editor
    checks the memory as for any other request)."""
    query = {"scope": scope, **({"agent": agent_name} if agent_name else {}), "index": index}
    return redirect(f"{reverse('memory_entry_edit')}?{urlencode(query)}")


@on_memory(_entry_unlisted)
def entry_edit(request: HtmxHttpRequest, actor: Actor, target: Target) -> HttpResponse:
    """The entry's editor (GET), then a preview or a save."""
    if request.method == "GET":
        return _start(request, actor, target)
    form = forms.EntryEditForm(request.POST)
    typed = form.typed()  # whatever happens below, what was typed goes back as typed
    index = _index(form)
    if form.errors:
        error = f"Nothing was saved. {forms.first_error(form)}"
        return _render(
            request, EntryPage(target, index, error=error, form=form, **typed), status=400
        )
    if form.cleaned_data["action"] == "preview":
        return _render(request, EntryPage(target, index, **typed))
    return _save(request, actor, target, form)


def _start(request: HtmxHttpRequest, actor: Actor, target: Target) -> HttpResponse:
    form = forms.EntryForm(request.GET)
    index = _index(form)
    if form.errors:
        return _render(request, EntryPage(target, index, missing=True), status=400)
    loaded = memory_store().load(actor, target)
    if loaded.error is not None:
        page = EntryPage(target, index, load_error=loaded.error)
        return _render(request, page, status=loaded.error.portal_status)
    if not loaded.rewritable:
        return _render(request, EntryPage(target, index, too_large=loaded.size_bytes), status=413)
    entry = _entry_of(loaded, index)
    if entry is None:
        return _render(request, EntryPage(target, index, missing=True), status=404)
    assert loaded.memory is not None
    version = Version.of(loaded.memory).token()
    came_back = deletions_of(person_of(actor)).came_back(memory_source(), entry.body)
    page = EntryPage(
        target, index, entry.body, entry.reason or "", version, entry=entry, came_back=came_back
    )
    return _render(request, page)


def _save(
    request: HtmxHttpRequest, actor: Actor, target: Target, form: forms.EntryEditForm
) -> HttpResponse:
    data, typed = form.cleaned_data, form.typed()
    index = data["index"]

    def with_entry_replaced(current: Memory) -> str | None:
        if index >= len(parse_document(current.content_markdown).entries):
            return None
        return replace_entry(current.content_markdown, index, data["content"], data["reason"])

    try:
        done = memory_store().rewrite(
            actor,
            target,
            with_entry_replaced,
            started_from=data["version"],
            keep_arrivals=True,
        )
    except EntryEditError as exc:
        page = EntryPage(target, index, error=f"Nothing was saved. {exc}", **typed)
        return _render(request, page, status=400)
    except MemoryChanged as exc:
        # The draft stays; the entry as it is now is shown, and saving again replaces it.
        now = _entry_of(Loaded(target, exc.current), index)
        typed = {**typed, "version": Version.of(exc.current).token()}
        return _render(
            request, EntryPage(target, index, entry=now, conflict=True, **typed), status=409
        )
    except SourceError as exc:
        error = not_done("Nothing was saved.", exc)
        return _render(
            request, EntryPage(target, index, error=error, **typed), status=exc.portal_status
        )
    except NothingToChange:
        return _render(request, EntryPage(target, index, missing=True), status=404)
    saved_notices(request, done, "Saved the entry.")
    if not request.htmx:
        return redirect(entry_url(target, index))
    # Saved in place: the memory as it now is, the entry on its page and focused (if
    # something else changed the memory right after, as it is now: the notice says so).
    now = memory_store().load(actor, target) if done.moved else Loaded(target, done.after)
    response = memory_page(request, now, at_entry=index, focus_entry=index)
    return into_memory_content(request, response)
