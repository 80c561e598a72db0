"""Sensitive-data detection: precision and recall on the labelled corpus, and CPU time on
1 MiB documents.

    .venv/bin/python bench/sensitive.py          # precision and recall per kind and overall
    .venv/bin/python bench/sensitive.py --cpu    # also CPU seconds per 1 MiB document

The corpus is tests/unit/sensitive_corpus.toml: one entry per case, labelled with the
kinds a careful person would flag. A kind found in a case and labelled is a true positive,
found and not labelled a false positive, labelled and not found a false negative.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory_ui.documents import parse_document  # noqa: E402
from memory_ui.memory.sensitive import KINDS, sensitive_find, sensitive_scan  # noqa: E402

CORPUS = ROOT / "tests" / "unit" / "sensitive_corpus.toml"
MIB = 1 << 20


def score() -> None:
    cases = tomllib.loads(CORPUS.read_text())["case"]
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    for case in cases:
        truth = set(case["kinds"])
        found = {match.kind for match in sensitive_find(case["text"])[0]}
        tp.update(truth & found)
        fp.update(found - truth)
        fn.update(truth - found)
    negatives = sum(not case["kinds"] for case in cases)
    print(f"{len(cases)} cases ({negatives} with nothing sensitive)\n")
    print(f"{'kind':24} {'TP':>4} {'FP':>4} {'FN':>4} {'precision':>10} {'recall':>8}")
    for kind in [*KINDS, "overall"]:
        if kind == "overall":
            t, f, n = sum(tp.values()), sum(fp.values()), sum(fn.values())
        else:
            t, f, n = tp[kind], fp[kind], fn[kind]
        precision = t / (t + f) if t + f else 1.0
        recall = t / (t + n) if t + n else 1.0
        print(f"{kind:24} {t:4} {f:4} {n:4} {precision:10.2f} {recall:8.2f}")


def _memory_like(rng: random.Random) -> str:
    """1 MiB of entries as agents write them, with numbers, dates, ids and a few findings."""
    words = (
        "prefers concise answers morning flights aisle seats London Seattle laptop ThinkPad "
        "VPN profile Contoso meeting order 998877 version 1.2.3 ticket INC-2024-000123 on "
        "2024-01-15 at 14:30 with the team commit 3f786850e387550fdab836ed7e6dc881de23001b"
    ).split()
    extras = [
        "Call (415) 555-2671.",
        "Visa 4111 1111 1111 1111.",
        "Allergic to nuts.",
        "password: Tr0ub4dor&3",
        "",
        "",
        "",
        "",
    ]
    parts = []
    size = 0
    i = 0
    while size < MIB:
        body = " ".join(rng.choice(words) for _ in range(40)) + " " + rng.choice(extras)
        entry = f"## Added 2026-10-02T16:40:{i % 60:02d}Z \u2014 note {i}\n\n- {body}\n\n"
        parts.append(entry)
        size += len(entry)
        i += 1
    return "".join(parts)[:MIB]


HOSTILE = ["//", "sk-", "eyJ", "1 ", "password ", "aws ", "DE89 ", "+1 ", "(415) 555-2671 "]


def cpu() -> None:
    documents = {"memory-like entries": _memory_like(random.Random(1))}
    for seed in HOSTILE:
        documents[f"hostile {seed!r}"] = (seed * (MIB // len(seed) + 1))[:MIB]
    print(f"\n{'1 MiB document':30} {'parse s':>8} {'scan s':>8} {'flagged':>8} {'complete':>9}")
    for name, text in documents.items():
        started = time.process_time()
        document = parse_document(text)
        parsed = time.process_time()
        scan = sensitive_scan(document)
        done = time.process_time()
        print(
            f"{name:30} {parsed - started:8.2f} {done - parsed:8.2f} "
            f"{len(scan.flagged):8} {scan.complete!s:>9}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu", action="store_true", help="also time 1 MiB documents")
    args = parser.parse_args()
    score()
    if args.cpu:
        cpu()


if __name__ == "__main__":
    main()
