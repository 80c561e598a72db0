from django.urls import include, path

from memory_ui.admin import admin_site

urlpatterns = [
    path("admin/", admin_site.urls),
    path("", include("memory_ui.web.urls")),
]
