"""A target's items as the rows of its page (`views.sources.target`), worked out in Python
rather than per row in the template: a page holds up to a source's page size (a legacy
store: 100) and must stay close to the one list call it costs (issue 18's bar: 1.5x the
entries-list call). Each row is one `format_html` call, which escapes every value; its
format is put together from the fragments below, all of them the portal's own markup."""

from __future__ import annotations

from urllib.parse import quote

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.timesince import timesince
from django.utils.timezone import localtime

from memory_ui.sources.generic import Shown
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
DELETE = (
    '<form method="post" action="{delete_url}" class="inline-form">'
    '<input type="hidden" name="csrfmiddlewaretoken" value="{csrf}">'
    '<input type="hidden" name="target" value="{target}">'
    '<input type="hidden" name="item" value="{key}">'
    '<button type="submit" class="secondary outline">{delete_label}'
    '<span class="visually-hidden"> {key}</span></button></form>'
)
TEXT_SHOWN = 300  # characters of an item's text shown in its row, where the list has it


def _actions(offered: Offered) -> str:
    """The row's buttons, the same for every row of the page."""
    buttons = (EDIT if offered.edit else "") + (DELETE if offered.delete else "")
    return f'<div class="change-buttons">{buttons}</div>' if buttons else ""


def rows_html(place: Place, items: list[Shown], offered: Offered, csrf: str) -> SafeString:
    """The rows of `items`: each links to its page, opens its text in place, and offers
    the edit and delete its target allows; one the person deleted before says so, and its
    Delete reads "Delete again"."""
    assert place.target is not None
    item_base, edit_base = place.item_url(""), place.item_url("", "source_edit")
    common = {
        "delete_url": place.url("source_delete").partition("?")[0],
        "csrf": csrf,
        "target": place.target.key,
    }
    actions = _actions(offered) + "</li>"
    rows = []
    for shown in items:
        item = shown.item
        quoted = quote(item.key, safe="/")
        values = {
            **common,
            "url": item_base + quoted,
            "edit_url": edit_base + quoted,
            "key": item.key,
            "description": item.description,
            "delete_label": "Delete again" if shown.came_back else "Delete",
        }
        row = (START_BACK if shown.came_back else START) + (DESCRIPTION if item.description else "")
        if item.updated:
            # strftime, not Django's date_format: a hundred rows of that alone double the page.
            values["iso"] = item.updated.isoformat()
            values["exact"] = localtime(item.updated).strftime("%-d %B %Y, %H:%M:%S %Z")
            values["ago"] = f"{timesince(item.updated)} ago"
            row += UPDATED
        else:
            row += NEVER
        if item.text:
            text = item.text
            values["text"] = text if len(text) <= TEXT_SHOWN else f"{text[: TEXT_SHOWN - 1]}…"
            row += TEXT
        else:
            row += CONTENTS if item.has_text else EMPTY
        if shown.came_back:
            values["deleted_on"] = localtime(shown.came_back).strftime("%-d %B")
            row += CAME_BACK
        rows.append((row + actions, values))
    return format_html_join("", "{}", ((format_html(row, **values),) for row, values in rows))
