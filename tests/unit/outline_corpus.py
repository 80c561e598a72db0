"""Random documents made of the line kinds `outline` tells apart (fences, items, headings,
breaks, setext underlines, lazy text, blanks), for differential checks of the scanner:
tests/unit/test_outline.py and bench/outline.py. Seeded, so every run sees the same ones."""

from __future__ import annotations

import random
from collections.abc import Iterator

_PIECES = [
    "",
    " ",
    "\t",
    "text",
    "Added 2026-01-01T00:00:00Z",
    "## Added 2026-01-02T00:00:00Z — why",
    "## Imported 2026-01-03 ##",
    "##",
    "## ",
    "##x",
    "# one",
    "### Added 2026-01-04",
    "-",
    "- ",
    "--",
    "---",
    "- - -",
    "***",
    "* * *",
    "___",
    "_ _",
    "-x",
    "- item",
    "-  item",
    "-      deep",
    "+ plus",
    "* star",
    "1. one",
    "12) twelve",
    "1234567890. long",
    "٣. arabic digit",
    "```",
    "````",
    "``` py",
    "``` a`b",
    "~~~",
    "~~~~ x",
    "> quote",
    "> ## Added 2026-01-05",
    "    code",
    "=",
    "===",
]
_INDENTS = ["", "", "", " ", "  ", "   ", "    ", "      ", "\t"]
_ENDS = ["\n", "\n", "\n", "\r\n", "\r"]


def random_documents(count: int, seed: int = 17, lines: int = 30) -> Iterator[str]:
    rng = random.Random(seed)
    for _ in range(count):
        parts = []
        for _ in range(rng.randrange(1, lines)):
            parts.append(rng.choice(_INDENTS) + rng.choice(_PIECES) + rng.choice(_ENDS))
        if rng.random() < 0.3:
            parts[-1] = parts[-1].rstrip("\r\n")  # no line end at the end of the document
        yield "".join(parts)
