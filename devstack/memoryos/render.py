"""The seed's three `format`s, for `context_snippet` and `system_prompt_addition`, the
token estimate, and fitting the context into `context_max_tokens`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

FORMATS = ("bullets", "json", "xml")
HEADER = "What you know about this user:"

# docs/memoryos.md, S9: a word, a punctuation mark or a newline is one token; the seed's
# example ("What you know about this user:\n- User prefers …") counts 18 this way.
_TOKEN = re.compile(r"\w+|[^\w\s]|\n")


@dataclass(frozen=True)
class Line:
    """One memory as the context shows it."""

    category: str
    content: str
    importance: float
    relevance: float


def token_count(text: str) -> int:
    return len(_TOKEN.findall(text))


def _bullets(lines: Sequence[Line]) -> str:
    return "\n".join([HEADER, *(f"- {line.content}" for line in lines)])


def _json(lines: Sequence[Line]) -> str:
    grouped: dict[str, list[str]] = {}  # categories in the order they first rank
    for line in lines:
        grouped.setdefault(line.category, []).append(line.content)
    return json.dumps({"memories": grouped}, indent=2, ensure_ascii=False)


def _xml_memory(line: Line, indent: str) -> str:
    return (
        f"{indent}<memory category={quoteattr(line.category)}>\n"
        f"{indent}  {escape(line.content)}\n"
        f"{indent}</memory>"
    )


def _xml(lines: Sequence[Line]) -> str:
    body = "\n".join(_xml_memory(line, "  ") for line in lines)
    return f"{HEADER}\n<memory_context>\n{body}\n</memory_context>"


_CONTEXTS: dict[str, Callable[[Sequence[Line]], str]] = {
    "bullets": _bullets,
    "json": _json,
    "xml": _xml,
}


def snippet(line: Line, form: str) -> str:
    """`context_snippet`: the one memory as the context would show it, without the header
    (docs/memoryos.md, S11)."""
    if form == "bullets":
        return f"- {line.content}"
    if form == "json":
        return _json([line])
    return _xml_memory(line, "")


def context(lines: Sequence[Line], form: str, max_tokens: int) -> tuple[str, int]:
    """`system_prompt_addition` and its token count, within `max_tokens`.

    Whole memories are dropped, lowest importance first (then lowest relevance), until the
    rest fits; nothing is cut mid-sentence. The kept ones stay in rank order. No memory
    left: an empty context (docs/memoryos.md, S10).
    """
    kept = list(lines)
    while kept:
        text = _CONTEXTS[form](kept)
        count = token_count(text)
        if count <= max_tokens:
            return text, count
        del kept[min(range(len(kept)), key=lambda i: (kept[i].importance, kept[i].relevance, -i))]
    return "", 0
