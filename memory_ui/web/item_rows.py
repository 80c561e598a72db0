"""A target's items as the rows of its page (`views.sources.target`), worked out in Python
rather than per row in the template: a page holds up to a source's page size (a legacy
store: 100) and must stay close to the one list call it costs (issue 18's bar: 1.5x the
entries-list call; issue 28's: 1.3x the memory-api's). Each row is one `str.format` of
the fragments below, all of them the portal's own markup, over values every one of which
went through `html.escape` (what Django's `escape` does, and `format_html` for each value
it is given, for about a quarter of the time: a value the page's rows share is escaped once,
and a row's once however often it appears)."""

from __future__ import annotations

import datetime as dt
from html import escape
from urllib.parse import quote

from django.utils.safestring import SafeString
from django.utils.timesince import timesince
from django.utils.timezone import get_current_timezone, localtime, now

from memory_ui.sources.listing import Shown
from memory_ui.web.offered import Offered
from memory_ui.web.source_pages import Place

START = '<li class="item-row"><p><a href="{url}" class="item-key">{key}</a>'
START_BACK = '<li class="item-row item-came-back"><p><a href="{url}" class="item-key">{key}</a>'
CAME_BACK = (
    '<p class="came-back" role="note"><strong>This came back after you deleted it on'
    " {deleted_on}.</strong></p>"
)
DESCRIPTION = ' <span class="item-description">— {description}</span>'
UPDATED = ' <small>updated <time datetime="{iso}" title="{exact}">{ago}</time></small></p>'
NEVER = " <small>updated never</small></p>"
TEXT = '<p class="item-text">{text}</p>'
CONTENTS = (
    '<details hx-get="{url}" hx-trigger="toggle once" hx-target="find .item-contents"'
    ' hx-swap="innerHTML"><summary>Show contents<span class="visually-hidden"> of {key}'
    '</span></summary><div class="item-contents"><p><a href="{url}">Open {key}</a>'
    "</p></div></details>"
)
EMPTY = '<p class="empty-state">Empty.</p>'
EDIT = (
    '<a href="{edit_url}" role="button" class="secondary outline">Edit'
    '<span class="visually-hidden"> {key}</span></a>'
)
# Every row's Delete submits the page's one delete form (target.html's #item-delete, which
# holds the CSRF token and the target once rather than in every row), naming its item.
DELETE = (
    '<button type="submit" form="item-delete" name="item" value="{key}"'
    ' class="secondary outline">{delete_label}<span class="visually-hidden"> {key}</span>'
    "</button>"
)
TEXT_SHOWN = 300  # characters of an item's text shown in its row, where the list has it


# Under four weeks apart no calendar month is involved, so `timesince`'s words depend on
# the whole minutes between alone: rows that many minutes old share them.
MONTHLESS = dt.timedelta(days=28)
MINUTE = dt.timedelta(minutes=1)


def _actions(offered: Offered) -> str:
    """The row's buttons, the same for every row of the page."""
    buttons = (EDIT if offered.edit else "") + (DELETE if offered.delete else "")
    return f'<div class="change-buttons">{buttons}</div>' if buttons else ""


def _ago(updated: dt.datetime, at: dt.datetime, said: dict[int, str]) -> str:
    """`timesince(updated, at)`, said once per minute of age under `MONTHLESS`."""
    age = at - updated
    if age >= MONTHLESS:
        return escape(f"{timesince(updated, at)} ago")
    minutes = age // MINUTE
    if minutes not in said:
        said[minutes] = escape(f"{timesince(updated, at)} ago")
    return said[minutes]


def rows_html(place: Place, items: list[Shown], offered: Offered) -> SafeString:
    """The rows of `items`: each links to its page, opens its text in place, and offers
    the edit and delete its target allows; one the person deleted before says so, and its
    Delete reads "Delete again"."""
    assert place.target is not None
    # An item's key, quoted for a URL, holds nothing HTML escapes: only the bases need it.
    item_base = escape(place.item_url(""))
    edit_base = escape(place.item_url("", "source_edit"))
    actions = _actions(offered) + "</li>"
    at, said, zone = now(), {}, get_current_timezone()
    rows = []
    for shown in items:
        item = shown.item
        quoted = quote(item.key, safe="/")
        values = {
            "url": item_base + quoted,
            "edit_url": edit_base + quoted,
            "key": escape(item.key),
            "delete_label": "Delete again" if shown.came_back else "Delete",
        }
        row = START_BACK if shown.came_back else START
        if item.description:
            values["description"] = escape(item.description)
            row += DESCRIPTION
        if item.updated:
            # strftime, not Django's date_format: a hundred rows of that alone double the page.
            values["iso"] = escape(item.updated.isoformat())
            values["exact"] = escape(
                localtime(item.updated, zone).strftime("%-d %B %Y, %H:%M:%S %Z")
            )
            values["ago"] = _ago(item.updated, at, said)
            row += UPDATED
        else:
            row += NEVER
        if item.text:
            text = item.text
            values["text"] = escape(
                text if len(text) <= TEXT_SHOWN else f"{text[: TEXT_SHOWN - 1]}…"
            )
            row += TEXT
        else:
            row += CONTENTS if item.has_text else EMPTY
        if shown.came_back:
            values["deleted_on"] = escape(localtime(shown.came_back, zone).strftime("%-d %B"))
            row += CAME_BACK
        rows.append((row + actions).format(**values))
    # Every value in a row went through escape(); the rest is the fragments above.
    return SafeString("".join(rows))
