"""Card numbers: the Luhn check on digit runs with a card issuer's prefix."""

from __future__ import annotations

import re
from collections.abc import Iterator

from stdnum import luhn

from memory_ui.memory.sensitive.kinds import CARD
from memory_ui.memory.sensitive.scanner import Scanner, step

# Digits in groups separated by one space or hyphen: "4111 1111 1111 1111". The groups
# are matched possessively, so a long run of digits is one match, scanned once; the
# look-behind sits after the first digit so that the search can skip to digits quickly.
_DIGIT_GROUPS = re.compile(r"\d(?<![\w.,/+-]\d)(?:[ -]?\d)*+(?![\w]|[.,/-]\d)")
_GROUP = re.compile(r"\d+")
# Issuer prefixes of the card networks (Visa, Mastercard, American Express, Discover,
# JCB, Diners Club, UnionPay, Maestro): a Luhn-valid number with none of them is more
# likely an order or account number than a card.
_CARD_PREFIX = re.compile(
    r"4|5[1-5]|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)|3[47]|6011|64[4-9]|65"
    r"|35(?:2[89]|[3-8]\d)|30[0-5]|3[689]|62|50|5[6-8]|63|67"
)


def _digit_prefixes(run: str) -> Iterator[tuple[str, int]]:
    """The run's digits, then without its last group, and so on: a card number followed
    by its expiry or security code ("4111 1111 1111 1111 123") is still found."""
    groups = [(m[0], m.end()) for m in _GROUP.finditer(run)]
    for count in range(len(groups), 0, -1):
        yield "".join(g for g, _ in groups[:count]), groups[count - 1][1]


@step
def find_cards(scan: Scanner) -> None:
    for run in _DIGIT_GROUPS.finditer(scan.text):
        if not 13 <= run.end() - run.start() <= 64:
            continue  # too few digits, or not written like a card number
        for digits, length in _digit_prefixes(run[0]):
            if len(digits) < 13:
                break
            if len(digits) > 19:
                continue
            scan.check()
            if _CARD_PREFIX.match(digits) and luhn.is_valid(digits):
                scan.add(run.start(), run.start() + length, CARD)
                break
