"""The keyed hashes of deleted memory (memory_ui/resurfacing.py): what normalisation
ignores and what it keeps, and that a hash depends on the secret and the person."""

from __future__ import annotations

import pytest

from memory_ui.resurfacing import digest, normalised

SAME = [
    ("- Prefers aisle seats.", "-   prefers\n  AISLE seats."),
    ("Straße", "STRASSE"),  # case folded, not only lowered
    ("\ufb01le \uff15", "file 5"),  # NFKC: the fi ligature, a full-width 5
    ("  tabs\tand\r\nnewlines ", "tabs and newlines"),
]
DIFFERENT = [
    ("- Prefers aisle seats.", "- Prefers window seats."),
    ("- Prefers aisle seats.", "Prefers aisle seats."),  # the list mark is text
    ("seats.", "seats"),
]


@pytest.mark.parametrize(("one", "other"), SAME)
def test_normalisation_ignores_spacing_case_and_compatibility_forms(one, other):
    assert normalised(one) == normalised(other)
    assert digest("alice@contoso.com", one) == digest("alice@contoso.com", other)


@pytest.mark.parametrize(("one", "other"), DIFFERENT)
def test_normalisation_keeps_the_words_and_marks(one, other):
    assert digest("alice@contoso.com", one) != digest("alice@contoso.com", other)


def test_a_hash_depends_on_the_secret_and_the_person(settings):
    text = "- Prefers aisle seats."
    alice = digest("alice@contoso.com", text)
    assert digest("ALICE@contoso.com", text) == alice  # UPNs compare case-insensitively
    assert digest("bob@contoso.com", text) != alice
    settings.PORTAL_RESURFACING_KEY = "another secret"
    assert digest("alice@contoso.com", text) != alice
    assert len(alice) == 64 and "aisle" not in alice


def test_nothing_is_kept_of_whitespace():
    assert digest("alice@contoso.com", " \n\t ") == ""
