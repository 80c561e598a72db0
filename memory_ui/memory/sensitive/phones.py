"""Phone numbers: phonenumbers' PhoneNumberMatcher, run only on short candidate spans."""

from __future__ import annotations

import re

import phonenumbers

from memory_ui.memory.sensitive.kinds import PHONE
from memory_ui.memory.sensitive.scanner import Scanner, named_nearby, step

_DIGITS_ONLY = re.compile(r"\d")
# Dates are not phone numbers (PhoneNumberMatcher says so too, a hundred times slower).
_DATE = re.compile(r"\d{4}([-/.])\d{1,2}\1\d{1,2}|\d{1,2}([-/.])\d{1,2}\2\d{2}(?:\d{2})?")
# Where a phone number could be: digits in groups with the separators people write, at
# least seven digits. Only these short spans reach PhoneNumberMatcher, whose own pattern
# is slow on long text.
_PHONE_CANDIDATE = re.compile(r"(?<![\w+])(?:\+|\()?\d(?:[ ().\-/]{0,3}\d)*+")
# Searched in the lower-cased text.
_PHONE_CONTEXT = re.compile(
    r"\b(?:phone|tel|telephone|mobile|cell|call|text|sms|whatsapp|signal|fax|contact"
    r"|reach|ring)\b"
)


@step
def find_phones(scan: Scanner, region: str | None) -> None:
    for candidate in _PHONE_CANDIDATE.finditer(scan.text):
        digits = len(_DIGITS_ONLY.findall(candidate[0]))
        if not 7 <= digits <= 15 or _DATE.fullmatch(candidate[0]):
            continue  # PhoneNumberMatcher rejects dates too, a hundred times slower
        if scan.claimed(candidate.start(), candidate.end()):
            continue
        scan.check("phones")
        for number in phonenumbers.PhoneNumberMatcher(
            candidate[0], region, leniency=phonenumbers.Leniency.STRICT_GROUPING, max_tries=4
        ):
            start, end = candidate.start() + number.start, candidate.start() + number.end
            # An ungrouped run of digits is a phone number only when the text says so.
            if number.raw_string.isdigit() and not named_nearby(_PHONE_CONTEXT, scan, start):
                continue
            scan.add(start, end, PHONE)
