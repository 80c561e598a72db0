"""What the legacy memory stores' screens share (`views.legacy`, `views.legacy_changes`),
so no view module imports another: the store from a URL (configured ones only, else 404),
links to a store and its files, a file from `?path=`, a file's entries, which actions a
store offers (`offered`), and the door of every change (`store_action`): an action the
source lacks is a 404, one the store does not let the portal do a 403 page saying so."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import wraps

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode

from memory_ui.sources.legacy import operations as legacy_ops
from memory_ui.sources.legacy.operations import Store
from memory_ui.sources.protocol import Capability, Item
from memory_ui.web.access import user_actor
from memory_ui.web.forms.legacy import LegacyFileForm
from memory_ui.web.htmx import HtmxHttpRequest
from memory_ui.web.offered import Offered
from memory_ui.web.source_pages import agent_titles


def offered(store: Store) -> Offered:
    """What the UI offers for one store (its source's capabilities and its privileges),
    and one sentence per action it does not."""
    return Offered.of(store.allows, store.missing)


def named(store: Store, titles: dict[str, str]) -> Store:
    """`store`, named for people by its agent's display name when `titles` has it."""
    return replace(store, agent_title=titles.get(store.agent or "", ""))


def store_or_404(request: HtmxHttpRequest, key: str) -> Store:
    """One of the configured stores, named for this person, or 404 (no store call for an
    unknown name)."""
    if not legacy_ops.legacy_enabled():
        raise Http404("The legacy memory stores are not configured.")
    store = legacy_ops.legacy_store(user_actor(request), key)
    if store is None:
        raise Http404("No such legacy memory store.")
    return named(store, agent_titles(request))


type StoreView = Callable[[HtmxHttpRequest, Store], HttpResponse]


def store_action(capability: Capability) -> Callable[[StoreView], Callable[..., HttpResponse]]:
    """The view's store, from the URL's `key`, when it allows `capability`: a source
    without it is a 404 (the source's sentence); a store that does not let the portal do
    it (read-only: no WRITE MEMORY STORE) is a 403 page saying so, nothing asked of it."""

    def decorator(view: StoreView) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapper(request: HtmxHttpRequest, key: str) -> HttpResponse:
            found = store_or_404(request, key)
            if capability not in found.capabilities:
                raise Http404(found.missing(capability))
            if found.refuses(capability):
                context = {"store": found, "store_url": store_url(found)}
                context["message"] = found.missing(capability)
                return render(request, "memory_ui/legacy/refused.html", context, status=403)
            return view(request, found)

        return wrapper

    return decorator


def store_url(store: Store) -> str:
    return reverse("legacy_store", args=[store.key])


def file_url(store: Store, path: str, page: str = "legacy_file") -> str:
    return f"{reverse(page, args=[store.key])}?{urlencode({'path': path})}"


def entries_of(item: Item) -> list[tuple[int, str]]:
    """A file's entries as the portal edits them one at a time: its non-blank lines, with
    their line numbers (1-based)."""
    lines = (item.text or "").splitlines()
    return [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]


def read_file(request: HtmxHttpRequest, found: Store) -> tuple[str, Item]:
    """The file named by `?path=` (400 for a path that is not a memory path)."""
    form = LegacyFileForm(request.GET)
    if not form.is_valid():
        raise Http404("Not a memory file path.")
    path = form.cleaned_data["path"]
    return path, legacy_ops.legacy_file_read(user_actor(request), found, path)
