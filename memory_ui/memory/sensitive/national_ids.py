"""National ids: python-stdnum's validators of common countries.

To add a country: a distinctive written format goes in `_ID_FORMATS` (found without a
word naming it), a bare digit count in `_ID_BY_LENGTH` (found only next to a word of
`_ID_CONTEXT`, where the country's name for the id goes too); then a case in
tests/unit/sensitive_corpus.toml."""

from __future__ import annotations

import re
from collections.abc import Iterable
from types import ModuleType

from stdnum.au import tfn
from stdnum.be import nn
from stdnum.br import cpf
from stdnum.ca import sin
from stdnum.ch import ssn as ch_ssn
from stdnum.cn import ric
from stdnum.de import idnr
from stdnum.dk import cpr
from stdnum.es import dni, nie
from stdnum.fi import hetu
from stdnum.fr import nir
from stdnum.gb import nhs
from stdnum.ie import pps
from stdnum.in_ import aadhaar
from stdnum.it import codicefiscale
from stdnum.kr import rrn
from stdnum.mx import curp
from stdnum.nl import bsn
from stdnum.no import fodselsnummer
from stdnum.pl import pesel
from stdnum.se import personnummer
from stdnum.us import ssn as us_ssn
from stdnum.za import idnr as za_idnr

from memory_ui.memory.sensitive.kinds import NATIONAL_ID
from memory_ui.memory.sensitive.scanner import Scanner, named_nearby, step

# Written formats distinctive enough to flag without a word naming them (a fixed layout
# of separators or letters), each with the validators that check such a number.
_ID_FORMATS: tuple[tuple[str, tuple[ModuleType, ...]], ...] = (
    (r"\d{3}-\d{2}-\d{4}", (us_ssn,)),
    (r"\d{6}[-+A-FU-Y]\d{3}[0-9A-Y]", (hetu,)),
    (r"(?:\d{2})?\d{6}[-+]\d{4}", (personnummer,)),
    (r"\d{6}-\d{7}", (rrn,)),
    (r"\d{8}-?[A-Z]", (dni,)),
    (r"[XYZ]-?\d{7}-?[A-Z]", (nie,)),
    (r"[A-Z]{6}\d{2}[A-Z]\d{2}[A-Z]\d{3}[A-Z]", (codicefiscale,)),
    (r"[12] \d{2} \d{2} (?:\d{2}|2[AB]) \d{3} \d{3} \d{2}", (nir,)),
    (r"756\.\d{4}\.\d{4}\.\d{2}", (ch_ssn,)),
    (r"\d{3}\.\d{3}\.\d{3}-\d{2}", (cpf,)),
    (r"\d{2}\.\d{2}\.\d{2}-\d{3}\.\d{2}", (nn,)),
    (r"[A-Z]{4}\d{6}[HM][A-Z]{5}[0-9A-Z]\d", (curp,)),
)
_ID_FORMAT_CHECKS = [(re.compile(pattern), validators) for pattern, validators in _ID_FORMATS]
# All of them in one pass, not inside a longer word or number (ids keep their own hyphens
# and dots).
_ID_FORMAT = re.compile(
    r"(?<![\w.-])(?:" + "|".join(pattern for pattern, _ in _ID_FORMATS) + r")(?![\w]|[.-]\w)"
)

# Bare digits (or digits in plain groups) are ids only next to a word that names one;
# otherwise they are order numbers, amounts and references.
_ID_DIGITS = re.compile(r"\d(?<![\w.,/+-]\d)(?:[ .-]?\d)*+[A-Za-z]{0,2}(?![\w]|[.,/-]\d)")
_ID_BY_LENGTH: dict[int, tuple[ModuleType, ...]] = {
    8: (pps, tfn),
    9: (us_ssn, bsn, sin, tfn, pps),
    10: (personnummer, cpr, nhs),
    11: (fodselsnummer, pesel, idnr, cpf, cpr),
    12: (aadhaar, personnummer),
    13: (za_idnr, rrn),
    15: (nir,),
    18: (ric,),
}
_ID_SEPARATORS = re.compile(r"[ .-]")
# Searched in the lower-cased text.
_ID_CONTEXT = re.compile(
    r"\b(?:ssn|social security|national (?:insurance|id|identity)|id(?:entity)? (?:number|no)"
    r"|identification|personal (?:number|code)|personnummer|f[øo]dselsnummer|cpr|hetu"
    r"|henkil[öo]tunnus|bsn|burgerservicenummer|pesel|nir|s[ée]curit[ée] sociale|dni|nie"
    r"|codice fiscale|tax (?:id|file number)|tin|steuer-?id|idnr|steueridentifikationsnummer"
    r"|sin|social insurance|cpf|aadhaa?r|tfn|pps|rrn|resident registration|nhs|curp"
    r"|passport|id card|identity card)\b"
)


def _valid(validators: Iterable[ModuleType], value: str, scan: Scanner) -> bool:
    for validator in validators:
        scan.check()
        if validator.is_valid(value):
            return True
    return False


@step
def find_national_ids(scan: Scanner) -> None:
    text = scan.text
    for candidate in _ID_FORMAT.finditer(text):
        validators = (
            validator
            for pattern, validators in _ID_FORMAT_CHECKS
            if pattern.fullmatch(candidate[0])
            for validator in validators
        )
        if _valid(validators, candidate[0], scan):
            scan.add(candidate.start(), candidate.end(), NATIONAL_ID)
    for candidate in _ID_DIGITS.finditer(text):
        if candidate.end() - candidate.start() > 32:
            continue
        value = _ID_SEPARATORS.sub("", candidate[0]).upper()
        validators = _ID_BY_LENGTH.get(len(value), ())
        if (
            validators
            and not scan.claimed(candidate.start(), candidate.end())
            and named_nearby(_ID_CONTEXT, scan, candidate.start())
            and _valid(validators, value, scan)
        ):
            scan.add(candidate.start(), candidate.end(), NATIONAL_ID)
