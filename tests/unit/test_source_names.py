"""Nothing outside a source's package names it (issue 27): cross-source code loops over the
registry (`memory_ui.sources.registry`), which alone reads the sources' packages from
settings. Checked on every import statement of the portal's code.

The modules still listed in NOT_YET were written before the registry: CoreAPI's own memory
pages and the domain steps behind them (moves, batches, search, the archive, and the CoreAPI
side of the move out of a source being turned down). Until CoreAPI's pages go through the
protocol (docs/architecture.md, Memory sources), they are the debt this test keeps in
sight. The list only shrinks: a module that no longer imports a source must leave it, and no
module may join it (memory/source_move.py is memory/legacy_move.py renamed).
"""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_layers import ROOT, SOURCES, _within, imported_modules

# Module -> the sources it still imports, until its pages go through the registry.
NOT_YET: dict[str, set[str]] = {}


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
    found = naming_modules()
    new = {
        module: names for module, names in found.items() if not names <= NOT_YET.get(module, set())
    }
    assert new == {}, "loop over memory_ui.sources.registry instead of naming a source"


def test_the_list_of_modules_not_converted_yet_only_shrinks():
    found = naming_modules()
    done = {module: names - found.get(module, set()) for module, names in NOT_YET.items()}
    assert {module: names for module, names in done.items() if names} == {}, (
        "remove what no longer names a source from NOT_YET"
    )


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
