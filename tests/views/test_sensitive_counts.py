"""The dashboard's sensitive-data notice scans a memory once per version (counts only are
remembered: memory_ui.memory.flag_counts), on the fake CoreAPI."""

from __future__ import annotations

import pytest

from memory_ui.memory import flag_counts
from tests.views.helpers import HTMX, page_text

CARD = "4111 1111 1111 1111"


@pytest.fixture
def scans(monkeypatch) -> list[str]:
    """The texts flag_counts scans; it starts with nothing remembered."""
    flag_counts.forget()
    scanned: list[str] = []
    scan = flag_counts.sensitive_scan

    def counted(document, **kwargs):
        scanned.append(document.text)
        return scan(document, **kwargs)

    monkeypatch.setattr(flag_counts, "sensitive_scan", counted)
    yield scanned
    flag_counts.forget()


def test_an_unchanged_memory_is_not_scanned_again(alice, fake, scans) -> None:
    fake.put(f"# Notes\n\n- Visa {CARD} for hotels.\n", agent="travel-planner")
    first = alice.get("/memory/sensitive/notice", headers=HTMX)
    assert "1 entry may be sensitive" in page_text(first)
    assert any(CARD in text for text in scans)
    scanned_once = len(scans)
    again = alice.get("/memory/sensitive/notice", headers=HTMX)
    assert "1 entry may be sensitive" in page_text(again)
    assert len(scans) == scanned_once


def test_a_changed_memory_is_scanned_again(alice, fake, scans) -> None:
    fake.put("# Notes\n\n- Aisle seats.\n", agent="travel-planner")
    assert "Nothing in your memory looks sensitive." in page_text(
        alice.get("/memory/sensitive/notice", headers=HTMX)
    )
    fake.put(f"# Notes\n\n- Aisle seats.\n- Visa {CARD}.\n", agent="travel-planner")
    notice = alice.get("/memory/sensitive/notice", headers=HTMX)
    assert "1 entry may be sensitive" in page_text(notice)
    assert sum(CARD in text for text in scans) == 1


def test_only_counts_are_kept_never_text(alice, fake, scans) -> None:
    fake.put(f"# Notes\n\n- Visa {CARD} for hotels.\n", agent="travel-planner")
    alice.get("/memory/sensitive/notice", headers=HTMX)
    kept = list(flag_counts._counts.items())
    assert kept
    for key, count in kept:
        assert isinstance(key, bytes) and len(key) == 32  # an HMAC, not the text
        assert CARD.encode() not in key and CARD.replace(" ", "").encode() not in key
        assert (count.flagged, count.complete) in {(0, True), (1, True)}
