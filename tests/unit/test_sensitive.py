"""Sensitive-data detection (memory_ui/memory/sensitive/): the labelled corpus, masking,
where findings land in a document, and the work bound on hostile documents."""

from __future__ import annotations

import re
import time
import tomllib
from pathlib import Path

import pytest

from memory_ui.documents import parse_document
from memory_ui.memory.sensitive import (
    API_KEY,
    CARD,
    HEALTH,
    IBAN,
    KINDS,
    NATIONAL_ID,
    PASSWORD,
    PHONE,
    PRIVATE_KEY,
    Limits,
    sensitive_find,
    sensitive_scan,
)

CORPUS = tomllib.loads((Path(__file__).parent / "sensitive_corpus.toml").read_text())["case"]
SECRET_KINDS = {API_KEY, PASSWORD, PRIVATE_KEY, CARD, IBAN, NATIONAL_ID, PHONE}


def kinds_in(text: str) -> set[str]:
    matches, complete = sensitive_find(text)
    assert complete
    return {match.kind for match in matches}


@pytest.mark.parametrize("case", CORPUS, ids=[case["text"][:48] for case in CORPUS])
def test_corpus_case(case: dict) -> None:
    """Each labelled case finds exactly its kinds, apart from the errors the corpus
    records (`missed`, `false`), which bench/sensitive.py counts against precision and
    recall."""
    expected = (set(case["kinds"]) - set(case.get("missed", []))) | set(case.get("false", []))
    assert kinds_in(case["text"]) == expected


def test_corpus_labels_are_kinds_and_cover_each() -> None:
    labelled = set()
    for case in CORPUS:
        for key in ("kinds", "missed", "false"):
            assert set(case.get(key, [])) <= set(KINDS), case["text"]
        assert set(case.get("missed", [])) <= set(case["kinds"]), case["text"]
        assert not set(case.get("false", [])) & set(case["kinds"]), case["text"]
        labelled |= set(case["kinds"])
    assert labelled == set(KINDS)
    assert sum(not case["kinds"] for case in CORPUS) >= 15  # tricky negatives


@pytest.mark.parametrize("case", CORPUS, ids=[case["text"][:48] for case in CORPUS])
def test_excerpts_never_show_a_secret_whole(case: dict) -> None:
    text = case["text"]
    for match in sensitive_find(text)[0]:
        if match.kind not in SECRET_KINDS:
            continue
        value = text[match.start : match.end]
        assert value not in match.excerpt
        digits = re.sub(r"\D", "", value)
        if match.kind in (CARD, NATIONAL_ID, PHONE) and len(digits) > 6:
            assert re.sub(r"\D", "", match.excerpt).count(digits[:-4]) == 0
        if match.kind in (PASSWORD, PRIVATE_KEY):
            assert value[:4] not in match.excerpt.replace(text[: match.start], "")


def test_card_excerpt_keeps_the_last_four_digits_only() -> None:
    [match] = sensitive_find("Pays with 4111 1111 1111 1234 5678")[0] or [None]
    assert match is None  # 20 digits, and no prefix of it passes Luhn as a card
    [match] = sensitive_find("Visa 4111 1111 1111 1111 for hotels")[0]
    assert (
        match.excerpt
        == "Visa \u2022\u2022\u2022\u2022 \u2022\u2022\u2022\u2022 \u2022\u2022\u2022\u2022 1111 for hotels"
    )


def test_excerpt_masks_every_finding_in_it_and_drops_bidi_controls() -> None:
    text = "Card 4111111111111111 and key ghp_16C7e42F292c6912E7710c838347Ae178B4a \u202eevil"
    matches = sensitive_find(text)[0]
    assert [m.kind for m in matches] == [CARD, API_KEY]
    for match in matches:
        assert "4111111111111111" not in match.excerpt
        assert "16C7e42F292c" not in match.excerpt
        assert "\u202e" not in match.excerpt


def test_private_key_body_is_masked_to_its_end_line() -> None:
    body = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"
    text = f"key:\n-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\nafter"
    [match] = sensitive_find(text)[0]
    assert match.kind == PRIVATE_KEY
    assert text[match.start : match.end].endswith("-----END PRIVATE KEY-----")
    assert body[:8] not in match.excerpt


def test_health_terms_and_acronyms() -> None:
    assert kinds_in("Was diagnosed with ADHD as a child.") == {HEALTH}
    assert kinds_in("The new tool aids onboarding; std library only.") == set()


def test_phone_region_reads_national_numbers() -> None:
    text = "Mobile 07911 123456"
    assert {m.kind for m in sensitive_find(text, phone_region="GB")[0]} == {PHONE}
    assert sensitive_find(text, phone_region="US")[0] == []
    # Without a region only numbers with their country code count.
    assert [m.kind for m in sensitive_find("Mobile +44 7911 123456", phone_region=None)[0]] == [
        PHONE
    ]


# --- documents ----------------------------------------------------------------------------


def test_findings_land_on_their_entries() -> None:
    document = parse_document(
        "Intro with SSN 536-90-4399.\n\n"
        "## Added 2026-10-02T16:40:55Z \u2014 trip\n\n- Aisle seats, morning flights.\n\n"
        "## Added 2026-10-03T08:00:00Z \u2014 payment card\n\n- Visa 4111 1111 1111 1111\n"
        "- and a diagnosis of asthma\n"
    )
    scan = sensitive_scan(document)
    assert scan.complete
    assert [(f.part.kind, f.part.number, f.kinds) for f in scan.flagged] == [
        ("entry", 1, [NATIONAL_ID]),
        ("entry", 3, [CARD, HEALTH]),
    ]
    assert scan.flagged[1].part.entry is document.entries[2]


def test_findings_in_a_document_without_entries_land_on_list_items_or_the_rest() -> None:
    document = parse_document(
        "# Notes\n\nCall (415) 555-2671.\n\n- Laptop: ThinkPad.\n- Card 4111 1111 1111 1111\n"
        "  - nested: allergic to nuts\n"
    )
    scan = sensitive_scan(document)
    parts = [(f.part.kind, f.part.start_line, f.part.end_line, f.kinds) for f in scan.flagged]
    assert parts == [
        ("item", 5, 7, [CARD, HEALTH]),  # the nested item belongs to its top-level item
        ("document", 0, 8, [PHONE]),
    ]
    assert scan.flagged[0].part.item is document.list_items[1]


def test_terms_repeated_in_one_sentence_are_one_finding() -> None:
    scan = sensitive_scan(parse_document("- Diabetes, insulin and more insulin."))
    [flagged] = scan.flagged
    assert [f.kind for f in flagged.findings] == [HEALTH]


def test_empty_and_clean_documents() -> None:
    assert sensitive_scan(parse_document("")).flagged == []
    assert sensitive_scan(parse_document("- Prefers concise answers.\n")).flagged == []


# --- bounded work -------------------------------------------------------------------------


def test_budget_stops_the_scan_and_says_so() -> None:
    text = "\n".join(f"Call (415) 555-{2600 + i:04d} today" for i in range(50))
    matches, complete = sensitive_find(text, limits=Limits(phones=10))
    assert not complete
    assert len(matches) == 10
    matches, complete = sensitive_find(text, limits=Limits(findings=5))
    assert not complete
    assert len(matches) == 5
    assert sensitive_find(text)[1]


HOSTILE = [
    "//",
    "sk-",
    "eyJ",
    "1 ",
    "1-",
    "password ",
    "passwordpassword = '",
    "aws ",
    " ",
    "DE89 ",
    "+1 ",
    "(1",
    "-----BEGIN RSA PRIVATE KEY-----\n",
    "_authToken=",
    "api-key" + " " * 300,
]


@pytest.mark.parametrize("seed", HOSTILE, ids=[repr(seed[:12]) for seed in HOSTILE])
def test_hostile_documents_cost_linear_time(seed: str) -> None:
    """256 KiB of each shape that makes one of the libraries' patterns backtrack. With
    those patterns on whole lines the first ones took minutes; here each is well under a
    second (README, Sensitive data), so 5 s of CPU only fails on superlinear work."""
    text = (seed * (262144 // len(seed) + 1))[:262144]
    started = time.process_time()
    sensitive_find(text)
    assert time.process_time() - started < 5
