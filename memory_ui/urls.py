from django.urls import include, path

from memory_ui import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("healthz", views.healthz, name="healthz"),
    path("auth/login", views.login_view, name="auth_login"),
    path("auth/callback", views.callback_view, name="auth_callback"),
    path("auth/logout", views.logout_view, name="auth_logout"),
    path("auth/signed-out", views.signed_out_view, name="signed_out"),
    path("cards/user", views.user_card, name="user_card"),
    path("cards/agents/<slug:agent_name>", views.agent_card, name="agent_card"),
    path("memory/user", views.user_memory, name="user_memory"),
    path("memory/agents/<slug:agent_name>", views.agent_memory, name="agent_memory"),
    path("memory/agents/<slug:agent_name>/combined", views.agent_combined, name="agent_combined"),
    path("", include("memory_ui.support")),
    path("", include("memory_ui.changes")),
    path("", include("memory_ui.transfer")),
]
