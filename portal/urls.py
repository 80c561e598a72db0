from django.urls import include, path

from memory_ui.admin import admin_site

urlpatterns = [
    path("admin/", admin_site.urls),
    path("", include("memory_ui.web.urls")),
]

# A database outage answers a 503 page with Retry-After instead of a 500 (portal/outages.py).
handler500 = "portal.outages.server_error"
