"""Sensitive data against the real devstack: an agent writes a card number into alice's
memory through CoreAPI, the review page flags it (masked), and its Delete form removes
that entry in CoreAPI with the memory page's version check and Undo."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.test import Client

from memory_ui.sources.coreapi import CallerAuth, agent_object_id
from memory_ui.sources.coreapi.client import CoreAPIClient
from tests.pages import forms

pytestmark = pytest.mark.django_db

CARD = "4111 1111 1111 1111"


@pytest.fixture
def portal_coreapi(fresh_coreapi):
    return fresh_coreapi


def test_agent_written_card_number_is_flagged_and_deleted(
    alice: Client, fresh_coreapi, coreapi_tokens, settings
) -> None:
    client = CoreAPIClient(fresh_coreapi.url, settings.COREAPI_INSTANCE_ID)
    auth = CallerAuth(coreapi_tokens.delegated("alice@contoso.com"))
    travel = agent_object_id(settings.COREAPI_INSTANCE_ID, "travel-planner")
    try:
        client.append_memory(
            auth, "agent", f"- Pays with Visa {CARD}.", agent_object_id=travel, reason="payment"
        )
        dashboard = alice.get("/").content.decode()
        assert 'hx-get="/memory/sensitive/notice"' in dashboard
        notice = alice.get("/memory/sensitive/notice", HTTP_HX_REQUEST="true").content.decode()
        assert "1 entry may be sensitive" in notice

        page = alice.get("/memory/sensitive")
        html = page.content.decode()
        assert page.status_code == 200
        assert "Card number" in html and "\u2022\u2022\u2022\u2022 1111" in html
        assert CARD not in html
        [delete] = [f for f in forms(html) if f.action == "/memory/entries/delete"]
        assert delete.fields["agent"] == "travel-planner"

        done = alice.post(delete.action, delete.fields)
        assert done.status_code == 302
        assert urlsplit(done["Location"]).path == "/memory/agents/travel-planner"
        assert "undo=" in done["Location"]
        remaining = client.get_memory(auth, "agent", travel).content_markdown
        assert CARD not in remaining
        assert "Prefers aisle seats" in remaining  # the seeded entries stay
        assert "Nothing in your memory looks sensitive." in alice.get(
            "/memory/sensitive"
        ).content.decode().replace("\n", " ")
    finally:
        client.close()
