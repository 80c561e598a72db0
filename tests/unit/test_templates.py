"""Template source rules Django itself does not enforce."""

import re
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def test_no_one_line_comment_spans_lines():
    # Django's {# … #} ends at the line's end: one left open prints its text on the page.
    # Longer comments use {% comment %}.
    open_comment = re.compile(r"\{#(?![^\n]*#\})")
    found = [
        f"{path.relative_to(TEMPLATES)}:{source[: match.start()].count(chr(10)) + 1}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for source in [path.read_text()]
        for match in open_comment.finditer(source)
    ]
    assert TEMPLATES.is_dir() and found == []


def test_breadcrumbs_and_error_alerts_come_from_their_components():
    # The breadcrumb and the error alert are written once, in components/; pages use
    # {% breadcrumb %}, {% alert %} or {% blockalert %}, so their markup cannot drift.
    by_hand = re.compile(r"aria-label=[\"']breadcrumb[\"']|alert-error", re.IGNORECASE)
    components = TEMPLATES / "memory_ui" / "components"
    found = [
        f"{path.relative_to(TEMPLATES)}:{source[: match.start()].count(chr(10)) + 1}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        if components not in path.parents
        for source in [path.read_text()]
        for match in by_hand.finditer(source)
    ]
    assert TEMPLATES.is_dir() and found == []
