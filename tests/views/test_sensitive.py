"""The sensitive-data review page and the dashboard's notice, on the fake CoreAPI."""

from __future__ import annotations

from urllib.parse import urlsplit

from tests.fake_coreapi import FakeCoreAPI
from tests.views.helpers import FAILURES, HTMX, body, fail, field_value, is_page, page_text

CARD = "4111 1111 1111 1111"
TOKEN = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
STRUCTURED = (
    "## Added 2026-10-02T16:40:55Z \u2014 trip\n\n- Aisle seats.\n\n"
    f"## Added 2026-10-03T08:00:00Z \u2014 payment\n\n- Visa {CARD} for hotels.\n"
)


def test_review_lists_flagged_entries_by_memory_masked(alice, fake: FakeCoreAPI) -> None:
    fake.put(STRUCTURED, agent="travel-planner")
    fake.put(f"# Notes\n\n- Laptop: ThinkPad.\n- CI token {TOKEN}\n", agent="it-helpdesk")
    response = alice.get("/memory/sensitive")
    assert response.status_code == 200
    assert is_page(response)
    text = page_text(response)
    assert "2 entries may be sensitive" in text
    assert "Travel Planner" in text and "IT Helpdesk" in text
    assert "Card number" in text and "\u2022\u2022\u2022\u2022 1111" in text
    assert "API key or token" in text
    html = body(response)
    assert CARD not in html and TOKEN not in html and "16C7e42F" not in html
    assert 'href="/memory/agents/travel-planner#entry-1"' in html
    # Findings are computed per request, never stored: no CoreAPI write, nothing cached.
    assert fake.writes() == []
    assert response["Cache-Control"].startswith("no-store")


def test_delete_from_the_review_reuses_the_entry_delete_with_undo(alice, fake) -> None:
    fake.put(STRUCTURED, agent="travel-planner")
    html = body(alice.get("/memory/sensitive"))
    form = html[html.index('action="/memory/entries/delete"') :]
    data = {
        "csrfmiddlewaretoken": field_value(form, "csrfmiddlewaretoken"),
        "scope": field_value(form, "scope"),
        "agent": field_value(form, "agent"),
        "version": field_value(form, "version"),
        "index": field_value(form, "index"),
    }
    assert (data["scope"], data["agent"], data["index"]) == ("agent", "travel-planner", "1")
    response = alice.post("/memory/entries/delete", data)
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert location.path == "/memory/agents/travel-planner"
    assert "undo=" in location.query
    assert CARD not in fake.text("travel-planner")
    assert "Aisle seats." in fake.text("travel-planner")
    after = page_text(alice.get("/memory/sensitive"))
    assert "Nothing in your memory looks sensitive." in after


def test_delete_list_item_from_the_review(alice, fake) -> None:
    fake.put(f"# Notes\n\n- Laptop: ThinkPad.\n- CI token {TOKEN}\n", agent="it-helpdesk")
    html = body(alice.get("/memory/sensitive"))
    form = html[html.index('action="/memory/items/delete"') :]
    data = {
        name: field_value(form, name)
        for name in ("csrfmiddlewaretoken", "scope", "agent", "version", "start", "end")
    }
    response = alice.post("/memory/items/delete", data)
    assert response.status_code == 302
    assert fake.text("it-helpdesk") == "# Notes\n\n- Laptop: ThinkPad.\n"


def test_review_empty_state_and_text_outside_lists(alice, fake) -> None:
    response = alice.get("/memory/sensitive")
    assert "Nothing in your memory looks sensitive." in page_text(response)
    fake.put("Call me at (415) 555-2671.\n")
    text = page_text(alice.get("/memory/sensitive"))
    assert "Phone number" in text
    assert "This text is not a separate entry" in text


def test_review_htmx_fragment(alice, fake) -> None:
    fake.put(STRUCTURED)
    response = alice.get("/memory/sensitive", headers=HTMX)
    assert response.status_code == 200
    assert not is_page(response)
    assert body(response).lstrip().startswith('<section id="sensitive-review"')
    assert "HX-Request" in response["Vary"]


def test_review_when_coreapi_fails(alice, fake, subtests) -> None:
    for failure in FAILURES:
        with subtests.test(failure.name, what="agents"):
            fail(fake, "list_agents", failure)
            response = alice.get("/memory/sensitive")
            assert response.status_code == failure.portal_status
            assert failure.message in page_text(response)
        with subtests.test(failure.name, what="one memory"):
            fail(fake, "get_memory", failure, agent="it-helpdesk")
            fake.put(STRUCTURED, agent="travel-planner")
            response = alice.get("/memory/sensitive")
            assert response.status_code == 200
            text = page_text(response)
            assert f"IT Helpdesk could not be checked. {failure.message}" in text
            assert "1 entry may be sensitive" in text
    fake.heal()


def test_dashboard_loads_the_notice_lazily_with_a_link(alice, fake) -> None:
    fake.put(STRUCTURED)
    response = alice.get("/")
    html = body(response)
    assert 'hx-get="/memory/sensitive/notice"' in html
    assert 'href="/memory/sensitive"' in html
    # First paint: the agent list only, no memory read.
    assert fake.called("get_memory") == []
    notice = alice.get("/memory/sensitive/notice", headers=HTMX)
    assert notice.status_code == 200
    assert body(notice).lstrip().startswith('<div id="sensitive-notice"')
    assert "1 entry may be sensitive" in page_text(notice)
    assert 'href="/memory/sensitive"' in body(notice)


def test_notice_states(alice, fake) -> None:
    notice = alice.get("/memory/sensitive/notice", headers=HTMX)
    assert "Nothing in your memory looks sensitive." in page_text(notice)
    fail(fake, "list_agents", FAILURES[-2])
    notice = alice.get("/memory/sensitive/notice", headers=HTMX)
    assert notice.status_code == 200
    assert "couldn't check your memory" in page_text(notice)
    # Without htmx the notice URL is the review page.
    response = alice.get("/memory/sensitive/notice")
    assert response.status_code == 302
    assert response["Location"] == "/memory/sensitive"


def test_signed_out_users_are_sent_to_sign_in(client, fake) -> None:
    for url in ("/memory/sensitive", "/memory/sensitive/notice"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/auth/login")


def test_a_reason_is_masked_like_the_excerpt(alice, fake: FakeCoreAPI) -> None:
    fake.put(
        f"## Added 2026-10-03T08:00:00Z \u2014 paid with {CARD} and key {TOKEN}\n\n- Hotel.\n"
        "\n## Added 2026-10-04T08:00:00Z \u2014 card 4111111111111111\n\n- Mentions insulin.\n",
        agent="travel-planner",
    )
    html = body(alice.get("/memory/sensitive"))
    text = page_text(alice.get("/memory/sensitive"))
    assert CARD not in html and "4111111111111111" not in html
    assert TOKEN not in html and "16C7e42F" not in html
    assert (
        "— paid with \u2022\u2022\u2022\u2022 \u2022\u2022\u2022\u2022 \u2022\u2022\u2022\u2022 1111"
        in text
    )
    assert "— card " + "\u2022" * 12 + "1111" in text
