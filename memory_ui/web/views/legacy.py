"""Reading the legacy memory stores (seed 003; docs/legacy-stores.md): the dashboard's
"Legacy memory stores" section, a store's files, one file, and .md downloads.

The section loads after first paint (htmx when it scrolls into view; without JavaScript a
link to the same list as a page), so the dashboard never waits for the legacy source. A
store is named in the URL by its full name and looked up among the configured stores
(`legacy_ops.legacy_store`): any other name is a 404, and the scope inside the store comes
from the verified identity, never from the browser. Each action is offered only where the
source declares the capability; where one is missing, `Offered.missing` (web/offered.py) says why.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, HttpResponseBase
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import content_disposition_header, urlencode
from django.utils.safestring import SafeString
from django.utils.timesince import timesince
from django.utils.timezone import localtime
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from memory_ui.sources import generic
from memory_ui.sources.legacy import (
    LegacyRateLimited,
    LegacyStoreError,
    LegacyUnavailable,
    LegacyUnexpectedResponse,
)
from memory_ui.sources.legacy import operations as legacy_ops
from memory_ui.sources.legacy.operations import Store
from memory_ui.sources.protocol import Capability, Item, ItemsPage
from memory_ui.web.access import user_actor
from memory_ui.web.forms.legacy import LegacyFileForm
from memory_ui.web.htmx import HtmxHttpRequest, render_page
from memory_ui.web.legacy_pages import (
    agent_titles,
    entries_of,
    file_url,
    named,
    offered,
    read_file,
    store_or_404,
    store_url,
)
from memory_ui.web.stores.item_undo import item_undo_label

# Failures a list offers to try again: the stores did not answer (in time), were busy, or
# answered something unreadable. A refusal (of the portal's own credentials, a privilege)
# would only be refused again: the message says whom to tell instead.
RETRYABLE = (LegacyUnavailable, LegacyRateLimited, LegacyUnexpectedResponse)


def retry_url(error: LegacyStoreError, url: str) -> str:
    """`url` for the error box's "Try again", or "" where trying again cannot help."""
    return url if isinstance(error, RETRYABLE) else ""


@dataclass(frozen=True)
class FileRow:
    """One file in a store's list, worked out here rather than per row in the template:
    a page holds up to the store's page size (100) and must stay close to the one
    entries-list call it costs (issue 18's bar: 1.5x)."""

    path: str
    description: str
    url: str
    has_text: bool
    updated_iso: str
    updated_exact: str
    updated_ago: str

    @classmethod
    def of(cls, item: Item, file_base_url: str) -> FileRow:
        when = item.updated
        return cls(
            path=item.key,
            description=item.description,
            url=f"{file_base_url}?{urlencode({'path': item.key})}",
            has_text=item.has_text,
            updated_iso=when.isoformat() if when else "",
            # strftime, not Django's date_format: a hundred rows of that alone double the page.
            updated_exact=localtime(when).strftime("%-d %B %Y, %H:%M:%S %Z") if when else "",
            updated_ago=f"{timesince(when)} ago" if when else "never",
        )


ROW = (
    '<li class="legacy-file"><p><a href="{url}" class="legacy-path">{path}</a>{description}'
    " <small>updated {updated}</small></p>{contents}</li>"
)
CONTENTS = (
    '<details hx-get="{url}" hx-trigger="toggle once" hx-target="find .legacy-file-contents"'
    ' hx-swap="innerHTML"><summary>Show contents<span class="visually-hidden"> of {path}'
    '</span></summary><div class="legacy-file-contents"><p><a href="{url}">Open {path}</a>'
    "</p></div></details>"
)


def rows_html(rows: list[FileRow]) -> SafeString:
    """The list's rows, every value escaped by format_html: a page holds up to 100 files
    and the template engine's per-row cost would dominate the page (issue 18's bar: the
    page within 1.5x of its one entries-list call)."""
    parts = []
    for row in rows:
        description = format_html(' <span class="legacy-description">— {}</span>', row.description)
        updated = (
            format_html(
                '<time datetime="{}" title="{}">{}</time>',
                row.updated_iso,
                row.updated_exact,
                row.updated_ago,
            )
            if row.updated_iso
            else "never"
        )
        contents = (
            format_html(CONTENTS, url=row.url, path=row.path)
            if row.has_text
            else format_html('<p class="empty-state">{}</p>', "Empty.")
        )
        parts.append(
            format_html(
                ROW,
                url=row.url,
                path=row.path,
                description=description if row.description else "",
                updated=updated,
                contents=contents,
            )
        )
    return format_html_join("", "{}", ((part,) for part in parts))


@dataclass(frozen=True)
class StoreCard:
    """A store on the dashboard: its first page of files (one list call)."""

    store: Store
    files: int = 0
    more: bool = False  # more files than the first page holds
    updated: dt.datetime | None = None
    error: LegacyStoreError | None = None


def _card(request: HtmxHttpRequest, store: Store) -> StoreCard:
    try:
        page = legacy_ops.legacy_files(user_actor(request), store)
    except LegacyStoreError as exc:
        return StoreCard(store, error=exc)
    stamps = [item.updated for item in page.items if item.updated]
    return StoreCard(
        store, len(page.items), page.next_cursor is not None, max(stamps, default=None)
    )


@require_GET
@login_required
def stores(request: HtmxHttpRequest) -> HttpResponse:
    """The user's legacy stores as cards: the dashboard's section (htmx) or, without
    JavaScript, the same list as a page."""
    if not legacy_ops.legacy_enabled():
        raise Http404("The legacy memory stores are not configured.")
    try:
        found, error = legacy_ops.legacy_stores(user_actor(request)), None
    except LegacyStoreError as exc:
        found, error = [], exc
    titles = agent_titles(request)
    context = {
        "cards": [_card(request, named(store, titles)) for store in found],
        "error": error,
        "retry_url": retry_url(error, reverse("legacy_stores")) if error else "",
        "notice": legacy_ops.SYSTEM_NOTICE,
    }
    status = error.portal_status if error else 200
    return render_page(request, "memory_ui/legacy/stores.html", "section", context, status)


@require_GET
@login_required
def store(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """A store's files, a page at a time (one entries-list call per page; `?page=` is the
    store's own opaque page token), newest changes first within the page."""
    found = store_or_404(request, key)
    cursor = request.GET.get("page") or None
    context: dict[str, object] = {
        "store": found,
        "offered": offered(found),
        "notice": legacy_ops.SYSTEM_NOTICE,
        "store_url": store_url(found),
        "first_page": cursor is None,
    }
    undo = request.GET.get("undo", "")
    if undo:
        # After a delete: the notice names the file from the session, never from the URL.
        context["undo"] = undo
        context["undo_label"] = item_undo_label(request.session, undo, found.key)
    status = 200
    try:
        page: ItemsPage = legacy_ops.legacy_files(user_actor(request), found, cursor)
    except LegacyStoreError as exc:
        context["error"] = exc
        context["retry_url"] = retry_url(exc, request.get_full_path())
        status = exc.portal_status
    else:
        base = reverse("legacy_file", args=[found.key])
        context["files_html"] = rows_html([FileRow.of(item, base) for item in page.items])
        if page.next_cursor:
            context["next_url"] = f"{store_url(found)}?{urlencode({'page': page.next_cursor})}"
    return render_page(request, "memory_ui/legacy/store.html", "files", context, status)


@require_GET
@login_required
def file(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """One file with its contents; for htmx (a file opened on the store page) the
    contents alone."""
    found = store_or_404(request, key)
    context: dict[str, object] = {
        "store": found,
        "offered": offered(found),
        "notice": legacy_ops.SYSTEM_NOTICE,
        "store_url": store_url(found),
    }
    status = 200
    try:
        path, item = read_file(request, found)
    except LegacyStoreError as exc:
        context["error"] = exc
        context["retry_url"] = retry_url(exc, request.get_full_path())
        status = exc.portal_status
    else:
        context.update(
            item=item,
            entries=entries_of(item),
            version=legacy_ops.file_version(item).token(),
            edit_url=file_url(found, path, "legacy_edit"),
            entry_url=file_url(found, path, "legacy_entry"),
            export_url=file_url(found, path, "legacy_export"),
            move_url=file_url(found, path, "legacy_move"),
            came_back=generic.item_came_back(user_actor(request), legacy_ops.SOURCE, item),
        )
    return render_page(request, "memory_ui/legacy/file.html", "contents", context, status)


@require_GET
@login_required
@never_cache
def export(request: HtmxHttpRequest, key: str) -> HttpResponseBase:
    """The store (or, with `?path=`, one file) as a .md download."""
    found = store_or_404(request, key)
    if not found.allows(Capability.EXPORT):
        raise Http404(found.missing(Capability.EXPORT))
    path = None
    if "path" in request.GET:
        form = LegacyFileForm(request.GET)
        if not form.is_valid():
            raise Http404("Not a memory file path.")
        path = form.cleaned_data["path"]
    try:
        text = legacy_ops.legacy_export(user_actor(request), found, path)
    except LegacyStoreError as exc:
        messages.error(request, f"Nothing was downloaded. {exc.message}")
        return redirect(file_url(found, path) if path else store_url(found))
    stem = found.key + (path.replace("/", "-").removesuffix(".md") if path else "")
    response = HttpResponse(text.encode("utf-8"), content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(True, f"{stem}.md")
    return response
