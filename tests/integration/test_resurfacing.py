"""Deleted memory that comes back, against the real devstack (issue 29, item 2): alice deletes
an entry through the portal, the agent appends the same text through the CoreAPI emulator's
API, and the portal flags it on the memory page (with Delete again), on the dashboard's card,
in carol's overview, in search results and on the entry's own page; a legacy file deleted
through the portal and written again through the legacy store emulator's API is flagged on
its page, in search results and in carol's overview of alice. The hash table holds no
text."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from devstack.pki import Pki
from devstack.serve import RunningServer
from memory_ui.documents import parse_document
from memory_ui.models import DeletedHash
from memory_ui.sources.legacy import operations as legacy_ops
from tests.conftest import TokenMinter
from tests.devstack.legacy_api import Api
from tests.integration.conftest import sign_in
from tests.integration.test_changes import Agent, _entry_delete, agent, portal_coreapi  # noqa: F401
from tests.integration.test_support import look_up
from tests.pages import forms, table_rows
from tests.views.helpers import page_text

pytestmark = pytest.mark.django_db

ALICE = "alice@contoso.com"
TRAVEL_PAGE = "/memory/agents/travel-planner"
TRAVEL_STORE = "main.agents.travel_planner_memory"
PREFERENCES = "/memories/preferences.md"


def entry_of(page: str, words: str) -> str:
    """The index of the entry whose card holds `words`."""
    for index, card in re.findall(r'<li class="entry[^"]*" id="entry-(\d+)"(.*?)</li>', page, re.S):
        if words in card:
            return index
    raise AssertionError(f"no entry holds {words!r}")


def test_an_entry_an_agent_writes_again_is_flagged_wherever_alice_and_carol_look(
    alice: Client,
    agent: Agent,  # noqa: F811
    pki: Pki,
) -> None:
    page = alice.get(TRAVEL_PAGE).content.decode()
    index = entry_of(page, "aisle seats")
    body = parse_document(agent.text("travel-planner")).entries[int(index)].body
    form = _entry_delete(page, index)
    assert alice.post(form.action, form.fields).status_code == 302
    assert "aisle seats" not in agent.text("travel-planner")

    # The agent learns it again: the same words under its own heading, in other spacing and case.
    agent.append("  ".join(body.upper().split(" ")), "travel-planner", "Seat choice")

    page = alice.get(TRAVEL_PAGE).content.decode()
    flagged = re.findall(r'<li class="entry entry-came-back" id="entry-(\d+)"', page)
    assert flagged == [entry_of(page, "AISLE  SEATS")]
    assert "This came back after you deleted it on" in page_text(alice.get(TRAVEL_PAGE))
    assert f'form="entry-delete" name="index" value="{flagged[0]}"' in page

    card = page_text(
        alice.get(reverse("card_agent", args=["travel-planner"]), HTTP_HX_REQUEST="true")
    )
    assert "1 came back after you deleted it" in card
    carol = Client()  # a session of her own: the `carol` fixture would sign alice's client out
    sign_in(carol, "carol@contoso.com", str(pki.ca_cert))
    overview = page_text(look_up(carol, ALICE))
    assert f"1 came back after {ALICE} deleted it" in overview

    # Delete again: the page's own delete, on the real emulator.
    again = _entry_delete(page, flagged[0])
    assert alice.post(again.action, again.fields).status_code == 302
    assert "aisle" not in agent.text("travel-planner").lower()
    assert "This came back" not in page_text(alice.get(TRAVEL_PAGE))

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {DeletedHash._meta.db_table}")
        stored = " ".join(str(value) for row in cursor.fetchall() for value in row).lower()
    assert "aisle" not in stored and "seats" not in stored and "flights" not in stored


def search_hits(html: str) -> list[str]:
    """Each search result's <li>, as the page has it."""
    return re.findall(r'<li class="search-hit[^"]*">(.*?)</li>', html, re.S)


def test_search_flags_an_entry_the_agent_writes_again_and_leads_to_delete_again(
    alice: Client,
    agent: Agent,  # noqa: F811
) -> None:
    page = alice.get(TRAVEL_PAGE).content.decode()
    index = entry_of(page, "aisle seats")
    body = parse_document(agent.text("travel-planner")).entries[int(index)].body
    form = _entry_delete(page, index)
    assert alice.post(form.action, form.fields).status_code == 302
    assert "This came back" not in page_text(alice.get("/search", {"q": "aisle seats"}))

    agent.append(body.upper(), "travel-planner", "Seat choice")

    html = alice.get("/search", {"q": "aisle seats"}).content.decode()
    flagged = [hit for hit in search_hits(html) if "This came back" in hit]
    assert len(flagged) == 1 and "AISLE SEATS" in flagged[0]
    assert "This came back after you deleted it on" in page_text(
        alice.get("/search", {"q": "aisle"})
    )
    index = entry_of(alice.get(TRAVEL_PAGE).content.decode(), "AISLE SEATS")
    link = re.search(r'<a href="([^"]+)">Delete again', flagged[0])
    assert link is not None
    assert link[1] == f"/memory/entries/edit?scope=agent&amp;agent=travel-planner&amp;index={index}"

    # The entry's own page, without JavaScript: the note, and its Delete reads "Delete again".
    entry_page = alice.get(link[1].replace("&amp;", "&")).content.decode()
    assert "This came back after you deleted it on" in entry_page
    again = next(f for f in forms(entry_page) if f.action == "/memory/entries/delete")
    assert re.search(r'class="entry-page-delete">.*?>Delete again</button>', entry_page, re.S)
    assert alice.post(again.action, again.fields).status_code == 302
    assert "aisle" not in agent.text("travel-planner").lower()
    assert "This came back" not in page_text(alice.get("/search", {"q": "aisle"}))


@pytest.fixture
def stores(settings, fresh_legacy: RunningServer) -> Iterator[RunningServer]:
    settings.LEGACY_STORES_BASE_URL = fresh_legacy.url
    settings.LEGACY_STORES_AGENTS = json.dumps({"travel-planner": TRAVEL_STORE})
    legacy_ops.reset_caches()
    yield fresh_legacy
    legacy_ops.reset_caches()


def test_a_legacy_file_written_again_is_flagged_on_its_page_and_in_carols_overview(
    alice: Client, stores: RunningServer, coreapi_tokens: TokenMinter, pki: Pki
) -> None:
    api = Api(stores.url, coreapi_tokens.legacy())
    contents = api.get(TRAVEL_STORE, ALICE, PREFERENCES).json()["contents"]
    deleted = alice.post(
        reverse("source_delete", args=["legacy"]), {"target": TRAVEL_STORE, "item": PREFERENCES}
    )
    assert deleted.status_code == 302
    assert api.get(TRAVEL_STORE, ALICE, PREFERENCES).status_code == 404

    # The agent writes the file again, with the same text.
    body = {"path": PREFERENCES, "contents": contents.upper() + "\n"}
    assert api.create(TRAVEL_STORE, ALICE, body).status_code == 200

    url = reverse("source_item", args=["legacy"])
    page = page_text(alice.get(url, {"target": TRAVEL_STORE, "item": PREFERENCES}))
    assert "This came back after you deleted it on" in page
    assert "Delete again" in page
    other = next(
        path
        for path in (e["path"] for e in api.entries(TRAVEL_STORE, ALICE).json()["memory_entries"])
        if path != PREFERENCES
    )
    assert "This came back" not in page_text(
        alice.get(url, {"target": TRAVEL_STORE, "item": other})
    )

    # Search finds it in the legacy stores, flagged, leading to its page.
    html = alice.get("/search", {"q": "vegetarian meals"}).content.decode()
    flagged = [hit for hit in search_hits(html) if "This came back" in hit]
    assert len(flagged) == 1 and PREFERENCES in flagged[0]
    item_page = f"{url}?target={TRAVEL_STORE}&amp;item={PREFERENCES}"
    assert f'<a href="{item_page}">Delete again' in flagged[0]

    # Carol's overview of alice counts it under the legacy stores, and in the total.
    carol = Client()  # a session of her own: the `carol` fixture would sign alice's client out
    sign_in(carol, "carol@contoso.com", str(pki.ca_cert))
    overview = look_up(carol, ALICE)
    text = page_text(overview)
    assert f"1 came back after {ALICE} deleted it" in text
    assert "1 file in Legacy memory stores." in text
    files = len(api.entries(TRAVEL_STORE, ALICE).json()["memory_entries"])
    travel = next(row for row in table_rows(overview.content.decode()) if TRAVEL_STORE in row[0])
    assert travel[1:] == [str(files), "1"]
    assert "vegetarian" not in overview.content.decode().lower()  # no content
