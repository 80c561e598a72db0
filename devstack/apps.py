from django.apps import AppConfig


class DevstackConfig(AppConfig):
    """Only contributes the `devstack` and `devstack_token` management commands."""

    name = "devstack"
    verbose_name = "Devstack (development only)"
