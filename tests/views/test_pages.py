"""Sign-out, health, the dashboard, the cards, the memory pages and Activity."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.test import Client

from tests.fake_coreapi import FakeCoreAPI
from tests.pages import assert_sent_to_idp_sign_out, batched_cards, page_html
from tests.views.helpers import (
    AGENTS,
    FAILURES,
    HEADERS,
    HTMX,
    body,
    each_failure,
    fail,
    is_page,
    page_text,
    refused,
    starts_with,
    varies_on_htmx,
)

# --- no sign-in needed ----------------------------------------------------------------------


def test_healthz_answers_without_sign_in(client: Client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}  # the instance only (issue 19)
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.usefixtures("static_from_finders")
def test_favicon_ico_leads_to_the_portals_icon(client: Client):
    # Chromium asks for /favicon.ico by itself now and then; a 404 there is a console error.
    response = client.get("/favicon.ico")
    assert response.status_code == 302  # the icon's name changes with its content
    assert response["Location"] == "/static/img/favicon.svg"
    assert "max-age=86400" in response["Cache-Control"]


def test_signed_out_page(client: Client, fake: FakeCoreAPI):
    response = client.get("/auth/signed-out")
    assert response.status_code == 200
    assert is_page(response)
    assert "You have signed out" in body(response)
    assert 'href="/auth/login"' in body(response)


def test_anonymous_users_are_sent_to_sign_in(client: Client, fake: FakeCoreAPI):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/auth/login?next=/"
    htmx = client.get("/cards/user", headers={**HTMX, "HX-Current-URL": "http://testserver/"})
    assert htmx["HX-Redirect"] == "/auth/login?next=%2F"  # the page, not the fragment
    assert fake.calls == []


def test_a_callback_without_a_started_sign_in_is_refused(client: Client, fake: FakeCoreAPI):
    response = client.get("/auth/callback", {"code": "made-up", "state": "made-up"})
    assert response.status_code == 400
    assert "not for a sign-in started here" in body(response)


# --- sign-out ---------------------------------------------------------------------------------


def test_sign_out_ends_the_session_and_goes_to_the_idp(alice: Client, settings):
    response = alice.post("/auth/logout")
    assert_sent_to_idp_sign_out(response, settings.ENTRA_AUTHORITY.rstrip("/"))
    assert "entra_identity" not in alice.session
    assert alice.get("/").status_code == 302


def test_sign_out_needs_post(alice: Client):
    assert alice.get("/auth/logout").status_code == 405
    assert alice.get("/").status_code == 200  # still signed in


# --- dashboard ----------------------------------------------------------------------------------


def test_dashboard_lists_the_users_agents(alice: Client, fake: FakeCoreAPI):
    response = alice.get("/")
    html = page_html(response)
    assert is_page(response) and varies_on_htmx(response)
    assert "Alice Example" in html and "alice@contoso.com" in html
    assert 'hx-get="/cards/user"' in html
    for display in AGENTS.values():
        assert display in html
    assert batched_cards(html) == [list(AGENTS)]
    assert 'href="/memory/clear-everything"' in html and 'href="/import"' in html
    assert 'href="/support/"' not in html  # not support staff
    assert [(c.method, c.user_identity) for c in fake.calls] == [("list_agents", False)]


def test_the_shared_memory_is_named_once_and_the_agent_filter_under_its_heading(alice: Client):
    html = page_html(alice.get("/"))
    # The section's heading names the shared memory (and links to it); its card does not
    # say it again, while it loads or once loaded.
    assert html.count("Shared with every agent") == 1
    assert '<h2 id="shared-heading" class="section-title"><a href="/memory/user">' in html
    card = body(alice.get("/cards/user", headers=HTMX))
    assert "Shared with every agent" not in card and "<h3>" not in card
    assert 'href="/memory/user">Open</a>' in card
    # The agent filter follows the heading of the section it filters, and swaps only the
    # list under it, not itself.
    heading, form = html.index('id="agents-heading"'), html.index('class="agent-filter"')
    assert html.index('<section id="agents"') < heading < form < html.index('id="agents-list"')
    assert 'hx-target="#agents-list" hx-select="#agents-list"' in html


def test_dashboard_for_htmx_is_the_agents_fragment(alice: Client):
    response = alice.get("/", headers=HTMX)
    assert response.status_code == 200
    assert not is_page(response)
    assert starts_with(response, '<section id="agents"')
    assert batched_cards(body(response)) == [list(AGENTS)]
    assert varies_on_htmx(response)


def test_with_scripts_the_first_paint_lists_no_agents_and_the_section_fetches_them(
    alice: Client, fake: FakeCoreAPI
):
    # Issue 31, item 3: the first paint after sign-in waited for the agent list.
    alice.cookies["portal_scripts"] = "1"  # set by portal.js
    response = alice.get("/", {"q": "travel"})
    html = page_html(response)
    assert is_page(response) and fake.calls == []
    assert 'hx-get="/cards/user"' in html and "Listing your agents…" in html
    assert 'hx-get="/?q=travel" hx-trigger="load" hx-swap="outerHTML"' in html
    assert batched_cards(html) == [] and AGENTS["travel-planner"] not in html
    assert 'href="/?agents=listed"' in html  # in <noscript>, should scripts be turned off

    section = alice.get("/", {"q": "travel"}, headers=HTMX)
    assert starts_with(section, '<section id="agents"')
    assert batched_cards(body(section)) == [["travel-planner"]]
    assert [c.method for c in fake.calls] == ["list_agents"]
    # Listed now: the next first paint carries them, with no call.
    assert batched_cards(page_html(alice.get("/"))) == [list(AGENTS)]
    assert [c.method for c in fake.calls] == ["list_agents"]


def test_without_scripts_or_when_asked_the_first_paint_lists_the_agents(
    alice: Client, fake: FakeCoreAPI
):
    assert batched_cards(page_html(alice.get("/"))) == [list(AGENTS)]  # no portal.js cookie
    cache.clear()
    alice.cookies["portal_scripts"] = "1"
    assert batched_cards(page_html(alice.get("/", {"agents": "listed"}))) == [list(AGENTS)]
    assert [c.method for c in fake.calls] == ["list_agents", "list_agents"]


def test_dashboard_without_agents_says_so(alice: Client, fake: FakeCoreAPI):
    fake.agents = []
    response = alice.get("/")
    assert response.status_code == 200
    assert "You don't have access to any agents yet" in body(response)


def test_support_staff_see_the_support_link(carol: Client):
    assert 'href="/support/"' in body(carol.get("/"))


def test_dashboard_when_the_agents_cannot_be_listed(alice: Client, fake: FakeCoreAPI, subtests):
    for failure, mode in each_failure(["page", "htmx"]):
        with subtests.test(failure.name, mode=mode):
            fail(fake, "list_agents", failure)
            response = alice.get("/", headers=HEADERS[mode])
            assert response.status_code == failure.portal_status
            assert f"We couldn't load your agents. {failure.message}" in page_text(response)
            assert is_page(response) == (mode == "page")
            assert varies_on_htmx(response)
            if mode == "page":
                assert 'hx-get="/cards/user"' in body(response)  # user memory still loads


# --- cards ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "card_id", "entries"),
    [
        ("/cards/user", "card-user", 2),
        ("/cards/agents/benefits-assistant", "card-agent-benefits-assistant", 1),
        ("/cards/agents/it-helpdesk", "card-agent-it-helpdesk", 3),  # top-level list items
        ("/cards/agents/travel-planner", "card-agent-travel-planner", 2),
    ],
)
def test_cards_show_stats_not_content(alice: Client, url, card_id, entries):
    for headers in HEADERS.values():  # a card is a fragment either way
        response = alice.get(url, headers=headers)
        html = page_html(response)
        assert not is_page(response)
        assert starts_with(response, f'<article id="{card_id}"')
        assert f"Entries</dt><dd>{entries}</dd>" in html
        assert "PPO Plus" not in html and "aisle seats" not in html


def test_an_agent_card_links_to_its_pages(alice: Client):
    html = body(alice.get("/cards/agents/travel-planner", headers=HTMX))
    assert 'href="/memory/agents/travel-planner"' in html
    assert 'href="/memory/agents/travel-planner/combined"' in html
    assert "Travel Planner" in html


def test_an_empty_card_has_an_empty_state(alice: Client, fake: FakeCoreAPI):
    fake.put("")
    response = alice.get("/cards/user", headers=HTMX)
    assert response.status_code == 200
    assert "Nothing remembered yet." in body(response)


def test_user_card_when_coreapi_fails(alice: Client, fake: FakeCoreAPI, subtests):
    for (failure,) in each_failure():
        with subtests.test(failure.name):
            fail(fake, "get_memory", failure)
            response = alice.get("/cards/user", headers=HTMX)
            html = body(response)
            assert response.status_code == failure.portal_status
            assert failure.message in page_text(response)
            assert 'hx-get="/cards/user"' in html and "Retry</button>" in html
            assert not is_page(response)


def test_agent_card_when_coreapi_fails(alice: Client, fake: FakeCoreAPI, subtests):
    for failure, method in each_failure(["list_agents", "get_memory"]):
        with subtests.test(failure.name, method=method):
            fail(fake, method, failure)
            response = alice.get("/cards/agents/travel-planner", headers=HTMX)
            html = body(response)
            assert response.status_code == failure.portal_status
            assert failure.message in page_text(response)
            assert 'id="card-agent-travel-planner"' in html
            assert 'hx-get="/cards/agents/travel-planner"' in html and "Retry</button>" in html


def test_a_card_of_an_agent_that_is_not_the_users_is_404(alice: Client, fake: FakeCoreAPI):
    response = alice.get("/cards/agents/no-such-agent", headers=HTMX)
    assert refused(response, 404)
    assert not fake.called("get_memory")


# --- memory pages -----------------------------------------------------------------------------------

MEMORY_PAGES = [
    pytest.param(
        "/memory/user",
        ["What all agents remember about you", "Prefers concise answers", "<code>op-2291</code>"],
        id="user",
    ),
    pytest.param(
        "/memory/agents/benefits-assistant",
        ["What Benefits Assistant remembers", "<strong>PPO Plus</strong>"],
        id="agent",
    ),
    pytest.param(
        "/memory/agents/travel-planner/combined",
        ["What Travel Planner sees", "Prefers concise answers", "aisle seats"],
        id="combined",
    ),
]
MEMORY_URLS = [p.values[0] for p in MEMORY_PAGES]


@pytest.mark.parametrize(("url", "shown"), MEMORY_PAGES)
def test_memory_pages_render_the_memory(alice: Client, fake: FakeCoreAPI, url, shown):
    response = alice.get(url)
    html = page_html(response)
    assert is_page(response) and varies_on_htmx(response)
    for text in shown:
        assert text in html
    assert "hx-disable" in html  # rendered memory is inert
    assert all(not call.user_identity for call in fake.calls)

    fragment = alice.get(url, headers=HTMX)
    assert fragment.status_code == 200
    assert not is_page(fragment)
    assert starts_with(fragment, '<section id="memory-content"')
    assert shown[-1] in body(fragment)
    assert varies_on_htmx(fragment)


def test_what_it_sees_reads_the_two_memories_not_the_combined_text(
    alice: Client, fake: FakeCoreAPI
):
    alice.get("/memory/agents/travel-planner/combined")
    reads = sorted((read.scope, read.agent_object_id) for read in fake.called("get_memory"))
    assert reads == [("agent", fake.object_id("travel-planner")), ("user", None)]


@pytest.mark.parametrize("mode", HEADERS)
def test_what_it_sees_groups_entry_cards_that_link_to_where_they_live(alice: Client, mode):
    response = alice.get("/memory/agents/travel-planner/combined", headers=HEADERS[mode])
    html = body(response)
    assert response.status_code == 200 and is_page(response) == (mode == "page")
    shared = html[
        html.index(">Shared with every agent</h2>") : html.index(">Only Travel Planner</h2>")
    ]
    own = html[html.index(">Only Travel Planner</h2>") :]
    assert "Prefers concise answers" in shared and "aisle seats" not in shared
    assert "aisle seats" in own and "Prefers concise answers" not in own
    assert 'href="/memory/user?entry=1#entry-1"' in shared
    assert 'href="/memory/agents/travel-planner?entry=0#entry-0"' in own
    assert "because: Trip preferences" in own and "<summary>Details</summary>" in shared
    assert "entry-delete" not in html and "/memory/entries/edit" not in html


def test_what_it_sees_when_one_memory_fails_shows_the_other(alice: Client, fake: FakeCoreAPI):
    failure = FAILURES[-1]
    fail(fake, "get_memory", failure, agent="travel-planner")
    response = alice.get("/memory/agents/travel-planner/combined")
    assert response.status_code == 200
    assert "Prefers concise answers" in body(response)
    assert failure.message in page_text(response)


def test_what_it_sees_of_nothing_is_an_empty_state(alice: Client, fake: FakeCoreAPI):
    fake.put("")
    fake.put("", "travel-planner")
    text = page_text(alice.get("/memory/agents/travel-planner/combined"))
    assert "This agent sees nothing about you yet." in text


def test_what_it_sees_is_capped_with_a_link_to_each_page(alice: Client, fake: FakeCoreAPI):
    notes = "".join(
        f"## Added 2026-01-01T00:{minute:02d}:00Z — note {minute}\n\n- Fact {minute}.\n\n"
        for minute in range(60)
    )
    fake.put(notes, "travel-planner")
    html = body(alice.get("/memory/agents/travel-planner/combined"))
    assert html.count('class="entry"') == 2 + 50  # the shared two, and one page of the agent's
    assert "Showing 1\u201350 of 60." in page_text(
        alice.get("/memory/agents/travel-planner/combined")
    )
    assert 'href="/memory/agents/travel-planner?page=2"' in html


@pytest.mark.parametrize("mode", HEADERS)
def test_raw_markdown_view(alice: Client, mode):
    response = alice.get(
        "/memory/agents/benefits-assistant", {"view": "raw"}, headers=HEADERS[mode]
    )
    html = page_html(response)
    assert '<pre class="raw-markdown"' in html
    assert "Enrolled in the **PPO Plus** health plan" in html
    assert "## Added 2026-10-05T09:30:00Z — Enrolment question" in html
    assert "<strong>PPO Plus</strong>" not in html
    assert is_page(response) == (mode == "page")
    assert varies_on_htmx(response)


def test_empty_memory_has_an_empty_state(alice: Client, fake: FakeCoreAPI):
    fake.put("")
    response = alice.get("/memory/user")
    assert response.status_code == 200
    assert "No agent remembers anything about you yet." in body(response)
    # Nothing to download or clear; a note or an import can still start it.
    html = body(response)
    assert 'href="/memory/user/export"' not in html and 'action="/memory/clear"' not in html
    assert 'action="/memory/append"' in html and 'href="/memory/user/import"' in html


def test_memory_pages_offer_changes_and_downloads(alice: Client):
    html = body(alice.get("/memory/agents/travel-planner"))
    assert 'href="/memory/edit?scope=agent&amp;agent=travel-planner"' in html
    # Add a note and Clear are GET forms naming the memory, opened in place by htmx.
    for action in ("/memory/append", "/memory/clear"):
        assert f'action="{action}" hx-get="{action}"' in html
    assert '<input type="hidden" name="agent" value="travel-planner">' in html
    # One form for the page; the Delete in the page's one menu submits it with the index of
    # the entry whose Actions opened it (one Actions per entry).
    assert html.count('action="/memory/entries/delete"') == 1
    assert html.count('form="entry-delete" name="index"') == 1
    assert html.count('class="entry-actions"') == 2
    assert 'href="/memory/agents/travel-planner/export"' in html
    combined = body(alice.get("/memory/agents/travel-planner/combined"))
    assert "/memory/edit" not in combined and "/memory/entries/delete" not in combined
    assert 'href="/memory/agents/travel-planner/combined/export"' in combined


@pytest.mark.parametrize(
    "url", ["/memory/agents/no-such-agent", "/memory/agents/no-such-agent/combined"]
)
def test_agents_that_are_not_the_users_are_404(alice: Client, fake: FakeCoreAPI, url):
    response = alice.get(url)
    assert refused(response, 404)
    assert not fake.called("get_memory")


def test_memory_pages_when_the_read_fails(alice: Client, fake: FakeCoreAPI, subtests):
    for failure, url, mode in each_failure(MEMORY_URLS, ["page", "htmx"]):
        with subtests.test(failure.name, url=url, mode=mode):
            fail(fake, "get_memory", failure)
            response = alice.get(url, headers=HEADERS[mode])
            html = body(response)
            assert response.status_code == failure.portal_status
            assert failure.message in page_text(response)
            assert is_page(response) == (mode == "page")
            assert varies_on_htmx(response)
            if failure.portal_status == 401:
                assert "Sign in again</a>" in html
            else:
                assert "Try again</a>" in html


def test_agent_pages_when_the_agents_cannot_be_listed(alice: Client, fake: FakeCoreAPI, subtests):
    for failure, url in each_failure(MEMORY_URLS[1:]):
        with subtests.test(failure.name, url=url):
            fail(fake, "list_agents", failure)
            response = alice.get(url)
            assert response.status_code == failure.portal_status
            assert failure.message in page_text(response)
            assert is_page(response)
            assert not fake.called("get_memory")


# --- activity -----------------------------------------------------------------------------------------


def test_activity_starts_empty(alice: Client):
    response = alice.get("/activity")
    assert response.status_code == 200
    assert is_page(response)
    assert "Nothing recorded yet." in body(response)


def test_activity_shows_my_changes_and_supports(alice: Client, carol: Client):
    added = alice.post(
        "/memory/append", {"scope": "user", "content": "- A note.", "reason": "Mine"}
    )
    assert added.status_code == 302
    carol.post("/support/", {"upn": "alice@contoso.com"}, follow=True)

    response = alice.get("/activity")
    text = page_text(response)
    assert response.status_code == 200
    assert "Added a note" in text and "Shared with every agent" in text and "You" in text
    assert "Looked up" in text and "Support: carol@contoso.com" in text


def test_activity_can_hide_the_support_staff_member(alice: Client, carol: Client, settings):
    carol.post("/support/", {"upn": "alice@contoso.com"}, follow=True)
    settings.PORTAL_SHOW_SUPPORT_ACTOR = False
    text = page_text(alice.get("/activity"))
    assert "Support staff" in text
    assert "carol@contoso.com" not in text


def test_activity_shows_only_my_own_memory(bob: Client, carol: Client):
    carol.post("/support/", {"upn": "alice@contoso.com"}, follow=True)
    assert "Nothing recorded yet." in body(bob.get("/activity"))


def test_pages_never_load_the_django_htmx_debug_script(alice: Client, settings):
    """With DEBUG on (the devstack), django-htmx's debug script would replace the whole
    page with any 400/403/404 answer to htmx, where the portal swaps a refused form back
    in place."""
    settings.DEBUG = True
    html = body(alice.get("/memory/user"))
    assert "htmx-2.min" in html
    assert "django-htmx.js" not in html


def test_provenance_reads_in_words_with_ids_behind_details(alice: Client):
    html = alice.get("/memory/user").content.decode()
    entry = html[html.index('id="entry-1"') :]
    entry = entry[: entry.index("</li>")]
    before_details = entry.split('<details class="entry-details">')[0]
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", before_details))
    assert re.search(r"Added \d+\D+ ago · because: User stated preference", words)
    assert '<time datetime="2026-10-02T16:40:55Z">' in entry  # the exact time (portal.js's title)
    details = entry[entry.index("<details") : entry.index("</details>")]
    assert "<summary>Details</summary>" in details and "<code>op-2291</code>" in details
    assert "op-2291" not in before_details  # ids only behind Details
    first = html[html.index('id="entry-0"') :]
    assert "<code>sess-7f3a</code>" in first[: first.index("</li>")]
