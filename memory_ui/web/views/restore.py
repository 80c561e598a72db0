"""Restoring an "Export everything" zip.

Staged: the validated archive waits in the cache (`restore_keep`, 30 minutes,
bound to the user) while the user reviews what goes where; then each chosen document is
restored on its own and the outcome reported per document, failures retryable from the
same page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from memory_ui.documents.versions import Version
from memory_ui.memory.archive import ArchiveFile, ArchiveLimits, ParsedArchive
from memory_ui.memory.exports import restore_file
from memory_ui.sources.agent_memory import USER_MEMORY_LABEL, Agent, Loaded, MemoryChanged, Target
from memory_ui.sources.protocol import SourceError
from memory_ui.sources.registry import memory_store
from memory_ui.web import forms
from memory_ui.web.access import signed_in, user_actor, user_agents
from memory_ui.web.htmx import HtmxHttpRequest, render_page
from memory_ui.web.screens import failure_page
from memory_ui.web.stores.restores import RestoreOutcome, StagedRestore, restore_find, restore_keep


@dataclass(frozen=True)
class PlanRow:
    """One file of the archive: where it would go (and what is there now), or why not."""

    file: ArchiveFile
    now: Loaded | None  # None when the file has no target
    problem: str
    outcome: RestoreOutcome | None

    @property
    def key(self) -> str:
        return self.file.key

    @property
    def label(self) -> str:
        return self.now.target.label if self.now else self.file.agent_name or USER_MEMORY_LABEL

    @property
    def current(self):
        return self.now.memory if self.now else None

    @property
    def ready(self) -> bool:
        return self.current is not None and not self.problem

    @property
    def version(self) -> str:
        return Version.of(self.current).token() if self.current else ""

    @property
    def current_bytes(self) -> int | None:
        return len(self.current.content_markdown.encode()) if self.current else None

    @property
    def identical(self) -> bool:
        return self.current is not None and self.current.content_markdown == self.file.text


@dataclass(frozen=True)
class Destinations:
    """Where each file of an archive can go: `usable` files have a target of this user's,
    `skipped` ones say why they have none."""

    usable: dict[str, Target]
    skipped: dict[str, str]


def _destinations(archive: ParsedArchive, agents: list[Agent]) -> Destinations:
    """Agents are matched by name against the user's own agents only; the archive's
    object ids are never used."""
    by_name = {agent.name: agent for agent in agents}
    usable: dict[str, Target] = {}
    skipped: dict[str, str] = {}
    for archived in archive.files:
        if archived.problem:
            skipped[archived.key] = f"Skipped: {archived.problem}."
        elif archived.scope == "user":
            usable[archived.key] = Target("user")
        elif archived.agent_name in by_name:
            usable[archived.key] = Target("agent", by_name[archived.agent_name])
        else:
            skipped[archived.key] = "Skipped: you cannot use this agent (or it no longer exists)."
    return Destinations(usable, skipped)


def _plan(request: HtmxHttpRequest, staged: StagedRestore) -> list[PlanRow]:
    destinations = _destinations(staged.archive, user_agents(request))
    reachable = list(destinations.usable.values())
    now = {
        loaded.key: loaded for loaded in memory_store().load_many(user_actor(request), reachable)
    }
    rows = []
    for archived in staged.archive.files:
        outcome = staged.outcomes.get(archived.key)
        if archived.key in destinations.skipped:
            rows.append(PlanRow(archived, None, destinations.skipped[archived.key], outcome))
            continue
        loaded = now[destinations.usable[archived.key].key]
        problem = f"Could not read it now: {loaded.error.message}" if loaded.error else ""
        rows.append(PlanRow(archived, loaded, problem, outcome))
    return rows


def _plan_page(
    request: HtmxHttpRequest,
    token: str,
    staged: StagedRestore,
    form: forms.RestoreForm | None = None,
    *,
    error: str = "",
) -> HttpResponse:
    try:
        rows = _plan(request, staged)
    except SourceError as exc:
        return failure_page(request, exc, reverse("import_home"), "import")
    failed = [key for key, outcome in staged.outcomes.items() if not outcome.ok]
    if staged.outcomes or staged.chosen:
        selected = failed + staged.interrupted
    else:
        selected = [row.key for row in rows if row.ready]
    archive_upn = staged.archive.upn
    context = {
        "token": token,
        "staged": staged,
        "rows": rows,
        "outcomes": [row for row in rows if row.outcome],
        "failed": failed,
        "selected": form.data.getlist("scopes") if form else selected,
        "mode": form.data.get("mode") if form else staged.mode,
        "error": error,
        "other_owner": bool(
            archive_upn and archive_upn.casefold() != signed_in(request).upn.casefold()
        ),
    }
    if context["mode"] not in ("append", "replace"):
        context["mode"] = staged.mode
    status = 400 if error else 200
    return render_page(request, "memory_ui/import_archive.html", "plan", context, status=status)


def _import_home(request: HtmxHttpRequest, *, error: str = "", status: int = 200) -> HttpResponse:
    try:
        agents, agents_error = user_agents(request), None
    except SourceError as exc:
        agents, agents_error = [], exc
    context = {
        "agents": agents,
        "agents_error": agents_error,
        "error": error,
        "limits": ArchiveLimits.from_settings(),
    }
    return render_page(
        request, "memory_ui/import_home.html", "archive_upload", context, status=status
    )


@require_GET
@login_required
def import_home(request: HtmxHttpRequest) -> HttpResponse:
    return _import_home(request)


@require_POST
@login_required
def import_archive(request: HtmxHttpRequest) -> HttpResponse:
    form = forms.ArchiveUploadForm(request.POST, request.FILES, request=request)
    if not form.is_valid():
        return _import_home(request, error=forms.first_error(form), status=form.status)
    upload = form.cleaned_data["archive"]
    staged = StagedRestore(form.cleaned_data["parsed"], (upload.name or "archive.zip")[:200])
    token = restore_keep(signed_in(request).oid, staged)
    return redirect("import_archive_preview", token=token)


def _expired(request: HtmxHttpRequest) -> HttpResponse:
    return _import_home(
        request,
        error="That upload has expired (or is not yours). Nothing was imported; "
        "upload the zip again.",
        status=404,
    )


def _with_staged(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The view gets the user's staged restore behind `token`, or the user is told it
    expired (or is not theirs)."""

    @wraps(view)
    def wrapper(request: HtmxHttpRequest, token: str) -> HttpResponse:
        staged = restore_find(signed_in(request).oid, token)
        if staged is None:
            return _expired(request)
        return view(request, token, staged)

    return wrapper


@require_GET
@login_required
@_with_staged
def preview(request: HtmxHttpRequest, token: str, staged: StagedRestore) -> HttpResponse:
    return _plan_page(request, token, staged)


@require_POST
@login_required
@_with_staged
def apply(request: HtmxHttpRequest, token: str, staged: StagedRestore) -> HttpResponse:
    try:
        destinations = _destinations(staged.archive, user_agents(request))
    except SourceError as exc:
        return failure_page(request, exc, reverse("import_home"), "import")
    form = forms.RestoreForm(request.POST, usable=list(destinations.usable))
    if not form.is_valid():
        unusable = form.unusable()
        error = forms.first_error(form)
        if unusable and "mode" not in form.errors:
            error = f"These cannot be imported: {', '.join(unusable)}. Nothing was imported."
        return _plan_page(request, token, staged, form, error=error)
    _restore(request, token, staged, destinations.usable, form)
    return redirect("import_archive_preview", token=token)


def _restore(
    request: HtmxHttpRequest,
    token: str,
    staged: StagedRestore,
    targets: dict[str, Target],
    form: forms.RestoreForm,
) -> None:
    """Each chosen file on its own; the outcome of each goes into `staged`, kept after
    every file, so a restore stopped midway shows what was done and what was not."""
    keys, mode = form.cleaned_data["scopes"], form.cleaned_data["mode"]
    files = {archived.key: archived for archived in staged.archive.files}
    actor, owner = user_actor(request), signed_in(request).oid
    # A write sent before may have landed (done, no answer, or the request stopped before
    # its outcome was kept): it is checked before anything is sent again. Only one that
    # certainly failed is simply sent again.
    certain = {key for key, out in staged.outcomes.items() if not out.ok and not out.unknown}
    for key in keys:
        staged.outcomes.pop(key, None)
        if key in certain:
            staged.attempted.pop(key, None)
    staged.chosen, staged.mode = keys, mode
    restore_keep(owner, staged, token)
    for key in keys:
        target = targets[key]
        version = form.cleaned_data["versions"][key]
        earlier = staged.attempted.get(key)
        if earlier is None:
            staged.attempted[key] = timezone.now().isoformat()
            restore_keep(owner, staged, token)
        try:
            done = restore_file(
                actor,
                target,
                files[key],
                mode,
                version,
                earlier=datetime.fromisoformat(earlier) if earlier else None,
            )
            staged.outcomes[key] = RestoreOutcome(True, done)
        except MemoryChanged:
            staged.outcomes[key] = RestoreOutcome(
                False, "Changed since your preview, so it was left alone. Check it and retry."
            )
        except SourceError as exc:
            staged.outcomes[key] = RestoreOutcome(False, exc.message, exc.outcome_unknown)
        restore_keep(owner, staged, token)
    failed = sum(not staged.outcomes[key].ok for key in keys)
    if failed:
        messages.warning(
            request, f"{failed} of {len(keys)} could not be imported; see below to retry."
        )
    else:
        messages.success(request, f"Imported {len(keys)} from {staged.source}.")
