"""Sensitive data in memory: entries that look like secrets or regulated data.

Agents write memory from conversations, so a pasted API key, a card number or a
diagnosis can end up in it. This package flags such entries for the person to review; it
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

Layout: kinds.py (what a finding is, the budget), scanner.py (one scan's findings and
budget), one module per detector family (secrets, cards, ibans, national_ids, phones,
terms), excerpts.py (masking), parts.py (which entry or item a finding is in), scan.py
(the two entry points, which run the detectors in order: an earlier, more specific one
keeps a span a later one would also claim).

To add a detector: a module with one `@step` function `find_x(scan: Scanner)` that calls
`scan.check()` before every library call and `scan.add(start, end, KIND)` per finding,
its patterns linear-time; a kind in kinds.py (and KINDS, and its masking in excerpts.py)
if it is new; a line in scan.py's order; cases in tests/unit/sensitive_corpus.toml. A
country's id is smaller still: see national_ids.py.
"""

from memory_ui.memory.sensitive.kinds import (
    API_KEY,
    CARD,
    DEFAULT_PHONE_REGION,
    FINANCE,
    HEALTH,
    IBAN,
    KINDS,
    NATIONAL_ID,
    PASSWORD,
    PHONE,
    PRIVATE_KEY,
    Limits,
    Match,
)
from memory_ui.memory.sensitive.parts import Part
from memory_ui.memory.sensitive.scan import Flagged, Scan, sensitive_find, sensitive_scan

__all__ = [
    "API_KEY",
    "CARD",
    "DEFAULT_PHONE_REGION",
    "FINANCE",
    "HEALTH",
    "IBAN",
    "KINDS",
    "NATIONAL_ID",
    "PASSWORD",
    "PHONE",
    "PRIVATE_KEY",
    "Flagged",
    "Limits",
    "Match",
    "Part",
    "Scan",
    "sensitive_find",
    "sensitive_scan",
]
