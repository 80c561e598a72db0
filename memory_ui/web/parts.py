"""Pieces of pages rendered once and reused: the parts of a memory page (once per document
version) and the dashboard's batches of agent cards still to load (once per process).

A part's HTML, its whole <li> (id, checkbox, provenance, markdown), depends on the document
(cached by its hash: `memory_ui.documents.paging`), on how the page shows it (`PartView`:
its Actions link, checkbox, links), on whether it is marked "New" and on the time: "3 days
ago". It is kept with the parsed document and rendered again when the minute changes, so a
relative time is at most a minute old. A page's entries are then joined, with no template
work per entry on a repeat view (the template's own loop around each part was about 40% of
a page's rendering). It holds no other per-user data: an entry's Actions link opens the
page's one menu (Edit, Move or copy, and Delete, which submits the page's one form carrying
the CSRF token and version: memory.html). The rare per-person parts, an entry that came
back after the person deleted it and the entry just saved (focused), are rendered for that
request only.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, replace
from datetime import datetime

from django.template.loader import render_to_string
from django.utils.safestring import SafeString
from django.utils.text import slugify

from memory_ui.documents import Entry
from memory_ui.documents.paging import Page, Part, Prepared
from memory_ui.resurfacing import Deletions
from memory_ui.sources.agent_memory import Agent


@dataclass(frozen=True)
class PartView:
    """How the parts of one page are shown: every input of part.html besides the part
    itself and the time. It is the render cache's key, so a new template input added here
    is part of the key by construction (nothing to keep in step by hand).

    `editable` adds to each entry its Actions link: the entry's own page, `memory_url`
    + `/<index>` (the `entry_<scope>` route: shorter than the editor's query, fifty times
    a page); `pick` (the target's key, or "") its checkbox, ticked for /memory/select;
    `linked` a link to the entry on `memory_url` (for cards shown away from their
    memory's page: "What it sees")."""

    memory_url: str
    editable: bool = False
    linked: bool = False
    pick: str = ""


@dataclass(frozen=True)
class Card:
    """One part of a page: its <li> (`html`, part.html), with the "New" mark, and when the
    person deleted the entry before, if it came back (`came_back`)."""

    part: Part
    html: SafeString
    view: PartView
    is_new: bool
    came_back: datetime | None = None

    @property
    def entry(self) -> Entry | None:
        return self.part.entry

    @property
    def dom_id(self) -> str:
        return _dom_id(self.part, self.view)


def _render(
    part: Part,
    view: PartView,
    is_new: bool,
    came_back: datetime | None = None,
    focused: bool = False,
) -> SafeString:
    # render_to_string returns a SafeString (the template escaped what it inserted).
    context = {
        "part": part,
        "view": view,
        "is_new": is_new,
        "came_back": came_back,
        "focused": focused,
        "dom_id": _dom_id(part, view),
    }
    return render_to_string("memory_ui/components/part.html", context)


def _dom_id(part: Part, view: PartView) -> str:
    """The <li>'s id: what links (#entry-3) and the entry editor's swap aim at."""
    own = f"entry-{part.entry.index}" if part.entry else f"part-{part.position}"
    return f"{slugify(view.memory_url)}-{own}" if view.linked else own


def parts_html(
    prepared: Prepared,
    page: Page,
    view: PartView,
    new: frozenset[int] = frozenset(),
    focus: int | None = None,
) -> list[Card]:
    """Each part's card, its HTML rendered once per document version, `view` and minute.
    Rendering in the page's own loop instead costs a template render per part per
    request, and a 1 MiB document has thousands of parts (bench/portal.py measures it).
    `new`: the indexes of the entries marked new since the person's last visit (a flag
    per part in the key, no more); `focus`: the entry just saved, focused in its place
    (rendered for this request only)."""
    minute = int(time.time() // 60)
    rendered = []
    for part in page.parts:
        is_new = part.entry is not None and part.entry.index in new
        if part.entry is not None and part.entry.index == focus:
            html = _render(part, view, is_new, focused=True)
        else:
            key = ("part", part.position, view, is_new, minute)
            html = prepared.memo(
                key, functools.partial(_render, part, view, is_new), replaces=key[:-1]
            )
        rendered.append(Card(part, html, view, is_new))
    return rendered


def returned(cards: list[Card], deletions: Deletions, source: str) -> list[Card]:
    """The cards with, on each entry the person deleted from `source` before, when that was
    (and its note, rendered for this request): only the entries shown are hashed."""
    marked = []
    for card in cards:
        came_back = card.entry and deletions.came_back(source, card.entry.body)
        if came_back:
            html = _render(card.part, card.view, card.is_new, came_back)
            card = replace(card, html=html, came_back=came_back)
        marked.append(card)
    return marked


def joined(cards: list[Card]) -> SafeString:
    """The cards' <li>s as one piece of the page (each already escaped by part.html)."""
    return SafeString("".join(card.html for card in cards))


@functools.lru_cache(maxsize=512)
def _card_batch(batch: tuple[Agent, ...]) -> SafeString:
    return render_to_string("memory_ui/components/card_batch.html", {"batch": batch})


def card_batches(agents: list[Agent], per_batch: int) -> list[SafeString]:
    """The dashboard's agent cards still to load, `per_batch` to a request, each batch
    rendered once per process for the same agents (a hundred placeholders and their links
    cost more than the rest of the dashboard)."""
    return [
        _card_batch(tuple(agents[start : start + per_batch]))
        for start in range(0, len(agents), per_batch)
    ]
