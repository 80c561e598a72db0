"""Reading HTML the way a browser would, for tests that drive pages with requests."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import unescape
from html.parser import HTMLParser
from urllib.parse import parse_qs, unquote, urljoin, urlsplit


@dataclass
class Form:
    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)
    buttons: list[tuple[str, str]] = field(default_factory=list)  # (name, value)


class _FormParser(HTMLParser):
    """Forms as a browser sees them: a control belongs to the form it sits in, or to the
    form its `form` attribute names (which may come later in the page)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self._by_id: dict[str, Form] = {}
        self._open: Form | None = None
        self._elsewhere: list[tuple[str, str, dict[str, str]]] = []  # (form id, tag, attrs)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self._open = Form(a.get("action", ""), a.get("method", "get").lower())
            self.forms.append(self._open)
            if a.get("id"):
                self._by_id[a["id"]] = self._open
        elif tag in ("input", "button") and a.get("name"):
            if a.get("form"):
                self._elsewhere.append((a["form"], tag, a))
            elif self._open is not None:
                _add_control(self._open, tag, a)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._open = None

    def close(self) -> None:
        super().close()
        for form_id, tag, a in self._elsewhere:
            if form_id in self._by_id:
                _add_control(self._by_id[form_id], tag, a)


def _add_control(form: Form, tag: str, a: dict[str, str]) -> None:
    if tag == "button" or a.get("type") in ("submit", "button"):
        form.buttons.append((a["name"], a.get("value", "")))
    else:
        form.fields[a["name"]] = a.get("value", "")


def forms(html: str, base_url: str = "") -> list[Form]:
    parser = _FormParser()
    parser.feed(html)
    parser.close()
    for form in parser.forms:
        form.action = urljoin(base_url, form.action)
    return parser.forms


def submitted(form: Form, button: tuple[str, str] | None = None) -> dict[str, str]:
    """What the browser sends for `form` submitted with `button` (name, value)."""
    return {**form.fields, **(dict([button]) if button else {})}


def form_with_button(html: str, name: str, value: str, base_url: str = "") -> Form:
    for form in forms(html, base_url):
        if (name, value) in form.buttons:
            return form
    raise AssertionError(f"No form with a button {name}={value!r}")


def hidden_fields(html: str) -> dict[str, list[str]]:
    """Every hidden input's values by name, repeated names kept (a form's `fields` keeps one)."""
    found: dict[str, list[str]] = {}
    for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', html):
        found.setdefault(name, []).append(value)
    return found


def page_html(response) -> str:
    """The HTML of an answer that must be 200 OK."""
    assert response.status_code == 200
    return response.content.decode()


def table_rows(html: str) -> list[list[str]]:
    """Each row of every table in `html` as the text of its cells, headers included, as a
    person reads them: whatever attributes a cell carries (labels for a phone's layout),
    entities unescaped, spaces collapsed."""
    found = []
    for row in re.findall(r"<tr\b[^>]*>(.*?)</tr>", html, re.S):
        cells = re.findall(r"<(td|th)\b[^>]*>(.*?)</\1>", row, re.S)
        found.append([_text(cell) for _, cell in cells])
    return found


def cells(html: str) -> list[str]:
    """The text of every table cell in `html`, row by row (see `table_rows`)."""
    return [cell for row in table_rows(html) for cell in row]


def _text(fragment: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def batched_cards(html: str) -> list[list[str]]:
    """The agent names of each batch of cards the dashboard loads as they come into view."""
    return [
        [unquote(name) for name in re.findall(r"name=([^&]+)", query.replace("&amp;", "&"))]
        for query in re.findall(r'hx-get="/cards/agents\?([^"]+)"', html)
    ]


def assert_sent_to_idp_sign_out(response, authority: str) -> None:
    """`response` sends the browser to the end-session endpoint of the IdP at `authority`,
    which is to send it back to the portal's signed-out page."""
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == (
        f"{authority}/oauth2/v2.0/logout"
    )
    assert parse_qs(location.query)["post_logout_redirect_uri"] == [
        "http://testserver/auth/signed-out"
    ]
