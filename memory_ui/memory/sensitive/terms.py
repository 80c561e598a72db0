"""Health and financial information: a short word list."""

from __future__ import annotations

import re

from memory_ui.memory.sensitive.kinds import FINANCE, HEALTH
from memory_ui.memory.sensitive.scanner import Scanner, step

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


@step
def find_terms(scan: Scanner) -> None:
    for term in _TERMS.finditer(scan.lower):
        if term[0] in _ACRONYMS and not scan.text[term.start() : term.end()].isupper():
            continue
        scan.add(term.start(), term.end(), HEALTH if term["health"] else FINANCE)
