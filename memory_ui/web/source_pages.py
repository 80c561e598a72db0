"""What every page of a memory system beside the primary one shares (the generic source
pages in `views.sources`, `views.source_changes` and `views.source_move`; search and
Activity): the source from a URL (configured ones with an adapter only, else 404), the
person's target from the request's `target` (looked up among theirs, else 404), named for
people (`named`), links to a target's and an item's page, and the door of every action
(`source_action`): an action the source lacks is a 404 carrying its sentence, one the target
does not let the portal do (read only) a 403 page saying so, nothing asked of the source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import wraps
from urllib.parse import quote

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode

from memory_ui import auth
from memory_ui.sources import generic, registry
from memory_ui.sources.protocol import (
    CHANGES,
    Capability,
    MemoryBackend,
    Source,
    SourceError,
    SourceTarget,
)
from memory_ui.web.access import user_actor, user_agents
from memory_ui.web.forms.sources import SourceTargetForm
from memory_ui.web.htmx import HtmxHttpRequest
from memory_ui.web.offered import Offered


def agent_titles(request: HttpRequest) -> dict[str, str]:
    """Display names of the agents this person can read (their own list, cached per user),
    which name the targets kept for them; none when that list cannot be had now. Not the
    portal-wide cache of display names: a target is listed to everyone, also to people who
    cannot read its agent, and those see the source's own name for it instead."""
    try:
        return {agent.name: agent.display_name for agent in user_agents(request)}
    except (SourceError, auth.SignInRequired):
        return {}


def named(target: SourceTarget, titles: dict[str, str]) -> SourceTarget:
    """`target`, named by its agent's display name where `titles` has it."""
    title = titles.get(target.agent or "")
    return replace(target, title=title) if title else target


def source_target_url(source: Source, key: str, page: str = "source_target", **query: str) -> str:
    """A page of the source's target `key` (its own page by default), with `query`."""
    url = reverse(page, args=[source.name])
    return f"{url}?target={quote(key, safe='/')}" + (f"&{urlencode(query)}" if query else "")


def source_item_url(source: Source, target: str, item: str, page: str = "source_item") -> str:
    """A page of one item (its own page by default)."""
    url = reverse(page, args=[source.name])
    return f"{url}?target={quote(target, safe='/')}&item={quote(item, safe='/')}"


@dataclass(frozen=True)
class Place:
    """What every generic view works on: the source, its adapter for the signed-in person,
    and (where the request names one) their target, named for them."""

    source: Source
    backend: MemoryBackend
    target: SourceTarget | None = None

    @property
    def undo_place(self) -> str:
        return f"{self.source.name}:{self.target.key if self.target else ''}"

    def allows(self, capability: Capability) -> bool:
        """Whether the pages offer `capability` here: the source's adapter declares it, and
        the target does not refuse the portal changes (read only)."""
        return capability in self.backend.capabilities and not self.refuses(capability)

    def refuses(self, capability: Capability) -> bool:
        """The source can, but this target does not let the portal (read only)."""
        target = self.target
        return (
            target is not None
            and bool(target.read_only)
            and capability in self.backend.capabilities
            and capability in CHANGES
        )

    def refusal(self, capability: Capability) -> str:
        """The one sentence pages show where `capability` is not offered here."""
        if self.refuses(capability):
            assert self.target is not None
            return self.target.read_only
        return self.backend.missing_reason(capability)

    @property
    def offered(self) -> Offered:
        """What the pages offer here, and one sentence per action they do not."""
        return Offered.of(self.allows, self.refusal)

    def url(self, page: str = "source_target", **query: str) -> str:
        assert self.target is not None
        return source_target_url(self.source, self.target.key, page, **query)

    def item_url(self, item: str, page: str = "source_item") -> str:
        assert self.target is not None
        return source_item_url(self.source, self.target.key, item, page)


def source_or_404(name: str) -> Source:
    """The configured source of that name with an adapter (its pages are these)."""
    try:
        found = registry.source(name)
    except KeyError:
        raise Http404("No such memory system.") from None
    if found.backend is None or found.primary or found.section:
        raise Http404("This memory system has pages of its own.")
    return found


def place_of(request: HttpRequest, source: Source, target_key: str | None = None) -> Place:
    """The place a request names; 404 for a target that is not the person's."""
    assert source.backend is not None  # source_or_404() keeps sources with an adapter only
    actor = user_actor(request)
    backend = source.backend(actor)
    if target_key is None:
        return Place(source, backend)
    target = generic.target_of(actor, backend, target_key)
    if target is None:
        raise Http404("No such memory in this system.")
    return Place(source, backend, named(target, agent_titles(request)))


type PlaceView = Callable[[HtmxHttpRequest, Place], HttpResponse]


def source_action(
    capability: Capability | None,
) -> Callable[[PlaceView], Callable[..., HttpResponse]]:
    """The view's place: the source from the URL's `name`, the target from the request's
    `target` (GET or POST). A source without `capability` is a 404 with its sentence; a
    target that does not let the portal do it, a 403 page saying so."""

    def decorator(view: PlaceView) -> Callable[..., HttpResponse]:
        @wraps(view)
        @login_required
        def wrapper(request: HtmxHttpRequest, name: str) -> HttpResponse:
            source = source_or_404(name)
            # What the source's adapter can do is known before any target is looked up.
            anywhere = place_of(request, source)
            if capability is not None and not anywhere.allows(capability):
                raise Http404(anywhere.refusal(capability))
            form = SourceTargetForm(request.POST if request.method == "POST" else request.GET)
            if not form.is_valid():
                raise Http404("No such memory in this system.")
            try:
                place = place_of(request, source, form.cleaned_data["target"])
            except SourceError as exc:
                return failed(request, source, exc)
            if capability is not None and place.refuses(capability):
                context = {"place": place, "message": place.refusal(capability)}
                return render(request, "memory_ui/sources/refused.html", context, status=403)
            return view(request, place)

        return wrapper

    return decorator


def failed(request: HttpRequest, source: Source, error: SourceError) -> HttpResponse:
    """A source's failure as a page of its own, offering to try again where that helps."""
    retry = request.get_full_path()
    if request.method == "POST":  # a link cannot send a change again: back to its target's page
        retry = source_target_url(source, request.POST.get("target", ""))
    context = {"source": source, "error": error, "retry_url": retry}
    return render(request, "memory_ui/sources/failed.html", context, status=error.portal_status)
