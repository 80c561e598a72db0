from django.http import HttpRequest, HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

from memory_ui.admin import admin_site


@require_safe
@cache_control(max_age=86400)
def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """Browsers ask for /favicon.ico on their own (before a page's icon link is read, for a
    download): send them to the icon every page names, rather than a 404. Not a permanent
    redirect: the icon's name carries its content hash, which a new release may change."""
    return HttpResponseRedirect(static("img/favicon.svg"))


urlpatterns = [
    path("favicon.ico", favicon),
    path("admin/", admin_site.urls),
    path("", include("memory_ui.web.urls")),
]

# A database outage answers a 503 page with Retry-After instead of a 500 (portal/outages.py).
handler500 = "portal.outages.server_error"
