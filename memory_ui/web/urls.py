"""Every route of the portal, in one table. A memory's own pages are named
`<page>_<scope>` (`memory_agent`, `export_combined`, …): see `memory_ui.web.links`."""

from collections.abc import Callable

from django.urls import URLPattern, path, re_path

from memory_ui.web.views import (
    activity,
    batch,
    changes,
    deletes,
    edit,
    entry,
    history,
    moves,
    news,
    pages,
    receipts,
    restore,
    sensitive,
    signin,
    source_changes,
    source_history,
    source_move,
    sources,
    support_deletion,
    support_lookup,
    told,
    transfer,
)
from memory_ui.web.views import search as search_views

agent = "memory/agents/<slug:agent_name>"
deletion = "support/users/<slug:subject>/requests/<slug:request_id>"
# Where each memory's pages live: a page's route per scope is this + the page's suffix.
memory_home = {"user": "memory/user", "agent": agent, "combined": f"{agent}/combined"}


def per_memory(
    page: str, suffix: str, view: Callable, scopes: tuple[str, ...], *, scoped: bool = True
) -> list[URLPattern]:
    """One page of a memory, for each of `scopes`: `<page>_<scope>` at that scope's home +
    `suffix`; `scoped` passes the view `scope=` (views for one scope only go without)."""
    return [
        path(
            memory_home[scope] + suffix,
            view,
            {"scope": scope} if scoped else {},
            name=f"{page}_{scope}",
        )
        for scope in scopes
    ]


every_scope = ("user", "agent", "combined")
one_owner = ("user", "agent")  # a memory of its own: not what an agent sees combined

urlpatterns = [
    path("", pages.dashboard, name="dashboard"),
    # sign-in
    path("auth/login", signin.login_view, name="auth_login"),
    path("auth/callback", signin.callback_view, name="auth_callback"),
    path("auth/logout", signin.logout_view, name="auth_logout"),
    path("auth/signed-out", signin.signed_out_view, name="signed_out"),
    # reading
    path("cards/user", pages.card, {"scope": "user"}, name="card_user"),
    path("cards/agents", pages.cards, name="cards_agents"),
    path("cards/agents/<slug:agent_name>", pages.card, {"scope": "agent"}, name="card_agent"),
    *per_memory("memory", "", pages.show, every_scope),
    # changing
    path("memory/edit", edit.edit, name="memory_edit"),
    path("memory/edit/preview", edit.edit_preview, name="memory_edit_preview"),
    path("memory/append", changes.append, name="memory_append"),
    path("memory/clear", changes.clear, name="memory_clear"),
    path("memory/clear-everything", changes.clear_everything, name="memory_clear_everything"),
    path("memory/entries/edit", entry.entry_edit, name="memory_entry_edit"),
    *per_memory("entry", "/<int:index>", entry.entry_page, one_owner),
    path("memory/entries/delete", deletes.delete_entry, name="memory_delete_entry"),
    path("memory/items/delete", deletes.delete_list_item, name="memory_delete_item"),
    path("memory/undo", deletes.undo, name="memory_undo"),
    path("memory/history", history.history, name="memory_history"),
    path("memory/history/restore", history.restore_version, name="memory_history_restore"),
    path("memory/entries/move", moves.move, name="memory_entry_move"),
    path("memory/entries/move/confirm", moves.confirm, name="memory_entry_move_confirm"),
    path("memory/entries/move/retry", moves.retry, name="memory_entry_move_retry"),
    path("memory/entries/move/undo", moves.undo, name="memory_entry_move_undo"),
    # export and import one memory
    *per_memory("export", "/export", transfer.export, every_scope),
    path("export/everything", transfer.export_everything, name="export_everything"),
    *per_memory("import", "/import", transfer.import_form, one_owner, scoped=False),
    *per_memory(
        "import_preview", "/import/preview", transfer.import_preview, one_owner, scoped=False
    ),
    *per_memory(
        "import_confirm", "/import/confirm", transfer.import_confirm, one_owner, scoped=False
    ),
    # restore an "Export everything" zip
    path("import", restore.import_home, name="import_home"),
    path("import/archive", restore.import_archive, name="import_archive"),
    path("import/archive/<str:token>", restore.preview, name="import_archive_preview"),
    path("import/archive/<str:token>/apply", restore.apply, name="import_archive_apply"),
    # support staff, and what users see of it
    path("support/", support_lookup.support_home, name="support_home"),
    path("support/audit", activity.support_audit, name="support_audit"),
    path("support/users/<slug:subject>/", support_lookup.support_user, name="support_user"),
    path(
        "support/users/<slug:subject>/reveal", support_lookup.support_reveal, name="support_reveal"
    ),
    path(
        "support/users/<slug:subject>/requests",
        support_deletion.support_request_start,
        name="support_request_start",
    ),
    path(f"{deletion}/", support_deletion.support_request, name="support_request"),
    path(
        f"{deletion}/export", support_deletion.support_request_export, name="support_request_export"
    ),
    path(f"{deletion}/clear", support_deletion.support_request_clear, name="support_request_clear"),
    path(
        f"{deletion}/result", support_deletion.support_request_result, name="support_request_result"
    ),
    path(
        f"{deletion}/erase-again",
        support_deletion.support_request_erase_again,
        name="support_request_erase_again",
    ),
    path(f"{deletion}/receipt", receipts.support_receipt, name="support_receipt"),
    path(f"{deletion}/receipt.json", receipts.support_receipt_json, name="support_receipt_json"),
    # before support addresses carried an opaque id they carried the UPN (never a slug: @)
    re_path(r"^support/users/[^/]*@", support_lookup.support_old_address),
    path("activity", activity.activity, name="activity"),
    path("activity/receipts/<uuid:receipt_id>", receipts.receipt, name="receipt"),
    path("activity/receipts/<uuid:receipt_id>.json", receipts.receipt_json, name="receipt_json"),
    # every other memory system with its adapter (the registry's `Source.backend`)
    path("memory/sources/<slug:name>/", sources.section, name="source_section"),
    path("memory/sources/<slug:name>/target", sources.target, name="source_target"),
    path("memory/sources/<slug:name>/item", sources.item, name="source_item"),
    path("memory/sources/<slug:name>/edit", source_changes.edit, name="source_edit"),
    path("memory/sources/<slug:name>/entry", source_changes.entry, name="source_entry"),
    path("memory/sources/<slug:name>/delete", source_changes.delete, name="source_delete"),
    path("memory/sources/<slug:name>/undo", source_changes.undo, name="source_undo"),
    path("memory/sources/<slug:name>/resolve", source_changes.resolve, name="source_resolve"),
    path("memory/sources/<slug:name>/history", source_history.history, name="source_history"),
    path(
        "memory/sources/<slug:name>/history/restore",
        source_history.restore,
        name="source_history_restore",
    ),
    path("memory/sources/<slug:name>/clear", sources.clear, name="source_clear"),
    path("memory/sources/<slug:name>/export", sources.export, name="source_export"),
    path("memory/sources/<slug:name>/told", told.told, name="source_told"),
    path("memory/sources/<slug:name>/told/report", told.report, name="source_report"),
    path("memory/sources/<slug:name>/move", source_move.move, name="source_move"),
    # search across every memory
    path("search", search_views.search, name="search"),
    path("whats-new", news.whats_new_page, name="whats_new"),
    path("whats-new/seen", news.mark_all_seen, name="whats_new_seen"),
    path("memory/seen", news.mark_seen, name="memory_seen"),
    path("memory/select", batch.select, name="batch_select"),
    path("memory/select/preview", batch.preview, name="batch_preview"),
    path("memory/select/delete", batch.delete, name="batch_delete"),
    path("memory/select/undo", batch.undo, name="batch_undo"),
    # sensitive data: review flagged entries, and the dashboard's notice
    path("memory/sensitive", sensitive.review, name="sensitive_review"),
    path("memory/sensitive/notice", sensitive.notice, name="sensitive_notice"),
    # A source's own pages before they were the generic ones (`Source.moved_from`):
    # bookmarks still work. Last, so that no other page's address is taken for one.
    path("memory/<slug:prefix>", sources.moved, {"page": "source_section"}),
    *(
        path(f"memory/<slug:prefix>/<str:key>/{old}", sources.moved, {"page": page})
        for old, page in sources.MOVED_PAGES.items()
    ),
]
