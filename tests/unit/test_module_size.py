"""No module in memory_ui or portal is over 400 lines unless its docstring says why (a
paragraph starting "Over 400 lines:"): a newcomer should be able to read a module whole,
and a longer one should say what keeps it together."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 400
REASON = "Over 400 lines:"


def too_long(root: Path, packages: tuple[str, ...] = ("memory_ui", "portal")) -> list[str]:
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            text = path.read_text()
            lines = text.count("\n")
            docstring = ast.get_docstring(ast.parse(text, str(path))) or ""
            if lines > MAX_LINES and REASON not in docstring:
                found.append(f"{path.relative_to(root)} ({lines} lines)")
    return found


def test_long_modules_say_why():
    assert too_long(ROOT) == [], f'split it, or give the reason in its docstring: "{REASON} ..."'


def test_the_check_sees_a_long_module_without_a_reason(tmp_path):
    (tmp_path / "memory_ui").mkdir()
    (tmp_path / "portal").mkdir()
    body = "x = 1\n" * MAX_LINES
    (tmp_path / "memory_ui" / "short.py").write_text('"""Short."""\n' + "x = 1\n" * 399)
    (tmp_path / "memory_ui" / "long.py").write_text('"""Long."""\n' + body)
    (tmp_path / "portal" / "kept.py").write_text(f'"""Kept.\n\n{REASON} one transport."""\n' + body)
    assert too_long(tmp_path) == ["memory_ui/long.py (401 lines)"]
