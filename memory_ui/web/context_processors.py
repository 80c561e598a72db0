"""What every page's template may use: who is signed in, a form kept while they signed
in again, and the shared memory's one name (`USER_MEMORY_LABEL`)."""

from typing import Any

from django.http import HttpRequest

from memory_ui.auth import current_identity
from memory_ui.sources.agent_memory import USER_MEMORY_LABEL
from memory_ui.web.stores.pending_form import pending_form_take


def portal(request: HttpRequest) -> dict[str, Any]:
    if not hasattr(request, "session"):
        return {"identity": None, "USER_MEMORY_LABEL": USER_MEMORY_LABEL}
    identity = current_identity(request)
    pending = None
    if identity and request.method == "GET" and not getattr(request, "htmx", False):
        pending = pending_form_take(request.session, request.path)
    return {"identity": identity, "pending_form": pending, "USER_MEMORY_LABEL": USER_MEMORY_LABEL}
