"""The audit trail in Django's admin: read-only, for support staff signed in via Entra."""

from django.contrib import admin
from django.contrib.auth.views import redirect_to_login
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memory_ui.audit import source_choices, source_label
from memory_ui.auth import current_identity
from memory_ui.models import AuditEvent


def _is_support(request: HttpRequest) -> bool:
    identity = current_identity(request)
    return bool(request.user.is_active and identity and identity.is_support)


class PortalAdminSite(admin.AdminSite):
    """Access by the support app role, not Django's staff flag; sign-in is the portal's."""

    site_header = "Memory Portal administration"
    site_title = "Memory Portal admin"

    def has_permission(self, request: HttpRequest) -> bool:
        return _is_support(request)

    def login(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        if request.user.is_authenticated:  # signed in, but not support staff
            return render(request, "403.html", status=403)
        return redirect_to_login(request.GET.get("next") or request.get_full_path())


admin_site = PortalAdminSite(name="admin")


class SystemFilter(admin.SimpleListFilter):
    """Events of one memory system, named as Activity and the audit trail name it."""

    title = "system"
    parameter_name = "source"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return source_choices()

    def queryset(
        self, request: HttpRequest, queryset: QuerySet[AuditEvent]
    ) -> QuerySet[AuditEvent]:
        return queryset.filter(source=self.value()) if self.value() else queryset


@admin.register(AuditEvent, site=admin_site)
class AuditEventAdmin(admin.ModelAdmin):
    """Read-only: the audit trail has no update or delete path."""

    list_display = (
        "created_at",
        "system",
        "actor_upn",
        "action",
        "subject_upn",
        "scope",
        "agent_name",
        "outcome",
    )
    list_filter = (SystemFilter, "action", "outcome", "actor_is_support")
    search_fields = ("actor_upn", "subject_upn", "ticket", "correlation_id")

    @admin.display(description="System", ordering="source")
    def system(self, event: AuditEvent) -> str:
        return source_label(event.source)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _is_support(request)

    def has_view_permission(self, request: HttpRequest, obj: AuditEvent | None = None) -> bool:
        return _is_support(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AuditEvent | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: AuditEvent | None = None) -> bool:
        return False
