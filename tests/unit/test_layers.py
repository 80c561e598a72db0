"""The layers of docs/architecture.md ("Layers"), checked on every import statement.

coreapi/ and legacy/ import nothing from memory_ui but the shared HTTP transport
(transport.py), which imports nothing from memory_ui itself; memory/ never imports django.http,
django.shortcuts, django.urls or the web layer; web/ never reaches the CoreAPI or legacy
store transport (every call goes through memory/); the modules below memory/ (audit,
identity, models, text) never import memory/, web/ or the sign-in and admin modules above
them; devstack and memory_ui never import each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# What memory/ may import from the top level of memory_ui must not import it back.
_ABOVE_MEMORY = (
    "memory_ui.memory",
    "memory_ui.web",
    "memory_ui.auth",
    "memory_ui.admin",
    "memory_ui.templatetags",
)

# What a package may import all the same, though a rule forbids its prefix.
ALLOWED = {
    "memory_ui/coreapi": ("memory_ui.transport",),
    "memory_ui/legacy": ("memory_ui.transport",),
}

# (package or module, forbidden module prefixes, why); a package may always import itself.
RULES = [
    ("memory_ui/coreapi", ("memory_ui",), "the CoreAPI client stands alone"),
    (
        "memory_ui/memory",
        ("django.http", "django.shortcuts", "django.urls", "memory_ui.web"),
        "memory knows nothing of requests, responses or URLs",
    ),
    ("memory_ui/web", ("memory_ui.coreapi.client",), "views reach CoreAPI through operations"),
    *(
        (f"memory_ui/{module}.py", _ABOVE_MEMORY, "memory/ builds on this module, not the reverse")
        for module in ("audit", "identity", "models")
    ),
    ("memory_ui/text.py", ("memory_ui",), "plain-text helpers every layer may import"),
    ("memory_ui", ("devstack",), "the portal never imports the devstack"),
    ("devstack", ("memory_ui",), "the devstack never imports the portal"),
    ("memory_ui/legacy", ("memory_ui",), "the legacy store client stands alone"),
    ("memory_ui/transport.py", ("memory_ui",), "the shared HTTP transport stands alone"),
    ("memory_ui/web", ("memory_ui.legacy.client",), "views reach legacy stores through memory"),
]


def imported_modules(path: Path) -> list[tuple[int, list[str]]]:
    """For each import statement in `path`: its line and the absolute names it may import
    a module by (`from memory_ui.coreapi import client` may import memory_ui.coreapi or
    memory_ui.coreapi.client)."""
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
    """coreapi/ may import memory_ui.transport, and nothing else from memory_ui."""
    fake = tmp_path / "memory_ui" / "coreapi"
    fake.mkdir(parents=True)
    (fake / "client.py").write_text(
        "from memory_ui.transport import exchange\nfrom memory_ui.text import clip\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert violations("memory_ui/coreapi", ("memory_ui",), ALLOWED["memory_ui/coreapi"]) == [
        "memory_ui/coreapi/client.py:2 imports memory_ui.text",
    ]
    assert violations("memory_ui/coreapi", ("memory_ui",)) == [
        "memory_ui/coreapi/client.py:1 imports memory_ui.transport",
        "memory_ui/coreapi/client.py:2 imports memory_ui.text",
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
        "from memory_ui.coreapi import client\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert violations("memory_ui/memory", RULES[1][1]) == [
        "memory_ui/memory/bad.py:1 imports django.http",
        "memory_ui/memory/bad.py:2 imports django.urls",
        "memory_ui/memory/bad.py:3 imports memory_ui.web",
    ]
    assert violations("memory_ui/memory", ("memory_ui.coreapi.client",)) == [
        "memory_ui/memory/bad.py:4 imports memory_ui.coreapi.client",
    ]
    assert violations("memory_ui/memory", ("memory_ui",)) == [
        "memory_ui/memory/bad.py:3 imports memory_ui.web",
        "memory_ui/memory/bad.py:4 imports memory_ui.coreapi",
    ]


def test_the_check_sees_a_top_level_module_import_upwards(tmp_path, monkeypatch):
    """A rule for one module: what audit.py did (imported a helper from memory/) is seen."""
    (tmp_path / "memory_ui").mkdir()
    (tmp_path / "memory_ui" / "audit.py").write_text(
        "from memory_ui.memory.documents import without_bidi_controls\n"
        "from memory_ui.models import AuditEvent\n"
        "from .text import without_bidi_controls\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert violations("memory_ui/audit.py", _ABOVE_MEMORY) == [
        "memory_ui/audit.py:1 imports memory_ui.memory.documents",
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
