"""What arrived meanwhile (`arrivals`) and whether an unanswered addition landed (`landed`):
the two checks that let a change go through an agent's append and keep a re-sent note
from being added twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_ui.documents import appended, content_hash, entry_heading, remove_entry
from memory_ui.documents.arrivals import MAX_ARRIVED, appended_since, with_arrivals
from memory_ui.documents.landed import CLOCK_SLACK, landed_block

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
SEEN = (
    "## Added 2026-01-01T00:00:00Z \u2014 style\n\n- Writes in British English.\n\n"
    "## Added 2026-01-02T00:00:00Z\n\n- Has a dog.\n"
)


def _append(text: str, body: str, reason: str = "", when: datetime = NOW) -> str:
    return appended(text, entry_heading("Added", when, reason), body)


# --- appended_since ----------------------------------------------------------------------


def test_one_append_after_the_seen_version_is_found_verbatim():
    current = _append(SEEN, "- MAD 10:00", "Flight to Madrid")
    arrived = appended_since(current, content_hash(SEEN))
    assert arrived is not None
    assert arrived.seen == SEEN
    assert arrived.tail == current[len(SEEN.rstrip()) + 2 :]
    assert [e.reason for e in arrived.entries] == ["Flight to Madrid"]
    assert arrived.notice == (
        "\u201cFlight to Madrid\u201d was added while you were changing this memory; both are kept."
    )


def test_several_appends_are_named_and_counted():
    current = SEEN
    for n in range(5):
        current = _append(current, f"- fact {n}")
    arrived = appended_since(current, content_hash(SEEN))
    assert arrived is not None and len(arrived.entries) == 5
    assert arrived.notice.startswith("5 entries were added")
    assert "\u201cfact 0\u201d, \u201cfact 1\u201d, \u201cfact 2\u201d and 2 more" in arrived.notice


@pytest.mark.parametrize(
    "seen",
    [
        "",  # an empty memory
        "Free text without entries.\n",  # not structured
        "Free text, no newline at the end",
        "- a list\n\n",  # a trailing blank line the append strips
        "Windows line ends\r\n",
    ],
)
def test_the_seen_version_is_found_whatever_its_ending(seen: str):
    current = _append(seen, "- new")
    arrived = appended_since(current, content_hash(seen))
    assert arrived is not None and arrived.seen == seen
    assert with_arrivals(seen, arrived).rstrip() == current.rstrip()


def test_an_unusual_ending_is_not_guessed_and_stays_a_conflict():
    seen = "- a list\n\n\n\n"
    assert appended_since(_append(seen, "- new"), content_hash(seen)) is None


def test_a_change_to_a_seen_entry_is_an_overlap():
    current = _append(SEEN.replace("dog", "cat"), "- new")
    assert appended_since(current, content_hash(SEEN)) is None


def test_a_removed_entry_or_a_replaced_document_is_an_overlap():
    assert appended_since(_append(remove_entry(SEEN, 1), "- new"), content_hash(SEEN)) is None
    assert appended_since("## Added 2026-02-02T00:00:00Z\n\n- x\n", content_hash(SEEN)) is None
    # Text added without an entry heading is not an append either.
    assert appended_since(SEEN + "\n- tacked on\n", content_hash(SEEN)) is None


def test_only_the_latest_entries_are_tried():
    current = SEEN
    for n in range(MAX_ARRIVED + 1):
        current = _append(current, f"- fact {n}")
    assert appended_since(current, content_hash(SEEN)) is None
    shorter = SEEN
    for n in range(MAX_ARRIVED):
        shorter = _append(shorter, f"- fact {n}")
    assert appended_since(shorter, content_hash(SEEN)) is not None


def test_a_change_keeps_what_arrived_after_it():
    current = _append(SEEN, "- MAD 10:00", "Flight to Madrid")
    arrived = appended_since(current, content_hash(SEEN))
    assert arrived is not None
    merged = with_arrivals(remove_entry(arrived.seen, 1), arrived)
    assert "Has a dog" not in merged
    assert merged.startswith("## Added 2026-01-01T00:00:00Z")
    assert merged.endswith("\n\n- MAD 10:00\n")
    # Everything removed: only what arrived is left, as it arrived.
    assert with_arrivals("", arrived) == arrived.tail


# --- landed_block --------------------------------------------------------------------------


def test_an_unanswered_note_is_found_by_its_text_reason_and_time():
    current = _append(SEEN, "- Likes aisle seats.", "Seats", NOW + timedelta(seconds=1))
    found = landed_block(current, "added", "- Likes aisle seats.\n", NOW, "Seats")
    assert found is not None and found.index == 2
    assert landed_block(current, "added", "- Likes aisle seats.", NOW, "Other reason") is None
    assert landed_block(current, "added", "- Likes aisle seats.", NOW) is None
    assert landed_block(current, "added", "- Likes aisle", NOW, "Seats") is None
    assert landed_block(current, "imported", "- Likes aisle seats.", NOW, "Seats") is None


def test_the_same_note_added_long_before_is_not_taken_for_it():
    old = NOW - CLOCK_SLACK - timedelta(seconds=1)
    current = _append(SEEN, "- Likes aisle seats.", when=old)
    assert landed_block(current, "added", "- Likes aisle seats.", NOW) is None
    # Within the slack it is: CoreAPI's clock may run behind the portal's.
    current = _append(SEEN, "- Likes aisle seats.", when=NOW - CLOCK_SLACK)
    assert landed_block(current, "added", "- Likes aisle seats.", NOW) is not None


def test_an_import_holding_entries_of_its_own_is_found_whole():
    imported = "## Added 2025-01-01T00:00:00Z\n\n- old fact\n\n## Added 2025-01-02T00:00:00Z\n\n- b"
    current = appended(SEEN, entry_heading("Imported", NOW), imported)
    assert landed_block(current, "imported", imported, NOW) is not None
    assert landed_block(current, "imported", imported + "\n- more", NOW) is None
    plain = appended(SEEN, entry_heading("Imported", NOW), "- one\n- two")
    assert landed_block(plain, "imported", "- one\n- two\n", NOW) is not None
    assert landed_block(plain, "imported", "- one", NOW) is None
