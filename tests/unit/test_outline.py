"""The outline scanner against the single loop it replaced (commit e6a495d), on seeded
random documents: EXPECTED_DIGEST is that version's outlines of the same documents, so a
faster scanner that finds other headings, items, blocks or open fences fails here.
bench/outline.py runs the same comparison against the old code itself."""

import hashlib

from memory_ui.documents.outline import outline, split_lines
from tests.unit.outline_corpus import random_documents

# sha256 of `_fingerprint` over random_documents(2000, seed=17), computed with e6a495d's
# `outline` (bench/outline.py loads it from git).
EXPECTED_DIGEST = "cf9391f5d6e2b0d621de30d2b0f6ec3690bf703218508b775c08412ed4bccdb9"


def _fingerprint(outline_found) -> str:
    headings = [(start, end, match[0]) for start, end, match in outline_found.headings]
    items, blocks = list(outline_found.items), list(outline_found.blocks)
    return repr((headings, items, blocks, outline_found.open_fence))


def test_outline_matches_the_single_loop_on_random_documents():
    digest = hashlib.sha256()
    found_any = {"headings": 0, "items": 0, "fences": 0}
    for text in random_documents(2000, seed=17):
        found = outline(split_lines(text))
        digest.update(_fingerprint(found).encode() + b"\0")
        found_any["headings"] += bool(found.headings)
        found_any["items"] += bool(found.items)
        found_any["fences"] += bool(found.open_fence)
    # The corpus exercises every kind of result, so the digest covers them.
    assert all(found_any.values()), found_any
    assert digest.hexdigest() == EXPECTED_DIGEST
