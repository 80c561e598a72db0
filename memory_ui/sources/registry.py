"""The registry of memory sources, built from settings: the one place that knows which
sources this portal fronts. Everything that spans sources loops over `sources()` and never
names one (docs/architecture.md, Memory sources).

`PORTAL_MEMORY_SOURCES` lists the sources' packages by module path, in the order pages
show them. Each package offers `source() -> Source | None`, reading its own settings: None
when it is not configured in this deployment (the legacy stores without a base URL). The
list is checked when the app starts (an unknown package, a package without `source()`, two
sources of one name: the portal refuses to start) and built again whenever a setting
changes (tests).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed

from memory_ui.sources.agent_memory import AgentMemoryStore
from memory_ui.sources.protocol import Source

_lock = threading.Lock()
_built: tuple[Source, ...] | None = None


def build(modules: Iterable[str]) -> tuple[Source, ...]:
    """The sources the packages named in `modules` give, in that order."""
    found: list[Source] = []
    for module in modules:
        try:
            package = importlib.import_module(module)
        except ImportError as exc:
            raise ImproperlyConfigured(f"PORTAL_MEMORY_SOURCES: cannot import {module}") from exc
        make = getattr(package, "source", None)
        if not callable(make):
            raise ImproperlyConfigured(f"PORTAL_MEMORY_SOURCES: {module} has no source()")
        source = make()
        if source is None:
            continue
        if not isinstance(source, Source):
            raise ImproperlyConfigured(f"PORTAL_MEMORY_SOURCES: {module}.source() is no Source")
        if any(other.name == source.name for other in found):
            raise ImproperlyConfigured(f"PORTAL_MEMORY_SOURCES: two sources named {source.name}")
        found.append(source)
    if sum(source.primary for source in found) > 1:
        raise ImproperlyConfigured("PORTAL_MEMORY_SOURCES: more than one primary source")
    return tuple(found)


def sources() -> tuple[Source, ...]:
    """Every source configured here, in settings order."""
    global _built
    with _lock:
        if _built is None:
            _built = build(settings.PORTAL_MEMORY_SOURCES)
        return _built


def source(name: str) -> Source:
    """The source of that name (KeyError when none is configured: a page answers 404)."""
    for found in sources():
        if found.name == name:
            return found
    raise KeyError(name)


def others() -> tuple[Source, ...]:
    """The sources beside the primary one, whose memory pages are the portal's own."""
    return tuple(found for found in sources() if not found.primary)


def memory_store() -> AgentMemoryStore:
    """The primary source's agent-memory store: what the portal's own memory pages read and
    change (docs/architecture.md, Memory sources)."""
    for found in sources():
        if found.primary and found.memories is not None:
            return found.memories
    raise ImproperlyConfigured("PORTAL_MEMORY_SOURCES: no primary source keeps agent memory")


def memory_source() -> str:
    """The name of the source behind `memory_store()` (what its deletes are kept under:
    memory_ui/resurfacing.py)."""
    for found in sources():
        if found.primary and found.memories is not None:
            return found.name
    raise ImproperlyConfigured("PORTAL_MEMORY_SOURCES: no primary source keeps agent memory")


def title(name: str) -> str:
    """What people read for a source's name as audit events keep it (the name itself for a
    source no longer configured)."""
    for found in sources():
        if found.name == name:
            return found.title
    return name


def reset(**_: object) -> None:
    global _built
    with _lock:
        _built = None


setting_changed.connect(reset, dispatch_uid="memory_ui.sources.registry")
