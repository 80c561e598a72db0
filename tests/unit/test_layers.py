"""The layers of docs/architecture.md ("Layers"), checked on every import statement.

From the bottom: transport.py, budget.py and text.py import nothing of the portal;
identity, models, signatures, resurfacing, history and audit nothing above them (audit knows a source's
name, never its package); documents/ (the markdown model) nothing of sources/, memory/ or web/;
sources/protocol.py nothing but identity and text (and agent_memory for a type);
sources/agent_memory.py (the memory pages' model) nothing of a source, memory/ or web/;
each source package under sources/
nothing of another source, of memory/ or of web/; memory/ never imports django.http,
django.shortcuts, django.urls or the web layer; web/ never reaches a source's transport
(its `client`); devstack and memory_ui never import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Every source package: a rule of its own keeps it from the others.
SOURCES = sorted(
    path.name
    for path in (ROOT / "memory_ui" / "sources").iterdir()
    if (path / "__init__.py").is_file()
)

# What sits above the ground floor (identity, models, audit) and must not be imported by it.
_ABOVE_GROUND = (
    "memory_ui.memory",
    "memory_ui.web",
    "memory_ui.auth",
    "memory_ui.admin",
    "memory_ui.templatetags",
    "memory_ui.documents",
    *(f"memory_ui.sources.{name}" for name in SOURCES),
)

# What a package may import all the same, though a rule forbids its prefix.
ALLOWED = {
    # agent_memory only for the type of `Source.memories` (under TYPE_CHECKING).
    "memory_ui/sources/protocol.py": (
        "memory_ui.identity",
        "memory_ui.text",
        "memory_ui.sources.agent_memory",
    ),
}

# (package or module, forbidden module prefixes, why); a package may always import itself.
RULES = [
    ("memory_ui/transport.py", ("memory_ui",), "the shared HTTP transport stands alone"),
    ("memory_ui/budget.py", ("memory_ui",), "the calls' deadline stands alone"),
    ("memory_ui/calls.py", ("memory_ui",), "the request's correlation id stands alone"),
    ("memory_ui/text.py", ("memory_ui",), "plain-text helpers every layer may import"),
    *(
        (f"memory_ui/{module}.py", _ABOVE_GROUND, "the ground floor imports nothing above it")
        for module in ("audit", "history", "identity", "models", "resurfacing", "signatures")
    ),
    (
        "memory_ui/documents",
        ("memory_ui.sources", "memory_ui.memory", "memory_ui.web", "memory_ui.auth"),
        "the document model sits below every source",
    ),
    ("memory_ui/sources/protocol.py", ("memory_ui",), "the protocol sits below every source"),
    (
        "memory_ui/sources/agent_memory.py",
        (
            "memory_ui.memory",
            "memory_ui.web",
            "memory_ui.templatetags",
            *(f"memory_ui.sources.{name}" for name in SOURCES),
        ),
        "the agent-memory model sits below every source, and names none",
    ),
    *(
        (
            f"memory_ui/sources/{name}",
            (
                "memory_ui.memory",
                "memory_ui.web",
                "memory_ui.templatetags",
                *(f"memory_ui.sources.{other}" for other in SOURCES if other != name),
            ),
            "a source stands on the protocol, never on another source or the layers above",
        )
        for name in SOURCES
    ),
    (
        "memory_ui/memory",
        ("django.http", "django.shortcuts", "django.urls", "memory_ui.web"),
        "memory knows nothing of requests, responses or URLs",
    ),
    (
        "memory_ui/web",
        tuple(f"memory_ui.sources.{name}.client" for name in SOURCES),
        "views reach a source through its operations, never its transport",
    ),
    ("memory_ui", ("devstack",), "the portal never imports the devstack"),
    ("devstack", ("memory_ui",), "the devstack never imports the portal"),
]


def imported_modules(path: Path) -> list[tuple[int, list[str]]]:
    """For each import statement in `path`: its line and the absolute names it may import
    a module by (`from memory_ui.sources.coreapi import client` may import memory_ui.sources.coreapi or
    memory_ui.sources.coreapi.client)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, [alias.name]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0]
                base = f"{parent}.{base}" if base else parent
            found.append((node.lineno, [base, *(f"{base}.{a.name}" for a in node.names)]))
    return found


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def violations(
    package: str, forbidden: tuple[str, ...], allowed: tuple[str, ...] = ()
) -> list[str]:
    own = package.removesuffix(".py").replace("/", ".")
    root = ROOT / package
    found = []
    for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
        for line, names in imported_modules(path):
            bad = [
                name
                for name in names
                if not _within(name, own)
                and not any(_within(name, a) for a in allowed)
                and any(_within(name, f) for f in forbidden)
            ]
            if bad:
                found.append(f"{path.relative_to(ROOT)}:{line} imports {bad[0]}")
    return found


@pytest.mark.parametrize(("package", "forbidden", "why"), RULES, ids=[r[0] for r in RULES])
def test_no_import_crosses_a_layer(package, forbidden, why):
    assert violations(package, forbidden, ALLOWED.get(package, ())) == [], why


def test_an_allowed_import_is_the_only_exception(tmp_path, monkeypatch):
    """protocol.py may import memory_ui.identity and memory_ui.text, nothing else of
    memory_ui."""
    fake = tmp_path / "memory_ui" / "sources"
    fake.mkdir(parents=True)
    (fake / "protocol.py").write_text(
        "from memory_ui.identity import Actor\nfrom memory_ui.audit import audit_record\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    protocol = "memory_ui/sources/protocol.py"
    assert violations(protocol, ("memory_ui",), ALLOWED[protocol]) == [
        "memory_ui/sources/protocol.py:2 imports memory_ui.audit",
    ]
    assert violations(protocol, ("memory_ui",)) == [
        "memory_ui/sources/protocol.py:1 imports memory_ui.identity",
        "memory_ui/sources/protocol.py:2 imports memory_ui.audit",
    ]


def test_the_check_sees_forbidden_imports(tmp_path, monkeypatch):
    """The walker itself: absolute, relative and from-imports of a module are all seen,
    and a package's imports of itself are not violations."""
    fake = tmp_path / "memory_ui" / "memory"
    fake.mkdir(parents=True)
    (fake / "bad.py").write_text(
        "import django.http\n"
        "from django.urls import reverse\n"
        "from ..web import views\n"
        "from memory_ui.sources.coreapi import client\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    memory_rule = next(rule for rule in RULES if rule[0] == "memory_ui/memory")
    assert violations("memory_ui/memory", memory_rule[1]) == [
        "memory_ui/memory/bad.py:1 imports django.http",
        "memory_ui/memory/bad.py:2 imports django.urls",
        "memory_ui/memory/bad.py:3 imports memory_ui.web",
    ]
    assert violations("memory_ui/memory", ("memory_ui.sources.coreapi.client",)) == [
        "memory_ui/memory/bad.py:4 imports memory_ui.sources.coreapi.client",
    ]
    assert violations("memory_ui/memory", ("memory_ui",)) == [
        "memory_ui/memory/bad.py:3 imports memory_ui.web",
        "memory_ui/memory/bad.py:4 imports memory_ui.sources.coreapi",
    ]


def test_the_check_sees_a_top_level_module_import_upwards(tmp_path, monkeypatch):
    """A rule for one module: what audit.py did (imported a helper from memory/) is seen."""
    (tmp_path / "memory_ui").mkdir()
    (tmp_path / "memory_ui" / "audit.py").write_text(
        "from memory_ui.documents import without_bidi_controls\n"
        "from memory_ui.models import AuditEvent\n"
        "from .text import without_bidi_controls\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert violations("memory_ui/audit.py", _ABOVE_GROUND) == [
        "memory_ui/audit.py:1 imports memory_ui.documents",
    ]


def view_imports(views: str = "memory_ui/web/views") -> list[str]:
    """Imports of one view module by another (`from .pages import x`, `from
    memory_ui.web.views import pages`, ...); the package itself names no view."""
    package = views.replace("/", ".")
    found = []
    for path in sorted((ROOT / views).glob("*.py")):
        this = f"{package}.{path.stem}"
        for line, names in imported_modules(path):
            others = [n for n in names if _within(n, package) and n not in (package, this)]
            if others:
                found.append(f"{path.relative_to(ROOT)}:{line} imports {others[0]}")
    return found


def test_no_view_module_imports_another():
    """What several views share lives outside views/ (issue 17): a view module that feeds
    others makes every change to it a change to them."""
    assert view_imports() == [], "share helpers through a module outside views/"


def test_the_view_check_sees_imports_of_views(tmp_path, monkeypatch):
    views = tmp_path / "memory_ui" / "web" / "views"
    views.mkdir(parents=True)
    (views / "__init__.py").write_text("")
    (views / "edit.py").write_text(
        "from memory_ui.web.views.pages import not_done\n"
        "from . import transfer\n"
        "from memory_ui.web import views\n"
        "from memory_ui.web.shared import not_done\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert view_imports() == [
        "memory_ui/web/views/edit.py:1 imports memory_ui.web.views.pages",
        "memory_ui/web/views/edit.py:2 imports memory_ui.web.views.transfer",
    ]
