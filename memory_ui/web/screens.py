"""What several screens show alike, so no view module imports another: why a change
failed (`not_done`), what a save did (`saved_notices`), a memory's page after a change as
on a visit (`memory_context`, `memory_page`, `page_now`, `changed`, `action_failed`), the
answer when the user's agents could not be listed (`agents_unavailable`), every memory of
the user (`every_memory`), and the page for a CoreAPI failure before a form could be built
(`failure_page`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse

from memory_ui.models import MemoryVisit
from memory_ui.resurfacing import Deletions, deletions_of
from memory_ui.sources.agent_memory import Loaded, Memory, Rewritten, Target, all_targets
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_source, memory_store
from memory_ui.visits import marked_new, visit_of
from memory_ui.web.access import signed_in, user_actor, user_agents
from memory_ui.web.errors import AgentsUnlisted
from memory_ui.web.forms import SearchForm, ViewForm
from memory_ui.web.htmx import (
    HtmxHttpRequest,
    as_whole_page,
    no_swap,
    render_fragment,
    render_page,
)
from memory_ui.web.links import target_query, target_url
from memory_ui.web.parts import PartView, joined, parts_html, returned
from memory_ui.web.stores.undo import undo_record


def not_done(prefix: str, error: SourceError) -> str:
    """Why a change failed: "Nothing was …" only when that is certain (a write that got
    no answer may still be applied)."""
    return error.message if error.outcome_unknown else f"{prefix} {error.message}"


def saved_notices(request: HtmxHttpRequest, done: Rewritten, saved: str) -> None:
    """After an editor's save went through: `saved`, what arrived meanwhile and was kept,
    and whether something else changed the memory right after."""
    messages.success(request, saved)
    if done.arrived:
        messages.info(request, done.arrived.notice)
    if done.moved:
        messages.warning(
            request, "Something else changed this memory right after you saved: check it below."
        )


@dataclass(frozen=True)
class Pager:
    """The links from one page of a memory to the next and the previous ("" when there is
    none), worked out here so the template only places them."""

    next_url: str = ""
    previous_url: str = ""

    @classmethod
    def between(cls, prefix: str, number: int, count: int, first_url: str = "") -> Pager:
        previous = ""
        if number > 1:
            previous = first_url if number == 2 and first_url else f"{prefix}{number - 1}"
        return cls(f"{prefix}{number + 1}" if number < count else "", previous)


def memory_context(
    loaded: Loaded,
    view: str = "rendered",
    page: int | None = None,
    entry: int | None = None,
    new: frozenset[int] = frozenset(),
    deletions: Deletions | None = None,
    focus: int | None = None,
) -> dict[str, object]:
    """What memory.html shows of one memory (after a change as well as on a visit): one
    page of it (`memory_ui.documents.paging`), the one holding `entry` when that is given,
    with the entries in `new` marked new since the last visit, those in `deletions`
    (what the person deleted before) marked as come back, and `focus` (the entry just
    saved) focused."""
    target = loaded.target
    memory_url = target_url(target)  # one reverse() for the page's every link to itself
    context: dict[str, object] = {
        "target": target,
        "scope": target.scope,
        "agent": target.agent,
        "title": target.title,
        "memory": loaded.memory,
        "error": loaded.error,
        "view": view,
        "memory_url": memory_url,
        "new_count": len(new),
    }
    prepared = loaded.prepared
    if prepared is not None:
        number = page or (prepared.page_of_entry(entry) if entry is not None else 1)
        context["document"] = prepared.document
        context["rewritable"] = loaded.rewritable
        if view == "raw":
            raw = context["raw"] = prepared.raw_page(number) or prepared.raw_page(1)
            if raw is not None:
                context["pager"] = Pager.between(
                    f"{memory_url}?view=raw&page=", raw.number, raw.count
                )
        else:
            page = context["page"] = prepared.page(number) or prepared.page(1)
            if page is not None:
                # Page 1 is the memory's own address (no ?page=1).
                context["pager"] = Pager.between(
                    f"{memory_url}?page=",
                    page.number,
                    page.number + 1 if page.has_next else page.number,
                    first_url=memory_url,
                )
            deletable = target.scope != "combined" and loaded.rewritable
            # Single entries can be edited, moved, deleted and ticked for /memory/select's preview.
            selectable = deletable and prepared.document.structured
            edit_url = move_url = ""
            if selectable:
                edit_url = f"{reverse('memory_entry_edit')}?{urlencode(target_query(target))}"
                move_url = f"{reverse('memory_entry_move')}?{urlencode(target_query(target))}"
            pick = target.key if selectable else ""
            shown = PartView(memory_url, editable=selectable, pick=pick)
            cards = parts_html(prepared, page, shown, new, focus)
            if deletions is not None:
                cards = returned(cards, deletions, memory_source())
            context["cards"], context["cards_html"] = cards, joined(cards)
            context["selectable"] = selectable
            # The one menu every entry's Actions link opens (memory.html), filled by portal.js.
            context["entry_edit_url"], context["entry_move_url"] = edit_url, move_url
            context["search_choice"] = SearchForm.choice(target)
    return context


def memory_page(
    request: HtmxHttpRequest,
    loaded: Loaded,
    *,
    status: int = 200,
    at_entry: int | None = None,
    focus_entry: int | None = None,
    visit: MemoryVisit | None = None,
    **extra: object,
) -> HttpResponse:
    """The memory page, or for htmx its #memory-content fragment, or for "Show more" the
    next entries only. `at_entry`: the page holding that entry, whatever the request asked
    (after a change made in the entry's place); `focus_entry`: the entry focused there.
    `visit`: the one just recorded, if any (else it is looked up)."""
    if loaded.error is not None:
        status = max(status, loaded.error.portal_status)
    if visit is None:
        visit = visit_of(signed_in(request).oid, loaded.key)
    new = frozenset(e.index for e in marked_new(loaded, visit))
    shown = ViewForm.chosen(request.GET if at_entry is None else {"entry": at_entry})
    # One query for what the person deleted before, whatever the page shows.
    deletions = deletions_of(signed_in(request).upn)
    context = {
        **memory_context(loaded, **shown, new=new, deletions=deletions, focus=focus_entry),
        **extra,
    }
    undo = request.GET.get("undo", "")
    if undo and "undo_label" not in extra:
        # After a delete without JavaScript: the notice names what went, from the session
        # (never from the URL, which would carry memory content into logs).
        record = undo_record(request.session, undo, loaded.target)
        context["undo_label"] = record.label if record else ""
    if request.htmx and request.htmx.target == "show-more" and loaded.error is None:
        return render_fragment(request, "memory_ui/memory.html#parts", context)
    return render_page(request, "memory_ui/memory.html", "content", context, status=status)


def failure_page(
    request: HtmxHttpRequest, error: SourceError, back_url: str, what: str, kept_text: str = ""
) -> HttpResponse:
    """CoreAPI failed before the page could be built; `kept_text` is what the user typed."""
    response = render(
        request,
        "memory_ui/transfer_error.html",
        {"error": error, "back_url": back_url, "what": what, "kept_text": kept_text},
        status=error.portal_status,
    )
    return as_whole_page(request, response)


# --- after a change (changes, deletes) ------------------------------------------------


def agents_unavailable(request: HtmxHttpRequest, unlisted: AgentsUnlisted) -> HttpResponse:
    """The user's agents could not be listed, so no agent memory can be changed now."""
    form, error = unlisted.form, unlisted.error
    messages.error(request, f"Nothing was changed. {error.message}")
    if request.htmx:
        return no_swap(error.portal_status)
    return render(
        request,
        "memory_ui/memory.html",
        {"error": error, "title": "Your memory", "scope": form.data.get("scope")},
        status=error.portal_status,
    )


def every_memory(request: HtmxHttpRequest) -> list[Loaded]:
    """Every memory of the user (their own and each agent's they can read), read with one
    fan-out; SourceError when their agents could not be listed."""
    return memory_store().load_many(user_actor(request), all_targets(user_agents(request)))


def page_now(
    request: HtmxHttpRequest, target: Target, *, status: int = 200, **extra: Any
) -> HttpResponse:
    """The memory page (for htmx its #memory-content) as CoreAPI has it now."""
    return memory_page(
        request, memory_store().load(user_actor(request), target), status=status, **extra
    )


def changed(request: HtmxHttpRequest, target: Target, memory: Memory, **extra: Any):
    """For htmx: the updated #memory-content, and the change panel closed (out of band)."""
    deletions = deletions_of(signed_in(request).upn)
    context = {**memory_context(Loaded(target, memory), deletions=deletions), **extra}
    return render_fragment(request, "memory_ui/memory_changed.html", context)


def action_failed(request: HtmxHttpRequest, target: Target, exc: SourceError) -> HttpResponse:
    """CoreAPI refused or failed a change: say so and leave the page as it was."""
    messages.error(request, not_done("Nothing was changed.", exc))
    if request.htmx:
        return no_swap(exc.portal_status)  # the toast is the whole answer
    return page_now(request, target, status=exc.portal_status)
