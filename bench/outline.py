"""Benchmark: the outline scanner's CPU time, against the single-loop version it replaced.

The old `outline` is loaded from commit e6a495d (`git show`, memory_ui/documents.py,
before issue 17 split it into a package); the new one is this tree's. Both run on every
shape of tests/shapes.py at 1 MiB, plus the ordinary ones (structured entries, a long
list), and on a page build (`Prepared(text).page(1)`). Before timing, both scanners must
agree on every shape and on `--random` random documents (fixed seed): any difference
stops the run.

    .venv/bin/python bench/outline.py [--size 1048576] [--repeat 7] [--random 2000]

Figures: process CPU time, best of `--repeat` runs, in seconds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import types
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run as a file: the repository's packages (memory_ui, tests) come from its root.
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
# Settings only (paging reads its limits): nothing is contacted.
os.environ.setdefault("PORTAL_DEVSTACK", "true")
os.environ.setdefault("DJANGO_DEBUG", "true")

OLD_COMMIT = "e6a495d"


def old_outline() -> Callable:
    """`outline` as it was at OLD_COMMIT, in a module of its own."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{OLD_COMMIT}:memory_ui/documents.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType("old_documents")
    sys.modules[module.__name__] = module  # dataclasses look their module up there
    exec(compile(source, f"{OLD_COMMIT}:documents.py", "exec"), module.__dict__)
    return module.outline


def best_cpu(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def first_page(prepared: Callable, text: str) -> object:
    return prepared(text).page(1)


def same(a, b) -> bool:
    """Two outlines agree: heading lines and matched text, items, blocks, open fence."""
    return (
        [(s, e, m[0]) for s, e, m in a.headings] == [(s, e, m[0]) for s, e, m in b.headings]
        and list(a.items) == list(b.items)
        and list(a.blocks) == list(b.blocks)
        and a.open_fence == b.open_fence
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1 << 20)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--random", type=int, default=2000)
    args = parser.parse_args()

    import django

    django.setup()
    from memory_ui.documents.outline import outline, split_lines
    from memory_ui.documents.paging import Prepared
    from tests.shapes import HOSTILE_SHAPES, long_list, structured
    from tests.unit.outline_corpus import random_documents

    old = old_outline()
    for text in random_documents(args.random, seed=17):
        lines = split_lines(text)
        if not same(old(lines), outline(lines)):
            sys.exit(f"old and new outline differ on {text!r}")
    print(f"{args.random} random documents: old and new outline agree")

    shapes = {"structured": structured, "long list": long_list, **HOSTILE_SHAPES}
    print(f"{'shape (1 MiB)':<20} {'old':>7} {'new':>7} {'ratio':>6}   page(1) new")
    for name, make in shapes.items():
        text = make(args.size)
        lines = split_lines(text)
        if not same(old(lines), outline(lines)):
            sys.exit(f"old and new outline differ on {name}")
        t_old = best_cpu(partial(old, lines), args.repeat)
        t_new = best_cpu(partial(outline, lines), args.repeat)
        t_page = best_cpu(partial(first_page, Prepared, text), max(1, args.repeat // 2))
        print(f"{name:<20} {t_old:7.3f} {t_new:7.3f} {t_new / t_old:6.2f}   {t_page:7.3f}")


if __name__ == "__main__":
    main()
