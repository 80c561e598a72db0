"""The search page (/search) on the fake CoreAPI: filters, grouping, links to entries,
escaping, refusals, failures per memory, empty states, and the htmx fragment."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from django.test import Client

from devstack.coreapi import formats
from memory_ui.sources.coreapi import CoreAPIUnavailable
from tests.fake_coreapi import FakeCoreAPI
from tests.pages import page_html
from tests.views.helpers import (
    AGENTS,
    HEADERS,
    HTMX,
    body,
    each_failure,
    fail,
    is_page,
    page_text,
    starts_with,
    varies_on_htmx,
)


def read_memories(fake: FakeCoreAPI) -> list[str | None]:
    """Which memories the portal read: None for the shared one, else the agent's name."""
    return [
        call.agent_object_id.rsplit("/", 1)[-1] if call.agent_object_id else None
        for call in fake.called("get_memory")
    ]


def group_labels(html: str) -> list[str]:
    return re.findall(r'<h3 id="search-memory-\d+"><a href="[^"]*">([^<]*)</a>', html)


def main(response) -> str:
    """The page's own content, without the header and footer of base.html."""
    html = body(response)
    return html[html.index("<main") : html.index("</main>")]


def summary(response) -> str:
    match = re.search(r'<p id="search-summary"[^>]*>([^<]*)</p>', body(response))
    assert match, "no summary"
    return match[1]


# --- reaching the page -------------------------------------------------------------------------


def test_anonymous_users_are_sent_to_sign_in(client: Client, fake: FakeCoreAPI):
    response = client.get("/search", {"q": "prefers"})
    assert response.status_code == 302
    assert response["Location"].startswith("/auth/login?next=/search")
    assert fake.calls == []


def test_search_is_linked_from_the_header_and_the_dashboard(alice: Client):
    html = body(alice.get("/"))
    assert '<li><a href="/search">Search</a></li>' in html
    assert re.search(r'<form method="get" action="/search" role="search"[^>]*>', html)
    assert 'name="q"' in html


def filters(response) -> str:
    """The opening tag of the filters' disclosure (folded away on a phone)."""
    match = re.search(
        r'<details class="search-filters"[^>]*>\s*<summary>(.*?)</summary>', main(response)
    )
    assert match, "no filters disclosure"
    return match[0]


def test_the_filters_fold_away_only_while_none_is_used(alice: Client):
    plain = filters(alice.get("/search", {"q": "prefers"}))
    assert " open" not in plain and "in use" not in plain
    used = filters(alice.get("/search", {"q": "prefers", "agent": "_shared", "reason": "x"}))
    assert " open>" in used and "(2 in use)" in used
    wrong = alice.get("/search", {"date_from": "2026-10-01", "date_to": "2026-09-01"})
    assert wrong.status_code == 400 and " open>" in filters(wrong)
    # The dates' hint is the help text of their group, read out with it.
    html = main(wrong)
    assert '<fieldset class="search-dates" aria-describedby="search-dates-help">' in html
    assert 'id="search-dates-help"' in html


def test_only_get(alice: Client):
    assert alice.post("/search", {"q": "x"}).status_code == 405


# --- results --------------------------------------------------------------------------------


def test_everything_is_listed_without_filters(alice: Client, fake: FakeCoreAPI):
    response = alice.get("/search")
    html = body(response)
    assert response.status_code == 200 and is_page(response)
    assert response["Cache-Control"] == "no-store, private"
    # The seed: 2 shared entries, 1 benefits, the whole helpdesk document, 2 travel.
    assert summary(response) == "6 matches in 4 memories."
    assert group_labels(html) == ["Shared with every agent", *AGENTS.values()]
    assert sorted(read_memories(fake), key=str) == sorted([None, *AGENTS], key=str)


def test_text_matches_are_grouped_by_memory_and_link_to_their_entries(alice: Client):
    response = alice.get("/search", {"q": "prefers"})
    html = body(response)
    assert summary(response) == "3 matches in 3 memories."
    assert group_labels(html) == ["Shared with every agent", "IT Helpdesk", "Travel Planner"]
    # Entries link to their place on the memory page; `entry` finds its page when paged.
    assert 'href="/memory/user?entry=0#entry-0"' in html
    assert 'href="/memory/agents/travel-planner?entry=0#entry-0"' in html
    assert "<mark>Prefers</mark> concise answers" in html
    # The helpdesk document has no dated entries: one result for all of it, no date.
    helpdesk = html[html.index("IT Helpdesk</a>") : html.index("Travel Planner</a>")]
    assert 'href="/memory/agents/it-helpdesk"' in helpdesk and "entry=" not in helpdesk
    assert "no date: this memory has no dated entries" in page_text(response)


def test_one_agent_only(alice: Client, fake: FakeCoreAPI):
    response = alice.get("/search", {"q": "prefers", "agent": "travel-planner"})
    assert response.status_code == 200
    assert group_labels(body(response)) == ["Travel Planner"]
    assert read_memories(fake) == ["travel-planner"]
    assert '<option value="travel-planner" selected>Travel Planner</option>' in body(response)


def test_shared_memory_only(alice: Client, fake: FakeCoreAPI):
    response = alice.get("/search", {"agent": "_shared"})
    assert group_labels(body(response)) == ["Shared with every agent"]
    assert read_memories(fake) == [None]
    assert summary(response) == "2 matches in 1 memory."


def test_reason_filter(alice: Client):
    response = alice.get("/search", {"reason": "PREFERENCE"})
    html = body(response)
    assert summary(response) == "2 matches in 2 memories."
    assert "User stated <mark>preference</mark>" in html
    assert "Trip <mark>preference</mark>s" in html


def test_date_filter_keeps_undated_results_and_says_so(alice: Client):
    response = alice.get("/search", {"date_from": "2026-10-01", "date_to": "2026-10-05"})
    html = body(response)
    # Shared 2 Oct, benefits 5 Oct (the last day counts whole), and helpdesk (no date).
    assert summary(response) == "3 matches in 3 memories."
    assert group_labels(html) == ["Shared with every agent", "Benefits Assistant", "IT Helpdesk"]
    assert "have no date to filter by, so they are shown whatever the dates" in page_text(response)
    assert 'value="2026-10-01"' in html and 'value="2026-10-05"' in html


def test_the_text_is_never_a_pattern(alice: Client):
    response = alice.get("/search", {"q": ".*"})
    assert response.status_code == 200
    assert summary(response) == "0 matches in 0 memories."


def test_results_are_capped_with_a_link_to_the_rest(alice: Client, fake: FakeCoreAPI):
    document = ""
    for i in range(25):
        document = formats.append_entry(
            document, f"- travel fact {i}", datetime(2026, 10, 1, 0, 0, i, tzinfo=UTC)
        )
    fake.put(document, "travel-planner")
    response = alice.get("/search", {"q": "fact"})
    html = body(response)
    assert summary(response) == "25 matches in 1 memory."
    assert html.count('class="search-hit"') == 10
    assert "15 more in this memory" in page_text(response)
    assert 'href="/search?q=fact&amp;agent=travel-planner"' in html
    alone = alice.get("/search", {"q": "fact", "agent": "travel-planner"})
    assert body(alone).count('class="search-hit"') == 25
    assert "more in this memory" not in page_text(alone)
    # Newest first.
    assert body(alone).index("fact</mark> 24<") < body(alone).index("fact</mark> 0<")


# --- hostile memory ------------------------------------------------------------------------------


def test_hostile_memory_is_shown_as_escaped_plain_text(alice: Client, fake: FakeCoreAPI):
    fake.put(
        formats.append_entry(
            "",
            '<script>alert("x")</script> <img src=x onerror=alert(1)> [click](javascript:alert(2))',
            datetime(2026, 10, 1, tzinfo=UTC),
            reason='<b onmouseover="alert(3)">why</b>',
        ),
        "travel-planner",
    )
    response = alice.get("/search", {"q": "<script>", "agent": "travel-planner"})
    html = main(response)
    assert response.status_code == 200
    assert "<script>alert" not in html and "<img" not in html and "<b onmouseover" not in html
    assert "<mark>&lt;script&gt;</mark>alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'href="javascript' not in html  # markdown is not rendered: the link stays text
    assert "&lt;b onmouseover=&quot;alert(3)&quot;&gt;why&lt;/b&gt;" in html
    # The text searched for is escaped where the page repeats it, too.
    nothing = alice.get("/search", {"q": "<i>nothing</i>"})
    assert "<i>nothing</i>" not in main(nothing)
    assert "Nothing matches “&lt;i&gt;nothing&lt;/i&gt;”" in main(nothing)


def test_hostile_agent_names_are_escaped(alice: Client, fake: FakeCoreAPI):
    agent = fake.agents[0]
    fake.agents[0] = type(agent)(
        name=agent.name,
        object_id=agent.object_id,
        display_name="<b>Evil</b>",
        description=agent.description,
        roles=agent.roles,
    )
    html = body(alice.get("/search", {"q": "PPO"}))
    assert "<b>Evil</b>" not in html
    assert "&lt;b&gt;Evil&lt;/b&gt;" in html


# --- refusals ----------------------------------------------------------------------------------


def test_an_agent_not_in_the_users_list_is_refused(alice: Client, fake: FakeCoreAPI):
    for name in ("finance-insights", "../user", "agent:travel-planner"):
        fake.calls.clear()
        response = alice.get("/search", {"q": "x", "agent": name})
        assert response.status_code == 400
        assert "Select a valid choice" in page_text(response)
        assert read_memories(fake) == []


def test_bad_dates_are_refused_with_the_input_kept(alice: Client, fake: FakeCoreAPI):
    response = alice.get(
        "/search", {"q": "prefers", "date_from": "2026-11-01", "date_to": "2026-10-01"}
    )
    assert response.status_code == 400
    assert "The end date is before the start date." in page_text(response)
    assert 'value="prefers"' in body(response)
    assert read_memories(fake) == []
    garbled = alice.get("/search", {"date_from": "yesterday"})
    assert garbled.status_code == 400
    assert "Enter a valid date." in page_text(garbled)


def test_overlong_text_is_refused(alice: Client, fake: FakeCoreAPI):
    response = alice.get("/search", {"q": "x" * 201})
    assert response.status_code == 400
    assert read_memories(fake) == []


# --- empty states ----------------------------------------------------------------------------------


def test_no_memory_yet(alice: Client, fake: FakeCoreAPI):
    for agent in (None, *AGENTS):
        fake.put("", agent)
    response = alice.get("/search", {"q": "anything"})
    assert response.status_code == 200
    assert summary(response) == "No memory yet."
    assert "No memory yet." in page_text(response)
    assert "Nothing matches" not in page_text(response)


def test_nothing_matches(alice: Client):
    response = alice.get("/search", {"q": "zeppelin", "agent": "it-helpdesk"})
    assert response.status_code == 200
    text = page_text(response)
    assert "Nothing matches “zeppelin” with these filters." in text
    assert 'href="/search?q=zeppelin"' in body(response)  # the same text in every memory


# --- failures ----------------------------------------------------------------------------------


def test_one_memory_failing_leaves_the_others(alice: Client, fake: FakeCoreAPI, subtests):
    for failure, mode in each_failure(["page", "htmx"]):
        with subtests.test(failure.name, mode=mode):
            fail(fake, "get_memory", failure, agent="travel-planner")
            response = alice.get("/search", {"q": "prefers"}, headers=HEADERS[mode])
            html = page_html(response)
            assert is_page(response) == (mode == "page")
            assert group_labels(html) == [
                "Shared with every agent",
                "IT Helpdesk",
                "Travel Planner",
            ]
            travel = html[html.index("Travel Planner</a>") :]
            assert f"This memory could not be searched. {failure.message}" in page_text(
                response
            ).replace("&#x27;", "'")
            assert 'class="search-hit"' not in travel
            assert "2 matches in 2 memories; 1 could not be searched." in html


def test_every_memory_failing_answers_with_the_failure(alice: Client, fake: FakeCoreAPI):
    fake.fail("get_memory", CoreAPIUnavailable("CoreAPI is unavailable, try again.", status=503))
    response = alice.get("/search")
    assert response.status_code == 503
    assert page_text(response).count("This memory could not be searched.") == 4
    assert "Nothing matches" not in page_text(response)  # nothing was searched


def test_nothing_matches_where_it_could_search(alice: Client, fake: FakeCoreAPI):
    fake.fail("get_memory", CoreAPIUnavailable("down", status=503), agent="travel-planner")
    response = alice.get("/search", {"q": "zeppelin"})
    assert response.status_code == 200
    assert (
        "Nothing matches “zeppelin” with these filters in the memories that could be searched."
        in (page_text(response))
    )
    assert group_labels(body(response)) == ["Travel Planner"]


def test_agent_list_failing_still_searches_the_shared_memory(alice: Client, fake: FakeCoreAPI):
    fake.fail("list_agents", CoreAPIUnavailable("CoreAPI is unavailable, try again.", status=503))
    response = alice.get("/search", {"q": "prefers"})
    assert response.status_code == 503
    assert "so only your shared memory was searched" in page_text(response)
    assert group_labels(body(response)) == ["Shared with every agent"]
    one_agent = alice.get("/search", {"q": "prefers", "agent": "travel-planner"})
    assert one_agent.status_code == 503
    assert "so that memory could not be searched" in page_text(one_agent)
    assert "Select a valid choice" not in page_text(one_agent)
    assert read_memories(fake) == [None]


# --- htmx ------------------------------------------------------------------------------------


def test_htmx_gets_the_results_fragment_and_the_summary_out_of_band(alice: Client):
    response = alice.get("/search", {"q": "prefers"}, headers=HTMX)
    assert response.status_code == 200
    assert not is_page(response)
    assert varies_on_htmx(response)
    assert starts_with(response, '<p id="search-summary" hx-swap-oob="innerHTML">')
    assert '<section id="search-results"' in body(response)
    assert "<form" not in body(response)
    page = alice.get("/search", {"q": "prefers"})
    assert varies_on_htmx(page)


def test_htmx_fragment_for_refused_filters_says_why(alice: Client):
    response = alice.get("/search", {"agent": "finance-insights"}, headers=HTMX)
    assert response.status_code == 400
    assert not is_page(response)
    assert "Memory: Select a valid choice" in page_text(response)


def test_restoring_history_gets_the_whole_page(alice: Client):
    headers = {**HTMX, "HX-History-Restore-Request": "true"}
    response = alice.get("/search", {"q": "prefers"}, headers=headers)
    assert is_page(response)


def test_the_form_works_without_javascript_and_updates_with_htmx(alice: Client):
    html = body(alice.get("/search"))
    form = re.search(r"<form [^>]*role=\"search\"[^>]*>", html[html.index("<main") :])
    assert form
    tag = form[0]
    assert 'method="get" action="/search"' in tag
    assert 'hx-get="/search"' in tag and 'hx-push-url="true"' in tag
    assert 'hx-target="#search-results"' in tag and "delay:" in tag
    assert '<button type="submit">Search</button>' in html
    assert 'role="status"' in html  # the summary is announced when it changes
    for name, kind in [("q", "search"), ("date_from", "date"), ("date_to", "date")]:
        assert f'<input type="{kind}" name="{name}"' in html


def test_choices_are_the_users_own_agents(bob: Client, fake: FakeCoreAPI):
    fake.agents = [a for a in fake.agents if a.name == "it-helpdesk"]
    html = body(bob.get("/search"))
    options = re.findall(r'<option value="([^"]*)"', html)
    assert options == ["", "_shared", "it-helpdesk"]
