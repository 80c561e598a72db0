"""Nothing outside a source's package names it (issue 27): cross-source code loops over the
registry (`memory_ui.sources.registry`), which alone reads the sources' packages from
settings, and the portal's own memory pages reach the primary source as
`registry.memory_store()`. Checked on every import statement of the portal's code."""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_layers import ROOT, SOURCES, _within, imported_modules


def named_sources(path: Path) -> set[str]:
    """The source packages `path` imports (other than its own)."""
    own = path.relative_to(ROOT).parts
    found = set()
    for _, names in imported_modules(path):
        for name in SOURCES:
            if own[:3] == ("memory_ui", "sources", name):
                continue
            if any(_within(module, f"memory_ui.sources.{name}") for module in names):
                found.add(name)
    return found


def naming_modules() -> dict[str, set[str]]:
    found = {}
    for top in ("memory_ui", "portal"):
        for path in sorted((ROOT / top).rglob("*.py")):
            named = named_sources(path)
            if named:
                found[str(path.relative_to(ROOT))] = named
    return found


def test_no_module_outside_a_source_names_it():
    assert naming_modules() == {}, "loop over memory_ui.sources.registry instead of naming a source"


def test_the_check_sees_a_source_named_outside_its_package(tmp_path, monkeypatch):
    (tmp_path / "memory_ui" / "sources" / "legacy").mkdir(parents=True)
    (tmp_path / "memory_ui" / "sources" / "legacy" / "steps.py").write_text(
        "from memory_ui.sources.legacy import operations\n"
    )
    (tmp_path / "memory_ui" / "memory").mkdir()
    (tmp_path / "memory_ui" / "memory" / "everything.py").write_text(
        "from memory_ui.sources import registry\nfrom memory_ui.sources.legacy.steps import x\n"
    )
    (tmp_path / "portal").mkdir()
    monkeypatch.setattr("tests.unit.test_layers.ROOT", tmp_path)
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert naming_modules() == {"memory_ui/memory/everything.py": {"legacy"}}
