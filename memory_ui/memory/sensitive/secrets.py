"""API keys, tokens, private keys and passwords: detect-secrets' plugins as a library,
on bounded chunks and windows."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

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

from memory_ui.memory.sensitive.kinds import API_KEY, PASSWORD, PRIVATE_KEY
from memory_ui.memory.sensitive.scanner import Scanner, step


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


@step
def find_secrets(scan: Scanner) -> None:
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


def _tokens(scan: Scanner, detector: _Detector, text: str, offset: int) -> None:
    for regex in detector.plugin.denylist:
        group = detector.value_group if regex.groups >= detector.value_group else 0
        for match in regex.finditer(text):
            start, end = match.span(group)
            value = match[group]
            # Some patterns take the character around the token too (a space, a quote).
            start += len(value) - len(value.lstrip(_DELIMITERS))
            end -= len(value) - len(value.rstrip(_DELIMITERS))
            scan.add(offset + start, offset + end, API_KEY)


def _windows(scan: Scanner, detector: _Detector) -> Iterator[tuple[int, int]]:
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


def _keywords(scan: Scanner) -> None:
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


def _high_entropy_words(scan: Scanner) -> None:
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
