"""IBANs: python-stdnum's country formats and ISO 7064 check."""

from __future__ import annotations

import re

from stdnum import iban

from memory_ui.memory.sensitive.kinds import IBAN
from memory_ui.memory.sensitive.scanner import Scanner, step

_IBAN_CANDIDATE = re.compile(r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]){11,32}")
_WORD = re.compile(r"\S+")


@step
def find_ibans(scan: Scanner) -> None:
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
