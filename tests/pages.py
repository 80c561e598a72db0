"""Reading HTML the way a browser would, for tests that drive pages with requests."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin


@dataclass
class Form:
    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)
    buttons: list[tuple[str, str]] = field(default_factory=list)  # (name, value)


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append(Form(a.get("action", ""), a.get("method", "get").lower()))
        elif self.forms and tag == "input" and a.get("name"):
            if a.get("type") in ("submit", "button"):
                self.forms[-1].buttons.append((a["name"], a.get("value", "")))
            else:
                self.forms[-1].fields[a["name"]] = a.get("value", "")
        elif self.forms and tag == "button" and a.get("name"):
            self.forms[-1].buttons.append((a["name"], a.get("value", "")))


def forms(html: str, base_url: str = "") -> list[Form]:
    parser = _FormParser()
    parser.feed(html)
    for form in parser.forms:
        form.action = urljoin(base_url, form.action)
    return parser.forms


def form_with_button(html: str, name: str, value: str, base_url: str = "") -> Form:
    for form in forms(html, base_url):
        if (name, value) in form.buttons:
            return form
    raise AssertionError(f"No form with a button {name}={value!r}")
