"""What "What <agent> is told about me" showed a person, kept in the session behind a
token, so that "This is wrong" names only an item the person was shown, in a preview of
theirs, for that source and target (`place`): the source's reference for that answer and
each item's text (to show again beside the correction) never travel in a form."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.sessions.backends.base import SessionBase

from memory_ui.sources.protocol import Preview
from memory_ui.web.stores.kept import keep, kept

SESSION_KEY = "previews"
PREVIEW_SECONDS = 3600  # long enough to read the answer and write a correction
PREVIEW_MAX_RECORDS = 5


@dataclass(frozen=True)
class Shown:
    reference: str
    question: str
    items: dict[str, str]  # item key -> its text, as shown


def preview_remember(session: SessionBase, place: str, preview: Preview) -> str:
    record = {
        "place": place,
        "reference": preview.reference,
        "question": preview.question,
        "items": {item.key: item.text for item in preview.items},
    }
    return keep(session, SESSION_KEY, record, most=PREVIEW_MAX_RECORDS, seconds=PREVIEW_SECONDS)


def preview_shown(session: SessionBase, token: str, place: str) -> Shown | None:
    """The preview behind `token` if it is still kept and was of `place`."""
    raw = kept(session, SESSION_KEY).get(token)
    if raw is None or raw["place"] != place:
        return None
    return Shown(raw["reference"], raw["question"], raw["items"])
