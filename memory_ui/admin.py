from django.contrib import admin
from django.http import HttpRequest

from memory_ui.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read-only: the audit trail has no update or delete path."""

    list_display = (
        "created_at",
        "actor_upn",
        "action",
        "subject_upn",
        "scope",
        "agent_name",
        "outcome",
    )
    list_filter = ("action", "outcome", "actor_is_support")
    search_fields = ("actor_upn", "subject_upn", "ticket", "correlation_id")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AuditEvent | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: AuditEvent | None = None) -> bool:
        return False
