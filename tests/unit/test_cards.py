"""A memory page's entry cards (`web.parts.parts_html`): each card's HTML is kept with the
document version under exactly what part.html is given (the part, how the page shows it,
whether it is new) and the minute, so a card shown another way is another card."""

from __future__ import annotations

import time

from memory_ui.documents.paging import Prepared
from memory_ui.web.parts import PartView, parts_html
from tests.shapes import structured

HOME = "/memory/user"


def first_card(prepared: Prepared, view: PartView, new: frozenset[int] = frozenset()):
    return parts_html(prepared, prepared.page(1), view, new)[0]


def test_a_card_is_rendered_once_for_the_same_inputs():
    prepared = Prepared(structured(4_000))
    first = first_card(prepared, PartView(memory_url=HOME))
    again = first_card(prepared, PartView(memory_url=HOME))
    assert again.html is first.html
    assert "Reason" in first.html and first.dom_id == f"entry-{first.entry.index}"


def test_each_input_of_the_card_is_part_of_its_key():
    prepared = Prepared(structured(4_000))
    plain = first_card(prepared, PartView(memory_url=HOME))
    index = plain.entry.index
    editable = first_card(prepared, PartView(HOME, editable=True))
    linked = first_card(prepared, PartView(memory_url=HOME, linked=True))
    new = first_card(prepared, PartView(memory_url=HOME), frozenset({index}))
    assert "entry-actions" in editable.html and "entry-actions" not in plain.html
    assert "Where it lives" in linked.html and "Where it lives" not in plain.html
    assert "New</strong>" in new.html and "New</strong>" not in plain.html
    # Another entry marked new leaves this card as it was.
    other = first_card(prepared, PartView(memory_url=HOME), frozenset({index + 1}))
    assert other.html is plain.html


def test_a_card_is_rendered_again_when_its_minute_changes(monkeypatch):
    prepared = Prepared(structured(4_000))
    shown = PartView(memory_url=HOME)
    first = first_card(prepared, shown)
    later = time.time() + 60
    monkeypatch.setattr(time, "time", lambda: later)
    assert first_card(prepared, shown).html is not first.html


def test_the_whole_li_with_its_checkbox_is_cached_and_the_focused_entry_is_not():
    prepared = Prepared(structured(4_000))
    shown = PartView(HOME, editable=True, pick="user")
    first = first_card(prepared, shown)
    index = first.entry.index
    # The <li> and the checkbox naming the entry come with the cached HTML: a repeat view
    # renders nothing per entry.
    assert first.html.startswith(f'<li class="entry" id="entry-{index}">')
    # In the page's form#entry-select, so no form= of its own.
    assert f'name="pick" value="user:{index}" aria-label=' in first.html
    assert "form=" not in first.html
    assert f'aria-label="Select entry {first.entry.number}' in first.html
    assert first_card(prepared, shown).html is first.html
    # The entry just saved is focused for that request only, and the cache keeps the plain one.
    focused = parts_html(prepared, prepared.page(1), shown, focus=index)[0]
    assert 'tabindex="-1" autofocus' in focused.html and "autofocus" not in first.html
    assert first_card(prepared, shown).html is first.html
