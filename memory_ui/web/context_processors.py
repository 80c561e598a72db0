from typing import Any

from django.http import HttpRequest

from memory_ui.auth import current_identity


def portal(request: HttpRequest) -> dict[str, Any]:
    return {"identity": current_identity(request) if hasattr(request, "session") else None}
