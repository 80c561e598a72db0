"""Sensitive data in memory: entries that look like secrets or regulated data.

Agents write memory from conversations, so a pasted API key, a card number or a
diagnosis can end up in it. This module flags such entries for the person to review; it
never changes memory. It is pure (text in, findings out) and keeps nothing: the portal
scans on request, and neither findings nor excerpts are stored or logged.

What is checked, and with what (docs/architecture.md, Sensitive data):

- API keys and tokens, private keys, passwords: detect-secrets' plugins, called as a
  library on bounded chunks (its regex detectors; its keyword detector on a short window
  after each keyword; its Shannon entropy with its base64 limit on unquoted words);
- card numbers: python-stdnum's Luhn check on 13-19 digit numbers with a card issuer's
  prefix;
- IBANs: python-stdnum (country formats and the ISO 7064 check);
- national ids: python-stdnum's validators of common countries, on their written
  formats, and for bare digit runs only next to a word naming an id;
- phone numbers: phonenumbers' PhoneNumberMatcher (strict grouping, a default region
  for numbers written without +country code), run only on short candidate spans;
- health and financial information: a small word list (no maintained library names
  such terms without a language model this deployment cannot download).

Memory documents can be megabytes and are written by whoever controls an agent's
prompt, so every pattern here runs in linear time (no nested or adjacent quantifiers
over the same characters), third-party regexes only see bounded windows, and every
library call is paid from a per-document budget: when it runs out, the scan says it is
incomplete rather than taking longer.
"""

from __future__ import annotations

import bisect
import re
import string
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import wraps
from types import ModuleType
from typing import Literal

import phonenumbers
from detect_secrets.filters.heuristic import (
    is_potential_uuid,
    is_sequential_string,
    is_templated_secret,
)
from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import (
    CONFIG_DENYLIST_REGEX_TO_GROUP,
    DENYLIST,
    KeywordDetector,
)
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector
from stdnum import iban, luhn
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

from memory_ui.memory.documents import Document, Entry, ListItem, without_bidi_controls

# --- what is found -----------------------------------------------------------------------

API_KEY = "API key or token"
PRIVATE_KEY = "Private key"
PASSWORD = "Password or secret"
CARD = "Card number"
IBAN = "IBAN"
NATIONAL_ID = "National ID"
PHONE = "Phone number"
HEALTH = "Health information"
FINANCE = "Financial information"

KINDS = (API_KEY, PRIVATE_KEY, PASSWORD, CARD, IBAN, NATIONAL_ID, PHONE, HEALTH, FINANCE)

# Numbers written without "+country code" are read as numbers of this region.
DEFAULT_PHONE_REGION = "US"


@dataclass(frozen=True, slots=True)
class Match:
    """One finding in a text: what kind, where (offsets into the text), and an excerpt
    around it with every finding in it masked."""

    kind: str
    start: int
    end: int
    excerpt: str


@dataclass(frozen=True, slots=True)
class Part:
    """What a finding belongs to, as the memory page shows it and can delete it: a dated
    entry, a top-level list item of a document without entries, or the rest of such a
    document (which can only be edited as a whole)."""

    kind: Literal["entry", "item", "document"]
    start_line: int
    end_line: int
    entry: Entry | None = None
    item: ListItem | None = None
    number: int = 0  # 1-based, as the memory page numbers entries and items


@dataclass(frozen=True, slots=True)
class Flagged:
    part: Part
    findings: tuple[Match, ...]

    @property
    def kinds(self) -> list[str]:
        found = {finding.kind for finding in self.findings}
        return [kind for kind in KINDS if kind in found]


@dataclass(frozen=True, slots=True)
class Scan:
    flagged: list[Flagged]
    complete: bool  # False when the work budget ran out before the end of the document


@dataclass(frozen=True, slots=True)
class Limits:
    """Work one document may cost: library calls, each on a bounded piece of text, so
    the total is bounded too. `checks` counts the cheap ones (a checksum, a detect-secrets
    chunk or window); phone parses (about 0.3 ms each) and keyword windows (about 0.15 ms)
    have their own counts. With these defaults a hostile 1 MiB document costs about a
    second of CPU at most (README, Sensitive data)."""

    checks: int = 20_000
    phones: int = 1_000
    keywords: int = 2_000
    findings: int = 200
    chunk: int = 4096  # characters handed to detect-secrets' regexes at once
    keyword_window: int = 160  # characters after a keyword the keyword detector sees


# --- scanning ------------------------------------------------------------------------------


def sensitive_scan(
    document: Document,
    *,
    phone_region: str | None = DEFAULT_PHONE_REGION,
    limits: Limits = Limits(),  # frozen: one shared default is safe
) -> Scan:
    """Every part of `document` with something that may be sensitive, in document order."""
    matches, complete = sensitive_find(document.text, phone_region=phone_region, limits=limits)
    parts = _parts(document)
    line_starts = _line_starts(document.text)
    by_part: dict[int, list[Match]] = {}
    for match in matches:
        line = bisect.bisect_right(line_starts, match.start) - 1
        where = _part_at(parts, line)
        if where is not None:
            by_part.setdefault(where, []).append(match)
    flagged = [
        # One line per kind and excerpt: "diabetes" and "insulin" in one sentence are one.
        Flagged(parts[i], tuple({(m.kind, m.excerpt): m for m in found}.values()))
        for i, found in sorted(by_part.items())
    ]
    return Scan(flagged, complete)


def sensitive_find(
    text: str,
    *,
    phone_region: str | None = DEFAULT_PHONE_REGION,
    limits: Limits = Limits(),
) -> tuple[list[Match], bool]:
    """What in `text` may be sensitive, in text order, and whether all of it was checked."""
    scan = _Scanner(text, limits, text.translate(_ASCII_LOWER))
    for step in (_secrets, _cards, _ibans, _national_ids, _terms):
        step(scan)
    _phones(scan, phone_region)
    return scan.matches(), not scan.exhausted


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


class _Exhausted(Exception):
    """The budget ran out: stop this step, keep what was found."""


@dataclass
class _Scanner:
    text: str
    limits: Limits
    # ASCII letters lower-cased, same length and offsets: word searches run on this.
    lower: str = ""
    exhausted: bool = False
    _spans: list[tuple[int, int, str]] = field(default_factory=list)  # sorted, disjoint
    _spent: dict[str, int] = field(default_factory=dict)

    def check(self, pool: Literal["checks", "phones", "keywords"] = "checks") -> None:
        """Pay for one library call from `pool`."""
        spent = self._spent[pool] = self._spent.get(pool, 0) + 1
        if spent > getattr(self.limits, pool):
            self.exhausted = True
            raise _Exhausted

    def claimed(self, start: int, end: int) -> bool:
        """Some finding already covers part of [start, end)."""
        i = bisect.bisect_left(self._spans, (end,))
        return i > 0 and self._spans[i - 1][1] > start

    def add(self, start: int, end: int, kind: str) -> None:
        """A finding, unless an earlier (more specific) step found something there."""
        if start >= end or self.claimed(start, end):
            return
        if len(self._spans) >= self.limits.findings:
            self.exhausted = True
            raise _Exhausted
        bisect.insort(self._spans, (start, end, kind))

    def matches(self) -> list[Match]:
        return [
            Match(kind, s, e, _excerpt(self.text, s, e, self._spans)) for s, e, kind in self._spans
        ]


def _step[**P](function: Callable[P, None]) -> Callable[P, None]:
    """A step stops where the budget runs out, keeping what it found; the later steps
    still run, and stop at their first library call (the word lists need none)."""

    @wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            function(*args, **kwargs)
        except _Exhausted:
            pass

    return run


# --- API keys, tokens, private keys and passwords (detect-secrets) -----------------------


@dataclass(frozen=True)
class _Detector:
    """One of detect-secrets' detectors and where it may run.

    `needs`: literals every match of its patterns contains; a chunk without any of them
    is skipped (most chunks: this is where the time goes otherwise). `around`: its
    patterns backtrack quadratically on long text (tens of milliseconds per 4 KiB chunk
    of "//" or "sk-"), so they only see short windows around these literals, at most
    `_AROUND_WINDOWS` per document. `value_group`: the group holding the credential when
    the pattern also matches its label ("aws_secret = '…'"); elsewhere a group is only
    part of a token's prefix."""

    plugin: RegexBasedDetector
    needs: tuple[str, ...] = ()
    around: tuple[str, ...] = ()
    before: int = 0
    after: int = 0
    value_group: int = 0


# Left out: the IBM Cloud, IBM COS, Cloudant and SoftLayer detectors (their assignment
# patterns take cubic time on a long run of spaces), and the public IPv4 detector (an
# address is not a secret). JSON Web Tokens are found below.
_DETECTORS = (
    _Detector(AWSKeyDetector(), around=("aws", "A3T", "ABIA", "ACCA", "AKIA", "ASIA"), after=128,
              value_group=1),
    _Detector(ArtifactoryDetector(), needs=("AKC", "AP")),
    _Detector(AzureStorageKeyDetector(), needs=("AccountKey=",)),
    _Detector(DiscordBotTokenDetector(), needs=(".",)),
    _Detector(GitHubTokenDetector(), needs=("gh",)),
    _Detector(GitLabTokenDetector(), needs=("gl", "GR1348941")),
    _Detector(MailchimpDetector(), needs=("-us",)),
    _Detector(NpmDetector(), around=("_authToken=",), before=256, after=128, value_group=1),
    _Detector(OpenAIDetector(), around=("T3BlbkFJ",), before=256, after=32),
    _Detector(PypiTokenDetector(), needs=("pypi-",)),
    _Detector(SendGridDetector(), needs=("SG.",)),
    _Detector(SlackDetector(), needs=("xox", "hooks.slack.com")),
    _Detector(SquareOAuthDetector(), needs=("sq0csp-",)),
    _Detector(StripeDetector(), needs=("k_live_",)),
    _Detector(TelegramBotTokenDetector(), needs=(":",)),
    _Detector(TwilioKeyDetector(), needs=("AC", "SK")),
)  # fmt: skip
_AROUND_WINDOWS = 256  # per detector and document: more of its literals is not a note

# A JSON Web Token: three base64url parts, the first two JSON. detect-secrets' pattern
# backtracks on "eyJeyJ…", so candidates come from this one (one pass: possessive runs,
# starting only where a run starts) and its formal check decides.
_JWT = re.compile(
    r"(?<![A-Za-z0-9_=-])eyJ[A-Za-z0-9_=-]{0,8192}+\.[A-Za-z0-9_=-]{1,8192}+"
    r"(?:\.[A-Za-z0-9_+/=-]{0,8192}+)?"
)
_BASIC_AUTH = BasicAuthDetector()
_PRIVATE_KEY = PrivateKeyDetector()
_PRIVATE_KEY_END = re.compile(r"-----END[A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PRIVATE_KEY_MAX = 16384
_KEYWORD = KeywordDetector()
# The keyword detector's own words (api_key, password, secret, ...), to find where to give
# it a window: its patterns backtrack badly on long lines, so it never sees one. Searched
# in the lower-cased text (much faster than a case-insensitive pattern).
_KEYWORD_START = re.compile("|".join(DENYLIST))
# Markdown emphasis and code marks around "**Password:** x" hide the colon from it.
_MARKUP = str.maketrans("", "", "*`")
_ENTROPY = Base64HighEntropyString()
# Words of the base64 alphabet long enough to carry more entropy than the limit.
_ENTROPY_WORD = re.compile(rf"[{re.escape(_ENTROPY.charset)}]{{24,}}")
_DIGIT = re.compile(r"\d")
_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")
_DELIMITERS = " \t\r\n'\"=:"


def _chunks(text: str, size: int) -> Iterator[tuple[int, str]]:
    """`text` in pieces of at most `size` characters, cut at line ends where possible;
    a longer line is cut with an overlap, so a token across a cut is still seen whole."""
    overlap = 256
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            newline = text.rfind("\n", start, end)
            if newline > start:
                end = newline + 1
        yield start, text[start:end]
        if end >= len(text):
            return
        start = end if text[end - 1] == "\n" else max(start + 1, end - overlap)


class _Finder:
    """Where the values a detector reports are in a chunk: detect-secrets yields values,
    not positions, and the same value may occur more than once."""

    def __init__(self, chunk: str, offset: int) -> None:
        self.chunk, self.offset = chunk, offset
        self._after: dict[str, int] = {}

    def __call__(self, value: str) -> tuple[int, int] | None:
        if not value:
            return None
        found = self.chunk.find(value, self._after.get(value, 0))
        if found < 0:
            return None
        self._after[value] = found + len(value)
        return self.offset + found, self.offset + found + len(value)


@_step
def _secrets(scan: _Scanner) -> None:
    text = scan.text
    for offset, chunk in _chunks(text, scan.limits.chunk):
        scan.check()
        find = _Finder(chunk, offset)
        if "PRIVATE KEY" in chunk:
            for header in _PRIVATE_KEY.analyze_string(chunk):
                where = find(header)
                if where and not scan.claimed(*where):
                    scan.add(where[0], _private_key_end(text, where[1]), PRIVATE_KEY)
        for detector in _DETECTORS:
            if any(literal in chunk for literal in detector.needs):
                _tokens(scan, detector, chunk, offset)
        if "@" in chunk:
            for value in _BASIC_AUTH.analyze_string(chunk):
                where = find(value)
                if where:
                    scan.add(*where, PASSWORD)
    for detector in _DETECTORS:
        for start, end in _windows(scan, detector):
            _tokens(scan, detector, text[start:end], start)
    for candidate in _JWT.finditer(text):
        scan.check()
        if JwtTokenDetector.is_formally_valid(candidate[0]):
            scan.add(candidate.start(), candidate.end(), API_KEY)
    _keywords(scan)
    _high_entropy_words(scan)


def _private_key_end(text: str, header_end: int) -> int:
    """The key's body follows its header: the finding runs to its END line, or without
    one to the end of its paragraph (keys are a few KiB at most)."""
    limit = min(len(text), header_end + _PRIVATE_KEY_MAX)
    end = _PRIVATE_KEY_END.search(text, header_end, limit)
    if end:
        return end.end()
    blank = text.find("\n\n", header_end, limit)
    return blank if blank >= 0 else limit


def _tokens(scan: _Scanner, detector: _Detector, text: str, offset: int) -> None:
    for regex in detector.plugin.denylist:
        group = detector.value_group if regex.groups >= detector.value_group else 0
        for match in regex.finditer(text):
            start, end = match.span(group)
            value = match[group]
            # Some patterns take the character around the token too (a space, a quote).
            start += len(value) - len(value.lstrip(_DELIMITERS))
            end -= len(value) - len(value.rstrip(_DELIMITERS))
            scan.add(offset + start, offset + end, API_KEY)


def _windows(scan: _Scanner, detector: _Detector) -> Iterator[tuple[int, int]]:
    """Windows of the text around each of the detector's `around` literals, on its line,
    in text order, merged where they overlap."""
    text = scan.text
    anchors = sorted(
        position
        for literal in detector.around
        for position in _occurrences(scan.lower, literal.lower(), _AROUND_WINDOWS + 1)
    )
    covered = 0
    for count, anchor in enumerate(anchors):
        if anchor < covered:
            continue
        if count >= _AROUND_WINDOWS:
            scan.exhausted = True
            return
        scan.check()
        line_start = text.rfind("\n", 0, anchor) + 1
        line_end = text.find("\n", anchor)
        line_end = len(text) if line_end < 0 else line_end
        covered = min(line_end, anchor + detector.after)
        yield max(line_start, anchor - detector.before), covered


def _occurrences(text: str, literal: str, limit: int) -> Iterator[int]:
    position = text.find(literal)
    while position >= 0 and limit > 0:
        yield position
        limit -= 1
        position = text.find(literal, position + 1)


def _keywords(scan: _Scanner) -> None:
    text = scan.text
    covered = 0
    for keyword in _KEYWORD_START.finditer(scan.lower):
        if keyword.start() < covered:
            continue
        line_end = text.find("\n", keyword.start())
        end = min(keyword.start() + scan.limits.keyword_window, len(text))
        if line_end >= 0:
            end = min(end, line_end)
        covered = end
        window = text[keyword.start() : end]
        scan.check("keywords")
        found = _KEYWORD.analyze_string(
            window.translate(_MARKUP), denylist_regex_to_group=CONFIG_DENYLIST_REGEX_TO_GROUP
        )
        find = _Finder(window, keyword.start())
        for value in found:
            secret = _credential(value)
            where = find(secret) if secret else None
            if where:
                scan.add(*where, PASSWORD)


_NOT_CREDENTIALS = {"required", "optional", "redacted", "hidden", "unknown", "changed"}


def _credential(value: str) -> str | None:
    """The credential in what follows "password:" or "api_key =": its first word, when
    that looks like a credential rather than prose ("Password: reset it monthly")."""
    words = value.split()
    if not words:
        return None
    word = words[0].rstrip(".,;:)]}>").strip("'\"")
    if not 6 <= len(word) <= 200 or word.lower() in _NOT_CREDENTIALS:
        return None
    if is_templated_secret(word) or is_sequential_string(word) or is_potential_uuid(word):
        return None
    # A word of letters only is almost always prose; a credential mixes in digits or symbols.
    if word.isalpha() or word.startswith("$"):
        return None
    return word


def _high_entropy_words(scan: _Scanner) -> None:
    text = scan.text
    for word in _ENTROPY_WORD.finditer(text):
        value = word[0].rstrip("=")
        if len(value) > 1024 or not (
            _DIGIT.search(value) and _UPPER.search(value) and _LOWER.search(value)
        ):
            continue  # words, hex digests, numbers and embedded files are not keys
        if scan.claimed(word.start(), word.end()) or _in_url(text, word.start()):
            continue
        scan.check()
        if is_sequential_string(value) or is_potential_uuid(value):
            continue
        if _ENTROPY.calculate_shannon_entropy(value) > _ENTROPY.entropy_limit:
            scan.add(word.start(), word.end(), API_KEY)


def _in_url(text: str, position: int) -> bool:
    """Inside a URL (document ids and paths are long and random, not credentials; a
    credential in a URL's user part is BasicAuthDetector's)."""
    word_start = position
    while word_start > 0 and not text[word_start - 1].isspace() and position - word_start < 256:
        word_start -= 1
    return "://" in text[word_start:position]


# --- card numbers (Luhn) ---------------------------------------------------------------

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


@_step
def _cards(scan: _Scanner) -> None:
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


# --- IBANs ---------------------------------------------------------------------------------

_IBAN_CANDIDATE = re.compile(r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]){11,32}")
_WORD = re.compile(r"\S+")


@_step
def _ibans(scan: _Scanner) -> None:
    for candidate in _IBAN_CANDIDATE.finditer(scan.text):
        groups = [(m[0], m.end()) for m in _WORD.finditer(candidate[0])]
        # Written in groups of four, an IBAN may run into the next word ("... 00 IS"):
        # drop trailing groups until the rest is valid.
        for count in range(len(groups), 0, -1):
            compact = "".join(g for g, _ in groups[:count])
            if len(compact) < 15:
                break
            if len(compact) > 34:
                continue
            scan.check()
            if iban.is_valid(compact):
                scan.add(candidate.start(), candidate.start() + groups[count - 1][1], IBAN)
                break


# --- national ids ------------------------------------------------------------------------

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
# Searched in the lower-cased text.
_ID_CONTEXT = re.compile(
    r"\b(?:ssn|social security|national (?:insurance|id|identity)|id(?:entity)? (?:number|no)"
    r"|identification|personal (?:number|code)|personnummer|f[øo]dselsnummer|cpr|hetu"
    r"|henkil[öo]tunnus|bsn|burgerservicenummer|pesel|nir|s[ée]curit[ée] sociale|dni|nie"
    r"|codice fiscale|tax (?:id|file number)|tin|steuer-?id|idnr|steueridentifikationsnummer"
    r"|sin|social insurance|cpf|aadhaa?r|tfn|pps|rrn|resident registration|nhs|curp"
    r"|passport|id card|identity card)\b"
)
_CONTEXT_CHARS = 48


def _named_nearby(pattern: re.Pattern[str], scan: _Scanner, start: int) -> bool:
    """A word of `pattern` shortly before `start`, on the same line."""
    line_start = scan.text.rfind("\n", 0, start) + 1
    return bool(pattern.search(scan.lower, max(line_start, start - _CONTEXT_CHARS), start))


def _valid(validators: Iterable[ModuleType], value: str, scan: _Scanner) -> bool:
    for validator in validators:
        scan.check()
        if validator.is_valid(value):
            return True
    return False


@_step
def _national_ids(scan: _Scanner) -> None:
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
            and _named_nearby(_ID_CONTEXT, scan, candidate.start())
            and _valid(validators, value, scan)
        ):
            scan.add(candidate.start(), candidate.end(), NATIONAL_ID)


_ID_SEPARATORS = re.compile(r"[ .-]")


# --- phone numbers (phonenumbers) --------------------------------------------------------

# Where a phone number could be: digits in groups with the separators people write, at
# least seven digits. Only these short spans reach PhoneNumberMatcher, whose own pattern
# is slow on long text.
_PHONE_CANDIDATE = re.compile(r"(?<![\w+])(?:\+|\()?\d(?:[ ().\-/]{0,3}\d)*+")
# Searched in the lower-cased text.
_PHONE_CONTEXT = re.compile(
    r"\b(?:phone|tel|telephone|mobile|cell|call|text|sms|whatsapp|signal|fax|contact"
    r"|reach|ring)\b"
)


@_step
def _phones(scan: _Scanner, region: str | None) -> None:
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
            if number.raw_string.isdigit() and not _named_nearby(_PHONE_CONTEXT, scan, start):
                continue
            scan.add(start, end, PHONE)


_DIGITS_ONLY = re.compile(r"\d")
_DATE = re.compile(r"\d{4}([-/.])\d{1,2}\1\d{1,2}|\d{1,2}([-/.])\d{1,2}\2\d{2}(?:\d{2})?")


# --- health and financial information (a word list) --------------------------------------

# Terms that make a note about a person special-category (health) or financial data.
# Kept short and specific: "bank", "card", "health plan" or "doctor's appointment" alone
# are not flagged. Searched in the lower-cased text (a case-insensitive pattern takes five
# times as long).
_TERMS = re.compile(
    r"\b(?:(?P<health>diagnos(?:is|ed|es)|hiv|aids|cancer|tumou?r|chemo(?:therapy)?"
    r"|diabet(?:es|ic)|depression|antidepressants?|anxiety disorder|bipolar|schizophreni[ac]"
    r"|adhd|autis(?:m|tic)|epilep(?:sy|tic)|asthma(?:tic)?|pregnan(?:t|cy)|miscarriage"
    r"|abortion|psychiatri(?:st|c)|therapist|prescri(?:bed|ption)|medication|insulin|surgery"
    r"|disabilit(?:y|ies)|dementia|alzheimer'?s|parkinson'?s|hepatitis|sti|std|addiction"
    r"|alcoholism|rehab|mental health|blood pressure|hypertension|allerg(?:y|ies|ic)"
    r"|migraines?|arthritis|chronic illness|medical condition|sick leave|blood type)"
    r"|(?P<finance>salary|salaries|income|net worth|(?<!technical )debts?|loans?|mortgage"
    r"|bankrupt(?:cy)?|credit score|credit rating|overdra(?:ft|wn)|foreclosure|tax returns?"
    r"|account balance|alimony|child support|wage garnishment|arrears|collections agency))\b"
)
# Acronyms count only in capitals: "aids" is a verb, "std" an abbreviation of standard.
_ACRONYMS = {"hiv", "aids", "adhd", "sti", "std"}


@_step
def _terms(scan: _Scanner) -> None:
    for term in _TERMS.finditer(scan.lower):
        if term[0] in _ACRONYMS and not scan.text[term.start() : term.end()].isupper():
            continue
        scan.add(term.start(), term.end(), HEALTH if term["health"] else FINANCE)


# --- excerpts ------------------------------------------------------------------------------

_EXCERPT_CONTEXT = 32
_MASK = "\u2022"  # •


def _mask(value: str, kind: str) -> str:
    """`value` as the review list shows it: never whole."""
    if kind in (HEALTH, FINANCE):
        return value  # a word, not a secret: the excerpt says why the entry was flagged
    if kind in (API_KEY, PASSWORD, PRIVATE_KEY):
        # A token's recognisable prefix (ghp_, AKIA, sk-…) helps; the rest, its length and
        # any part of a password do not.
        shown = value[:4] if kind == API_KEY and len(value) >= 20 else ""
        return f"{shown}{_MASK * 8}"
    keep = {CARD: 4, IBAN: 4, NATIONAL_ID: 2, PHONE: 2}.get(kind, 0)
    alnum = [i for i, c in enumerate(value) if c.isalnum()]
    visible = set(alnum[-keep:]) if keep and len(alnum) > keep * 2 else set()
    if kind == IBAN:
        visible |= set(alnum[:2])  # the country
    return "".join(c if not c.isalnum() or i in visible else _MASK for i, c in enumerate(value))


def _excerpt(text: str, start: int, end: int, spans: list[tuple[int, int, str]]) -> str:
    """The finding with a little of its line around it, every finding in it masked."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line_end = len(text) if line_end < 0 else line_end
    lo = max(line_start, start - _EXCERPT_CONTEXT)
    hi = max(end, min(line_end, end + _EXCERPT_CONTEXT))  # a private key spans lines
    pieces = []
    position = lo
    for s, e, kind in spans[max(0, bisect.bisect_left(spans, (lo,)) - 1) :]:
        if s >= hi:
            break
        if e <= position:
            continue
        if s < position or e > hi:
            # Cut by the excerpt's edge: what shows of it must not add to another excerpt.
            s, e = max(s, position), min(e, hi)
            masked = _MASK * 8
        elif kind == PRIVATE_KEY:
            masked = _mask_key(text[s:e])
        else:
            masked = _mask(text[s:e], kind)
        pieces.append(text[position:s])
        pieces.append(masked)
        position = e
    pieces.append(text[position:hi])
    excerpt = " ".join(without_bidi_controls("".join(pieces)).split())
    return ("\u2026 " if lo > line_start else "") + excerpt + (" \u2026" if hi < line_end else "")


def _mask_key(value: str) -> str:
    header = value.split("\n", 1)[0].strip()
    return f"{header} {_MASK * 8}" if header.startswith("-----BEGIN") else _MASK * 8


# --- parts of a document ---------------------------------------------------------------


def _line_starts(text: str) -> list[int]:
    # The same line breaks as documents.py: "\n", "\r\n" or "\r".
    starts = [0]
    for newline in re.finditer(r"\r\n|\r|\n", text):
        starts.append(newline.end())
    return starts


def _parts(document: Document) -> list[Part]:
    if document.structured:
        return [
            Part("entry", entry.start_line, entry.end_line, entry=entry, number=entry.index + 1)
            for entry in document.entries
        ]
    items = [
        Part("item", item.start_line, item.end_line, item=item, number=number)
        for number, item in enumerate(document.list_items, start=1)
        if item.depth == 0
    ]
    # The rest of the document (headings, paragraphs) can be edited, not deleted alone.
    return [*items, Part("document", 0, len(_line_starts(document.text)))]


def _part_at(parts: list[Part], line: int) -> int | None:
    """The index of the part holding `line`: an entry or item, else the whole document.
    Entries and top-level items come in document order and do not overlap."""
    starts = [part.start_line for part in parts if part.kind != "document"]
    i = bisect.bisect_right(starts, line) - 1
    if i >= 0 and line < parts[i].end_line:
        return i
    return len(parts) - 1 if parts and parts[-1].kind == "document" else None
