"""Searching memory against the real devstack: sign-in through the IdP, real JWTs, the
emulator's seeded memory (read only)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.pages import page_html

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_alice_searches_every_memory_and_reaches_the_entry(alice: Client):
    response = alice.get("/search", {"q": "prefers"})
    html = page_html(response)
    # Shared: one seeded entry says "Prefers concise answers"; travel-planner "Prefers aisle".
    assert re.search(r'id="search-summary"[^>]*>2 matches in 2 memories\.<', html)
    assert "<mark>Prefers</mark> concise answers" in html
    assert 'href="/memory/user?entry=0#entry-0"' in html
    assert 'href="/memory/agents/travel-planner?entry=0#entry-0"' in html
    # The link leads to the entry on the memory page.
    entry = alice.get("/memory/user", {"entry": "0"}).content.decode()
    assert 'id="entry-0"' in entry and "Prefers concise answers" in entry


def test_filters_and_the_htmx_fragment(alice: Client):
    response = alice.get(
        "/search",
        {"reason": "contribution", "agent": "benefits-assistant", "date_from": "2026-11-01"},
        **HTMX,
    )
    html = page_html(response)
    assert "<html" not in html and html.lstrip().startswith('<p id="search-summary"')
    assert "1 match in 1 memory." in html
    assert "401(k) <mark>contribution</mark> change" in html
    assert 'href="/memory/agents/benefits-assistant?entry=1#entry-1"' in html


def test_bob_searches_only_his_own_agents(bob: Client):
    html = bob.get("/search").content.decode()
    assert re.findall(r'<option value="([^"]*)"', html) == ["", "_shared", "it-helpdesk"]
    assert "Prefers step-by-step instructions." in html  # his shared memory
    refused = bob.get("/search", {"agent": "travel-planner", "q": "London"})
    assert refused.status_code == 400
    assert "Trip to London" not in refused.content.decode()
