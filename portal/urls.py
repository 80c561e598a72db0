from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

from memory_ui.admin import admin_site


def favicon(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """Browsers ask for /favicon.ico on their own (before a page's icon link is read, for a
    download): send them to the icon every page names, rather than a 404."""
    return HttpResponsePermanentRedirect(static("img/favicon.svg"))


urlpatterns = [
    path("favicon.ico", favicon),
    path("admin/", admin_site.urls),
    path("", include("memory_ui.web.urls")),
]

# A database outage answers a 503 page with Retry-After instead of a 500 (portal/outages.py).
handler500 = "portal.outages.server_error"
