""" "What <agent> is told about me", for any registered source that declares PREVIEW: the
person picks one of their agents (the source's targets for them), asks a question or takes
the suggested one, and sees the exact text the agent is given, then the ranked items behind
it, "for this question, the top N". "This is wrong" on one of them sends what the person
writes for correction; the page says it was sent, never that it was corrected.

Asking may change the source (when an item was last used, its quota), so it runs only when
the person submits the form, a POST: the page itself never asks. The agent is looked up
among the person's own targets (404 otherwise) and the person is the verified identity;
every ask and report is audited with the source's name (`sources.generic`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods, require_POST

from memory_ui.sources import generic, registry
from memory_ui.sources.protocol import (
    Capability,
    MemoryBackend,
    Preview,
    Source,
    SourceError,
    SourceTarget,
)
from memory_ui.web.access import user_actor
from memory_ui.web.forms.sources import PreviewForm, ReportForm
from memory_ui.web.htmx import HtmxHttpRequest
from memory_ui.web.stores.previews import preview_remember, preview_shown

# How many items a page asks for: MemoryOS's own default (seed 002), which the page names.
TOP = 10
NOT_KEPT = "That answer is no longer kept here: ask the question again, then report."


@dataclass(frozen=True)
class Asking:
    """The source, its adapter for the signed-in person, and their agents (its targets)."""

    source: Source
    backend: MemoryBackend
    targets: list[SourceTarget]

    def target(self, key: str) -> SourceTarget:
        """One of the person's agents; any other key is a 404."""
        found = next((target for target in self.targets if target.key == key), None)
        if found is None:
            raise Http404("No such agent here.")
        return found

    def place(self, target: SourceTarget) -> str:
        return f"{self.source.name}:{target.key}"


def _source(name: str) -> Source:
    try:
        source = registry.source(name)
    except KeyError:
        raise Http404("No such memory system.") from None
    if source.backend is None or not source.previews:
        raise Http404(source.missing_reason(Capability.PREVIEW))
    return source


def _asking(request: HtmxHttpRequest, source: Source) -> Asking:
    assert source.backend is not None  # _source() keeps sources with an adapter only
    actor = user_actor(request)
    backend = source.backend(actor)
    return Asking(source, backend, backend.list_targets(generic.subject_of(actor)))


def _failed(request: HtmxHttpRequest, source: Source, error: SourceError) -> HttpResponse:
    context = {"source": source, "error": error, "retry_url": request.get_full_path()}
    return render(request, "memory_ui/sources/failed.html", context, status=error.portal_status)


@require_http_methods(["GET", "POST"])
@login_required
def told(request: HtmxHttpRequest, name: str) -> HttpResponse:
    """GET: the form (`?target=` picks the agent), asking nothing. POST: the answer."""
    source = _source(name)
    try:
        asking = _asking(request, source)
    except SourceError as exc:
        return _failed(request, source, exc)
    agents = [(target.key, target.title) for target in asking.targets]
    if request.method == "GET":
        key = request.GET.get("target")
        chosen = asking.target(key) if key else None
        initial = {"target": chosen.key} if chosen else {}
        return _page(request, asking, PreviewForm(initial=initial, agents=agents))
    target = asking.target(request.POST.get("target", ""))
    form = PreviewForm(request.POST, agents=agents)
    if not form.is_valid():
        return _page(request, asking, form, status=400)
    question = form.cleaned_data["question"]
    try:
        preview = generic.target_preview(user_actor(request), asking.backend, target, question, TOP)
    except SourceError as exc:
        return _page(request, asking, form, error=exc, status=exc.portal_status)
    token = preview_remember(request.session, asking.place(target), preview)
    return _page(request, asking, form, preview=preview, token=token)


def _page(
    request: HtmxHttpRequest,
    asking: Asking,
    form: PreviewForm,
    *,
    preview: Preview | None = None,
    token: str = "",
    error: SourceError | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "source": asking.source,
        "form": form,
        "preview": preview,
        "token": token,
        "report": ReportForm(),
        "error": error,
    }
    return render(request, "memory_ui/sources/told.html", context, status=status)


@require_POST
@login_required
def report(request: HtmxHttpRequest, name: str) -> HttpResponse:
    """ "This is wrong" on an item the person was shown: sent for correction."""
    source = _source(name)
    try:
        asking = _asking(request, source)
    except SourceError as exc:
        return _failed(request, source, exc)
    target = asking.target(request.POST.get("target", ""))
    form = ReportForm(request.POST)
    shown = preview_shown(request.session, form.data.get("preview", ""), asking.place(target))
    item_key = form.data.get("item", "")
    if shown is None or item_key not in shown.items:
        return _report_page(request, asking, target, form, "", error=NOT_KEPT, status=409)
    text = shown.items[item_key]
    if not form.is_valid():
        return _report_page(request, asking, target, form, text, status=400)
    try:
        generic.item_report(
            user_actor(request),
            asking.backend,
            target,
            shown.reference,
            item_key,
            form.cleaned_data["correction"],
        )
    except SourceError as exc:
        return _report_page(
            request, asking, target, form, text, error=exc, status=exc.portal_status
        )
    return _report_page(request, asking, target, form, text, sent=True)


def _report_page(
    request: HtmxHttpRequest,
    asking: Asking,
    target: SourceTarget,
    form: ReportForm,
    text: str,
    *,
    sent: bool = False,
    error: SourceError | str = "",
    status: int = 200,
) -> HttpResponse:
    context = {
        "source": asking.source,
        "target": target,
        "form": form,
        "text": text,
        "sent": sent,
        "error": error,
    }
    return render(request, "memory_ui/sources/report.html", context, status=status)
