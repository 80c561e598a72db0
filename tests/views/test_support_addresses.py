"""Support pages never carry the looked-up user in an address: a URL ends up in access
logs, browser history and Referer headers. The whole flow is walked as staff click it,
and every address requested, every redirect and every link on the pages is checked for
the user's UPN (plain or percent-encoded) and the user's and agents' object ids."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import unquote

from django.test import Client

from tests.fake_coreapi import FakeCoreAPI
from tests.pages import cells, forms
from tests.views.conftest import identity_for
from tests.views.helpers import body, field_value, page_text
from tests.views.test_support import ALICE, REASON

LINK = re.compile(r'(?:href|action|hx-get|hx-post|src)="([^"]*)"')


class Walk:
    """A staff member's browser that notes every address it meets."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.addresses: list[str] = []

    def go(self, method: str, url: str, data: dict | None = None):
        self.addresses.append(url)
        response = getattr(self.client, method)(url, data or {})
        if "Location" in response:
            self.addresses.append(response["Location"])
        if response.get("Content-Type", "").startswith("text/html"):
            self.addresses += [unescape(link) for link in LINK.findall(body(response))]
        return response

    def form(self, response, action_ends: str) -> str:
        """The action of the page's (first) form posting to an address ending so."""
        return next(f.action for f in forms(body(response)) if f.action.endswith(action_ends))


def secrets_of(fake: FakeCoreAPI) -> list[str]:
    """What must not be in an address: the UPN, the user's and the agents' object ids."""
    agents = [fake.object_id(a) for a in ("benefits-assistant", "it-helpdesk", "travel-planner")]
    return [ALICE, identity_for(ALICE).oid, *[a for a in agents if a]]


def test_no_address_in_the_support_flow_names_the_user(carol: Client, fake: FakeCoreAPI, settings):
    # CoreAPI alone, so that the request clears everything it covers.
    settings.PORTAL_MEMORY_SOURCES = ["memory_ui.sources.coreapi"]
    walk = Walk(carol)
    home = walk.go("get", "/support/")
    found = walk.go("post", walk.form(home, "/support/"), {"upn": ALICE})
    page = walk.go("get", found["Location"])
    assert f"Memory of {ALICE}" in page_text(page)

    revealed = walk.go(
        "post",
        walk.form(page, "/reveal"),
        {"scope_key": "agent:travel-planner", "reason": "User asked what is stored"},
    )
    assert "aisle seats" in body(revealed)
    fields = {"nonce": field_value(body(page), "nonce"), "reason": REASON}
    started = walk.go(
        "post", walk.form(page, "/requests"), {**fields, "ticket": "PRIV-1", "scopes": ["all"]}
    )
    request_page = walk.go("get", started["Location"])
    exported = walk.go("post", walk.form(request_page, "/export"))
    assert exported["Content-Type"] == "application/zip"
    b"".join(exported.streaming_content)
    request_page = walk.go("get", started["Location"])
    nonce = field_value(body(request_page), "nonce")
    cleared = walk.go(
        "post", walk.form(request_page, "/clear"), {"nonce": nonce, "confirm_upn": ALICE}
    )
    result = walk.go("get", cleared["Location"])
    assert "All 4 cleared" in page_text(result)
    (audit_link,) = [a for a in LINK.findall(body(result)) if a.startswith("/support/audit")]
    audit = walk.go("get", unescape(audit_link))
    assert cells(body(audit)).count("Cleared") == 4
    filtered = walk.go("post", walk.form(audit, "/support/audit"), {"subject": ALICE})
    audit = walk.go("get", filtered["Location"])
    assert ALICE in cells(body(audit))
    csv = walk.go("get", f"{filtered['Location']}&format=csv")
    assert ALICE in b"".join(csv.streaming_content).decode()  # in the content, not the address

    assert len(walk.addresses) > 40
    for address in walk.addresses:
        readable = unquote(unquote(address)).casefold()
        assert not [s for s in secrets_of(fake) if s.casefold() in readable], address
