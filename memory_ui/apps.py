from django.apps import AppConfig


class MemoryUiConfig(AppConfig):
    name = "memory_ui"
    verbose_name = "Memory Portal"

    def ready(self) -> None:
        # The memory sources are checked at start-up: a wrong PORTAL_MEMORY_SOURCES stops
        # the portal here rather than on the first page that spans sources.
        from memory_ui.sources import registry

        registry.sources()
