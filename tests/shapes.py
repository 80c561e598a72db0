"""Memory documents at scale, for the benchmark (bench/portal.py) and the tests that bound
the portal's work on them: the shapes agents write, and hostile ones."""

from __future__ import annotations

from collections.abc import Callable


def structured(size: int, body: int = 480, salt: str = "") -> str:
    """Entries as the emulator appends them, each with a ~`body`-byte list, to `size` bytes."""
    parts, total, n = [], 0, 0
    while total < size:
        day = 1 + n % 28
        text = f"## Added 2026-10-{day:02d}T09:{n % 60:02d}:00Z \u2014 Reason {n}{salt}\n\n"
        text += f"> operation: op-{n} \u00b7 session: s-{n}\n\n"
        line = f"- Fact {n}: the user mentioned **travel** on _day {day}_ and [a link](https://example.com/{n}).\n"
        text += line * max(1, body // len(line)) + "\n"
        parts.append(text)
        total += len(text)
        n += 1
    return "".join(parts)


def long_list(size: int) -> str:
    line = "- A remembered fact with `code` and *emphasis*, item number {n}.\n"
    return "".join(line.format(n=n) for n in range(size // len(line)))


HOSTILE_SHAPES: dict[str, Callable[[int], str]] = {
    "image openers ![": lambda n: "![" * (n // 2),
    "link openers [": lambda n: "[" * n,
    "emphasis *a": lambda n: "*a" * (n // 2),
    "nested quotes >": lambda n: ">" * min(n, 100_000) + " x\n",
    "nested lists": lambda n: "".join("  " * i + "- x\n" for i in range(3000))[:n],
    "backticks": lambda n: "`a" * (n // 2),
    "table columns": lambda n: ("|a" * 2000 + "|\n" + "|-" * 2000 + "|\n") * (n // 8000),
    "entry headings": lambda n: "## Added 2026-01-01T00:00:00Z\n\n" * (n // 32),
    "dash lines": lambda n: "-\n" * (n // 2),
}
