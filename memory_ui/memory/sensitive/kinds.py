"""What the scan reports (the kinds of finding, a finding, the work budget)."""

from __future__ import annotations

from dataclasses import dataclass

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
