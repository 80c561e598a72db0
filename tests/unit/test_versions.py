"""A document's version (`documents.versions.Version`): hashed once per memory object,
remembered only while that object lives, never shared between two objects of equal text."""

from __future__ import annotations

import gc
from dataclasses import dataclass
from datetime import UTC, datetime

from memory_ui.documents import versions
from memory_ui.documents.versions import Version


@dataclass(frozen=True)
class Memory:
    updated_on: datetime | None
    content_markdown: str


def test_a_memory_is_hashed_once_and_forgotten_with_it(monkeypatch) -> None:
    hashed = []
    real = versions.content_hash
    monkeypatch.setattr(versions, "content_hash", lambda text: hashed.append(text) or real(text))
    memory = Memory(datetime(2026, 12, 5, tzinfo=UTC), "- Aisle seats\n")

    first, again = Version.of(memory), Version.of(memory)

    assert first is again and len(hashed) == 1
    assert first.token() == f"2026-12-05T00:00:00+00:00|{real('- Aisle seats\n')}"
    remembered = len(versions._VERSIONS)
    del memory
    gc.collect()
    assert len(versions._VERSIONS) == remembered - 1


def test_another_object_with_the_same_fields_is_hashed_on_its_own(monkeypatch) -> None:
    hashed = []
    real = versions.content_hash
    monkeypatch.setattr(versions, "content_hash", lambda text: hashed.append(text) or real(text))
    one, other = Memory(None, "- Tea"), Memory(None, "- Tea")

    assert Version.of(one) == Version.of(other)
    assert len(hashed) == 2
