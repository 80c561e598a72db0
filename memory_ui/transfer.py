"""Export and import: markdown downloads per scope, "Export everything" as a zip, importing
markdown into one memory with a preview, and restoring an "Export everything" zip.

Importing one document is stateless: the preview carries the validated text back in the
confirmation form (a hidden textarea), and the confirmation validates it again. A replace
is checked against the version the preview showed (DESIGN 8), so a change made meanwhile
answers 409 with the differences and the import still in the form.

Restoring a zip is staged: the validated archive waits in the cache (30 minutes, bound to
the user) while the user reviews what goes where, then each chosen document is restored on
its own and the outcome reported per document, failures retryable from the same page.
"""

from __future__ import annotations

import re
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils import timezone
from django.utils.http import content_disposition_header
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reselect, reswap, retarget

from memory_ui import auth, uploads
from memory_ui.access import (
    HtmxHttpRequest,
    agent_by_name,
    error_status,
    render_page,
    user_actor,
    user_agents,
)
from memory_ui.archive import (
    ArchiveFile,
    ArchiveLimits,
    ArchiveRefused,
    ParsedArchive,
    export_archive,
    read_archive,
    restore_file,
)
from memory_ui.audit import Action
from memory_ui.coreapi import Agent, CoreAPIError, Memory
from memory_ui.diffs import diff_lines
from memory_ui.operations import (
    MemoryChanged,
    Target,
    Version,
    memory_export,
    memory_export_combined,
    memory_import_append,
    memory_read,
    memory_replace,
)
from memory_ui.uploads import ImportText, UploadRefused

MODES = ("append", "replace")
STAGE_SECONDS = 30 * 60
STAGE_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")
READ_WORKERS = 4  # a small pool: a restore preview costs a few round trips, not dozens
DOWNLOAD_TOKEN = re.compile(r"[A-Za-z0-9]{8,64}")
DOWNLOAD_COOKIE = "download_ready"  # read by static/js/transfer.js to end "Preparing…"


def _today() -> str:
    return timezone.now().astimezone(UTC).strftime("%Y-%m-%d")


def _memory_url(target: Target) -> str:
    if target.agent:
        return reverse("agent_memory", args=[target.agent.name])
    return reverse("user_memory")


def _failure(
    request: HtmxHttpRequest, error: CoreAPIError, back_url: str, what: str, kept_text: str = ""
) -> HttpResponse:
    """CoreAPI failed before the page could be built; `kept_text` is what the user typed."""
    response = render(
        request,
        "memory_ui/transfer_error.html",
        {"error": error, "back_url": back_url, "what": what, "kept_text": kept_text},
        status=error_status(error),
    )
    if request.htmx:  # a whole page: it replaces the page's content, not the form's
        reselect(retarget(reswap(response, "innerHTML"), "#main"), "#main")
    return response


# --- export ------------------------------------------------------------------------------


def _attachment(
    request: HtmxHttpRequest, response: HttpResponseBase, filename: str
) -> HttpResponseBase:
    response["Content-Disposition"] = content_disposition_header(True, filename)
    token = request.GET.get("download_token", "")
    if DOWNLOAD_TOKEN.fullmatch(token):
        # Tells the page that started the download that it has begun (no secret in it).
        response.set_cookie(
            DOWNLOAD_COOKIE,
            token,
            max_age=120,
            secure=settings.SESSION_COOKIE_SECURE,
            httponly=False,
            samesite="Strict",
        )
    return response


def _markdown_download(
    request: HtmxHttpRequest, export: Any, stem: str, back_url: str
) -> HttpResponseBase:
    try:
        text = export(user_actor(request))
    except CoreAPIError as exc:
        return _failure(request, exc, back_url, "export")
    response = HttpResponse(text.encode("utf-8"), content_type="text/markdown; charset=utf-8")
    return _attachment(request, response, f"{stem}-{_today()}.md")


@require_GET
@login_required
@never_cache
def export_user(request: HtmxHttpRequest) -> HttpResponseBase:
    return _markdown_download(
        request,
        lambda actor: memory_export(actor, Target("user")),
        "memory-user",
        reverse("user_memory"),
    )


def _agent_download(
    request: HtmxHttpRequest, agent_name: str, page: str, stem: str, export: Any
) -> HttpResponseBase:
    """A download about one of the user's agents; `export(actor, agent)` fetches it."""
    back = reverse(page, args=[agent_name])
    try:
        agent = agent_by_name(request, agent_name)
    except CoreAPIError as exc:
        return _failure(request, exc, back, "export")
    return _markdown_download(
        request, lambda actor: export(actor, agent), f"{stem}-{agent.name}", back
    )


@require_GET
@login_required
@never_cache
def export_agent(request: HtmxHttpRequest, agent_name: str) -> HttpResponseBase:
    return _agent_download(
        request,
        agent_name,
        "agent_memory",
        "memory-agent",
        lambda actor, agent: memory_export(actor, Target("agent", agent)),
    )


@require_GET
@login_required
@never_cache
def export_combined(request: HtmxHttpRequest, agent_name: str) -> HttpResponseBase:
    return _agent_download(
        request, agent_name, "agent_combined", "memory-combined", memory_export_combined
    )


@require_GET
@login_required
@never_cache
def export_everything(request: HtmxHttpRequest) -> HttpResponseBase:
    """A zip of every document. All of them are fetched before the first byte is sent, so
    a CoreAPI failure is still an error page (and nothing half-done is downloaded)."""
    identity = auth.current_identity(request)
    if identity is None:
        raise auth.SignInRequired
    try:
        stream = export_archive(user_actor(request), user_agents(request), identity.upn)
    except CoreAPIError as exc:
        return _failure(request, exc, reverse("dashboard"), "export")
    response = StreamingHttpResponse(stream, content_type="application/zip")
    return _attachment(request, response, f"memory-export-{_today()}.zip")


# --- import one document ---------------------------------------------------------------


@dataclass(frozen=True)
class ImportPage:
    """One memory to import into, and the URLs of its import steps."""

    target: Target

    def _url(self, name: str) -> str:
        agent = self.target.agent
        return reverse(f"{name}_agent", args=[agent.name]) if agent else reverse(f"{name}_user")

    @property
    def title(self) -> str:
        agent = self.target.agent
        return f"Import into {agent.display_name}" if agent else "Import into your memory"

    @property
    def label(self) -> str:
        agent = self.target.agent
        return f"{agent.display_name}'s memory" if agent else "your memory"

    @property
    def urls(self) -> dict[str, str]:
        return {
            "form": self._url("import"),
            "preview": self._url("import_preview"),
            "confirm": self._url("import_confirm"),
            "backup": self._url("export"),
            "memory": _memory_url(self.target),
        }


def _import_page(request: HtmxHttpRequest, agent_name: str | None) -> ImportPage:
    """404 for an agent name that is not one of the user's (CoreAPIError if unlisted)."""
    if agent_name is None:
        return ImportPage(Target("user"))
    return ImportPage(Target("agent", agent_by_name(request, agent_name)))


def _render_flow(
    request: HtmxHttpRequest, page: ImportPage, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    return render_page(
        request,
        "memory_ui/import.html",
        "flow",
        {
            "page": page,
            "title": page.title,
            "target": page.target,
            "urls": page.urls,
            "max_bytes": uploads.max_bytes(),
            **context,
        },
        status=status,
    )


def _form(
    request: HtmxHttpRequest, page: ImportPage, *, error: str = "", pasted: str = "", status: int
) -> HttpResponse:
    return _render_flow(
        request, page, {"stage": "form", "error": error, "pasted": pasted}, status=status
    )


def _appended(current: str, text: str) -> str:
    """Roughly the document after an import with mode=append (DESIGN 6), for the preview."""
    stamp = timezone.now().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    block = f"## Imported {stamp}\n\n{text.strip()}\n"
    return f"{current.rstrip()}\n\n{block}" if current.strip() else block


def _preview(
    request: HtmxHttpRequest,
    page: ImportPage,
    imported: ImportText,
    current: Memory | None,
    version: str,
    *,
    mode: str = "append",
    error: str = "",
    conflict: bool = False,
    status: int = 200,
) -> HttpResponse:
    context: dict[str, Any] = {
        "stage": "preview",
        "imported": imported,
        "line_count": len(imported.text.splitlines()),
        "current": current,
        "current_bytes": len(current.content_markdown.encode()) if current else None,
        "version": version,
        "mode": mode if mode in MODES else "append",
        "error": error,
        "conflict": conflict,
    }
    if current is not None:
        context["append_diff"] = diff_lines(
            current.content_markdown, _appended(current.content_markdown, imported.text)
        )
        # Either is None when the texts are too large to compare; import.html says so.
        context["replace_diff"] = diff_lines(current.content_markdown, imported.text)
    return _render_flow(request, page, context, status=status)


def _current_or_none(request: HtmxHttpRequest, target: Target) -> Memory | None:
    try:
        return memory_read(user_actor(request), target)
    except CoreAPIError:
        return None


def _submitted_import(request: HtmxHttpRequest) -> ImportText:
    """The file or the pasted text of the upload form; UploadRefused otherwise."""
    upload: UploadedFile | None = request.FILES.get("file")
    pasted = request.POST.get("pasted", "")
    if uploads.was_oversized(request, "file"):
        raise uploads.too_large(None, uploads.max_bytes())
    if upload is not None and pasted.strip():
        raise UploadRefused(
            "You chose a file and pasted text. Import one at a time: "
            "empty the text box or remove the file."
        )
    if upload is not None:
        return uploads.validate_upload(upload)
    if pasted:
        return uploads.validate_paste(pasted)
    raise UploadRefused("Choose a markdown file or paste some markdown to import.")


@require_GET
@login_required
def import_form(request: HtmxHttpRequest, agent_name: str | None = None) -> HttpResponse:
    try:
        page = _import_page(request, agent_name)
    except CoreAPIError as exc:
        return _failure(request, exc, reverse("dashboard"), "import")
    return _form(request, page, status=200)


@require_POST
@login_required
def import_preview(request: HtmxHttpRequest, agent_name: str | None = None) -> HttpResponse:
    pasted = request.POST.get("pasted", "")
    try:
        page = _import_page(request, agent_name)
    except CoreAPIError as exc:
        return _failure(request, exc, reverse("dashboard"), "import", pasted)
    try:
        imported = _submitted_import(request)
    except UploadRefused as refusal:
        return _form(request, page, error=refusal.message, pasted=pasted, status=refusal.status)
    try:
        current = memory_read(user_actor(request), page.target)
    except CoreAPIError as exc:
        return _form(request, page, error=exc.message, pasted=pasted, status=error_status(exc))
    return _preview(request, page, imported, current, Version.of(current).token())


@require_POST
@login_required
def import_confirm(request: HtmxHttpRequest, agent_name: str | None = None) -> HttpResponse:
    text = request.POST.get("text", "")
    try:
        page = _import_page(request, agent_name)
    except CoreAPIError as exc:
        return _failure(request, exc, reverse("dashboard"), "import", text)
    try:
        # The text came back from the browser: it is checked again, like any upload.
        validated = uploads.validate_paste(text)
    except UploadRefused as refusal:
        return _form(request, page, error=refusal.message, pasted=text, status=refusal.status)
    imported = ImportText(validated.text, request.POST.get("source", "")[:200] or "pasted text")
    mode = request.POST.get("mode", "")
    version_token = request.POST.get("version", "")
    version = Version.parse(version_token)

    def again(error: str, status: int = 400) -> HttpResponse:
        current = _current_or_none(request, page.target)
        return _preview(
            request, page, imported, current, version_token, mode=mode, error=error, status=status
        )

    if mode not in MODES:
        return again("Choose whether to append or to replace.")
    actor = user_actor(request)
    try:
        if mode == "append":
            memory_import_append(actor, page.target, imported.text)
            done = "added at the end under an “Imported” heading"
        else:
            if request.POST.get("confirm_replace") != "yes":
                return again(
                    "Replacing removes everything there now: tick “I understand” to go ahead, "
                    "or choose append."
                )
            if version is None:
                return again("This preview is incomplete; preview the import again.")
            memory_replace(
                actor, page.target, imported.text, started_from=version, action=Action.IMPORT
            )
            done = "it replaced what was there"
    except MemoryChanged as changed:
        return _preview(
            request,
            page,
            imported,
            changed.current,
            Version.of(changed.current).token(),
            mode=mode,
            error=(
                "Your memory changed since the preview, so nothing was replaced. "
                "Below is how your import differs from your memory now; "
                "confirm again to replace it anyway."
            ),
            conflict=True,
            status=409,
        )
    except CoreAPIError as exc:
        return again(f"Nothing was imported. {exc.message}", error_status(exc))
    messages.success(request, f"Imported {imported.source} into {page.label}: {done}.")
    return redirect(page.urls["memory"])


# --- restore an "Export everything" zip ------------------------------------------------


@dataclass
class Outcome:
    ok: bool
    message: str


@dataclass
class StagedRestore:
    """An uploaded, validated archive waiting for the user's go-ahead."""

    archive: ParsedArchive
    source: str
    mode: str = "replace"
    outcomes: dict[str, Outcome] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanRow:
    """One file of the archive: where it would go and whether it can."""

    file: ArchiveFile
    target: Target | None
    current: Memory | None
    problem: str
    outcome: Outcome | None

    @property
    def key(self) -> str:
        return self.file.key

    @property
    def label(self) -> str:
        if self.target:
            return self.target.label
        return self.file.agent_name or ("Your memory" if self.file.scope == "user" else "?")

    @property
    def ready(self) -> bool:
        return self.target is not None and self.current is not None and not self.problem

    @property
    def version(self) -> str:
        return Version.of(self.current).token() if self.current else ""

    @property
    def current_bytes(self) -> int | None:
        return len(self.current.content_markdown.encode()) if self.current else None

    @property
    def identical(self) -> bool:
        return self.current is not None and self.current.content_markdown == self.file.text


def _stage_key(request: HtmxHttpRequest, token: str) -> str:
    identity = auth.current_identity(request)
    if identity is None:
        raise auth.SignInRequired
    return f"import-archive:{identity.oid}:{token}"


def _staged(request: HtmxHttpRequest, token: str) -> StagedRestore | None:
    if not STAGE_TOKEN.fullmatch(token):
        return None
    staged = cache.get(_stage_key(request, token))
    return staged if isinstance(staged, StagedRestore) else None


def _targets(archive: ParsedArchive, agents: list[Agent]) -> dict[str, Target | str]:
    """Each file's target, or why it has none. Agents are matched by name against the
    user's own agents only; the archive's object ids are never used."""
    by_name = {agent.name: agent for agent in agents}
    targets: dict[str, Target | str] = {}
    for archived in archive.files:
        if archived.problem:
            targets[archived.key] = f"Skipped: {archived.problem}."
        elif archived.scope == "user":
            targets[archived.key] = Target("user")
        elif archived.agent_name in by_name:
            targets[archived.key] = Target("agent", by_name[archived.agent_name])
        else:
            targets[archived.key] = "Skipped: you cannot use this agent (or it no longer exists)."
    return targets


def _plan(request: HtmxHttpRequest, staged: StagedRestore, agents: list[Agent]) -> list[PlanRow]:
    targets = _targets(staged.archive, agents)
    actor = user_actor(request)

    def row(archived: ArchiveFile) -> PlanRow:
        found = targets[archived.key]
        outcome = staged.outcomes.get(archived.key)
        if isinstance(found, str):
            return PlanRow(archived, None, None, found, outcome)
        try:
            return PlanRow(archived, found, memory_read(actor, found), "", outcome)
        except CoreAPIError as exc:
            return PlanRow(archived, found, None, f"Could not read it now: {exc.message}", outcome)

    with ThreadPoolExecutor(max_workers=READ_WORKERS) as pool:
        return list(pool.map(row, staged.archive.files))


def _archive_page(
    request: HtmxHttpRequest,
    token: str,
    staged: StagedRestore,
    *,
    error: str = "",
    status: int = 200,
    selected: list[str] | None = None,
    mode: str | None = None,
) -> HttpResponse:
    try:
        rows = _plan(request, staged, user_agents(request))
    except CoreAPIError as exc:
        return _failure(request, exc, reverse("import_home"), "import")
    failed = [key for key, outcome in staged.outcomes.items() if not outcome.ok]
    if selected is None:
        selected = failed if staged.outcomes else [row.key for row in rows if row.ready]
    identity = auth.current_identity(request)
    return render_page(
        request,
        "memory_ui/import_archive.html",
        "plan",
        {
            "token": token,
            "staged": staged,
            "rows": rows,
            "outcomes": [row for row in rows if row.outcome],
            "failed": failed,
            "selected": selected,
            "mode": mode if mode in MODES else staged.mode,
            "error": error,
            "other_owner": bool(
                staged.archive.upn
                and identity
                and staged.archive.upn.casefold() != identity.upn.casefold()
            ),
        },
        status=status,
    )


def _import_home(request: HtmxHttpRequest, *, error: str = "", status: int = 200) -> HttpResponse:
    try:
        agents, agents_error = user_agents(request), None
    except CoreAPIError as exc:
        agents, agents_error = [], exc
    limits = ArchiveLimits.from_settings()
    return render_page(
        request,
        "memory_ui/import_home.html",
        "archive_upload",
        {"agents": agents, "agents_error": agents_error, "error": error, "limits": limits},
        status=status,
    )


@require_GET
@login_required
def import_home(request: HtmxHttpRequest) -> HttpResponse:
    return _import_home(request)


@require_POST
@login_required
def import_archive(request: HtmxHttpRequest) -> HttpResponse:
    upload: UploadedFile | None = request.FILES.get("archive")
    limits = ArchiveLimits.from_settings()
    if uploads.was_oversized(request, "archive"):
        refusal = uploads.too_large(None, limits.max_archive_bytes, "The archive")
        return _import_home(request, error=refusal.message, status=413)
    if upload is None:
        return _import_home(
            request, error="Choose the .zip file that “Export everything” made.", status=400
        )
    if not (upload.name or "").lower().endswith(".zip"):
        return _import_home(
            request,
            error=f"“{upload.name}” is not a .zip file. To import one markdown file, "
            "choose the memory it belongs to below.",
            status=400,
        )
    try:
        archive = read_archive(upload, limits)
    except ArchiveRefused as refusal:
        return _import_home(request, error=refusal.message, status=refusal.status)
    if not archive.files:
        return _import_home(request, error="The archive lists no memory to import.", status=400)
    token = secrets.token_urlsafe(16)
    staged = StagedRestore(archive, (upload.name or "archive.zip")[:200])
    cache.set(_stage_key(request, token), staged, STAGE_SECONDS)
    return redirect("import_archive_preview", token=token)


def _expired(request: HtmxHttpRequest) -> HttpResponse:
    return _import_home(
        request,
        error="That upload has expired (or is not yours). Nothing was imported; "
        "upload the zip again.",
        status=404,
    )


@require_GET
@login_required
def import_archive_preview(request: HtmxHttpRequest, token: str) -> HttpResponse:
    staged = _staged(request, token)
    if staged is None:
        return _expired(request)
    return _archive_page(request, token, staged)


@require_POST
@login_required
def import_archive_apply(request: HtmxHttpRequest, token: str) -> HttpResponse:
    staged = _staged(request, token)
    if staged is None:
        return _expired(request)
    mode = request.POST.get("mode", "")
    keys = request.POST.getlist("scopes")

    def again(error: str) -> HttpResponse:
        return _archive_page(
            request, token, staged, error=error, status=400, selected=keys, mode=mode
        )

    try:
        targets = _targets(staged.archive, user_agents(request))
    except CoreAPIError as exc:
        return _failure(request, exc, reverse("import_home"), "import")
    if mode not in MODES:
        return again("Choose whether to replace or to append.")
    if not keys:
        return again("Choose at least one memory to import; nothing was imported.")
    unusable = [key for key in keys if not isinstance(targets.get(key), Target)]
    if unusable:
        return again(f"These cannot be imported: {', '.join(unusable)}. Nothing was imported.")
    versions = {key: Version.parse(request.POST.get(f"version-{key}", "")) for key in keys}
    if mode == "replace":
        if request.POST.get("confirm_replace") != "yes":
            return again(
                "Replacing overwrites the chosen memories: tick “I understand” to go ahead, "
                "or choose append."
            )
        if any(version is None for version in versions.values()):
            return again("This preview is incomplete; reload it and try again.")
    files = {archived.key: archived for archived in staged.archive.files}
    actor = user_actor(request)
    for key in dict.fromkeys(keys):
        target = targets[key]
        assert isinstance(target, Target)
        try:
            done = restore_file(actor, target, files[key], mode, versions[key])
            staged.outcomes[key] = Outcome(True, done)
        except MemoryChanged:
            staged.outcomes[key] = Outcome(
                False, "Changed since your preview, so it was left alone. Check it and retry."
            )
        except CoreAPIError as exc:
            staged.outcomes[key] = Outcome(False, exc.message)
    staged.mode = mode
    cache.set(_stage_key(request, token), staged, STAGE_SECONDS)
    failed = sum(not staged.outcomes[key].ok for key in dict.fromkeys(keys))
    if failed:
        messages.warning(
            request, f"{failed} of {len(set(keys))} could not be imported; see below to retry."
        )
    else:
        messages.success(request, f"Imported {len(set(keys))} from {staged.source}.")
    return redirect("import_archive_preview", token=token)


urlpatterns = [
    path("memory/user/export", export_user, name="export_user"),
    path("memory/agents/<slug:agent_name>/export", export_agent, name="export_agent"),
    path(
        "memory/agents/<slug:agent_name>/combined/export",
        export_combined,
        name="export_combined",
    ),
    path("export/everything", export_everything, name="export_everything"),
    path("memory/user/import", import_form, name="import_user"),
    path("memory/user/import/preview", import_preview, name="import_preview_user"),
    path("memory/user/import/confirm", import_confirm, name="import_confirm_user"),
    path("memory/agents/<slug:agent_name>/import", import_form, name="import_agent"),
    path(
        "memory/agents/<slug:agent_name>/import/preview",
        import_preview,
        name="import_preview_agent",
    ),
    path(
        "memory/agents/<slug:agent_name>/import/confirm",
        import_confirm,
        name="import_confirm_agent",
    ),
    path("import", import_home, name="import_home"),
    path("import/archive", import_archive, name="import_archive"),
    path("import/archive/<str:token>", import_archive_preview, name="import_archive_preview"),
    path("import/archive/<str:token>/apply", import_archive_apply, name="import_archive_apply"),
]
