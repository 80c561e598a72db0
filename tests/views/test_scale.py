"""Pages at scale: the dashboard's cards in batches, finding and sorting many agents, memory
pages one page at a time, documents too large to change, and one preview at a time."""

from __future__ import annotations

import re

from django.core.cache import cache
from django.test import Client

from memory_ui.documents.paging import PAGE_PARTS, PART_CHARS, forget_prepared
from memory_ui.sources.coreapi import Agent, CoreAPIUnavailable
from memory_ui.web.stores.claims import preview_turn
from tests.fake_coreapi import AGENT_PREFIX, FakeCoreAPI
from tests.pages import batched_cards, forms, page_html
from tests.shapes import long_list, structured
from tests.views.conftest import identity_for
from tests.views.helpers import (
    HTMX,
    body,
    each_failure,
    fail,
    page_text,
    refused,
    starts_with,
)


def _agents(count: int) -> list[Agent]:
    return [
        Agent(
            name=f"agent-{n:03d}",
            object_id=f"{AGENT_PREFIX}agent-{n:03d}",
            display_name=f"Agent {n:03d}",
            description="Plans trips." if n % 2 else "Answers questions.",
        )
        for n in range(count)
    ]


# --- the dashboard ----------------------------------------------------------------------


def test_many_agents_load_in_batches_of_one_round_each(alice: Client, fake: FakeCoreAPI, settings):
    fake.agents = _agents(20)
    html = body(alice.get("/"))
    batches = batched_cards(html)
    assert [len(batch) for batch in batches] == [8, 8, 4]  # PORTAL_COREAPI_FAN_OUT each
    assert [name for batch in batches for name in batch] == [a.name for a in fake.agents]
    # Each batch loads when it comes into view, not all of them up front.
    assert html.count('hx-trigger="intersect once"') == 3
    assert [c.method for c in fake.calls] == ["list_agents"]


def test_a_batch_of_cards_reads_its_memories_in_one_request(alice: Client, fake: FakeCoreAPI):
    fake.agents = _agents(10)
    fake.put(structured(4000), "agent-002")
    query = "&".join(f"name=agent-{n:03d}" for n in range(8))
    response = alice.get(f"/cards/agents?{query}", headers=HTMX)
    html = page_html(response)
    assert html.count('class="memory-card"') == 8
    assert 'id="card-agent-agent-002"' in html
    entries = len(re.findall(r"^## Added", fake.text("agent-002"), re.M))
    card = html[html.index('id="card-agent-agent-002"') :]
    assert f"<dd>{entries}</dd>" in card[: card.index("</article>")]
    reads = [c.agent_object_id for c in fake.called("get_memory")]
    assert sorted(reads) == [f"{AGENT_PREFIX}agent-{n:03d}" for n in range(8)]


def test_a_batch_answers_with_the_ids_of_what_it_replaces(alice: Client, fake: FakeCoreAPI):
    # Focus on a card that is loading stays there (htmx keeps it on the element with the
    # same id): the batch and each title link carry the same ids loading and loaded.
    fake.agents = _agents(3)
    placeholders = body(alice.get("/"))
    loaded = body(alice.get("/cards/agents?name=agent-000&name=agent-001", headers=HTMX))
    for html in (placeholders, loaded):
        assert 'id="cards-agent-000"' in html
        assert 'id="card-agent-agent-001-link"' in html
    cache.clear()  # the agent list, kept briefly
    fake.fail("list_agents", CoreAPIUnavailable("CoreAPI is unavailable, try again."))
    failed = alice.get("/cards/agents?name=agent-000&name=agent-001", headers=HTMX)
    assert failed.status_code == 503 and starts_with(failed, '<div id="cards-agent-000"')


def test_a_batch_refuses_agents_that_are_not_the_users_and_too_many(alice: Client, fake):
    fake.agents = _agents(10)
    assert refused(alice.get("/cards/agents?name=agent-001&name=someone-else", headers=HTMX), 400)
    too_many = "&".join(f"name=agent-{n:03d}" for n in range(9))
    assert refused(alice.get(f"/cards/agents?{too_many}", headers=HTMX), 400)
    assert refused(alice.get("/cards/agents", headers=HTMX), 400)
    assert fake.called("get_memory") == []


def test_a_card_that_fails_in_a_batch_says_so_and_the_others_show(
    alice: Client, fake: FakeCoreAPI, subtests
):
    for (failure,) in each_failure():
        with subtests.test(failure.name):
            fail(fake, "get_memory", failure, agent="travel-planner")
            response = alice.get(
                "/cards/agents?name=benefits-assistant&name=travel-planner", headers=HTMX
            )
            assert response.status_code == 200
            html = body(response)
            travel = html[html.index('id="card-agent-travel-planner"') :]
            assert failure.message in page_text(response)
            assert 'hx-get="/cards/agents/travel-planner"' in travel  # Retry that card
            assert "alert" not in html[: html.index('id="card-agent-travel-planner"')]


def test_a_batch_when_the_agents_cannot_be_listed(alice: Client, fake: FakeCoreAPI, subtests):
    for (failure,) in each_failure():
        with subtests.test(failure.name):
            fail(fake, "list_agents", failure)
            response = alice.get("/cards/agents?name=travel-planner", headers=HTMX)
            assert response.status_code == failure.portal_status
            assert failure.message in page_text(response)


def test_find_and_sort_agents_without_javascript(alice: Client, fake: FakeCoreAPI):
    fake.agents = _agents(12)
    html = body(alice.get("/?q=plans+trips&sort=-name"))
    names = [name for batch in batched_cards(html) for name in batch]
    assert names == [f"agent-{n:03d}" for n in range(11, 0, -2)]
    assert "6 of 12 agents match" in html
    form = next(f for f in forms(html) if f.action == "/" and "q" in f.fields)
    assert form.method == "get" and form.fields["q"] == "plans trips"


def test_find_agents_with_htmx_updates_the_list_only(alice: Client, fake: FakeCoreAPI):
    fake.agents = _agents(12)
    response = alice.get("/?q=nothing-like-this", headers=HTMX)
    assert starts_with(response, '<section id="agents"')
    assert "No agent matches “nothing-like-this”" in page_text(response)
    assert batched_cards(body(response)) == []


def test_a_bad_sort_lists_every_agent_by_name(alice: Client, fake: FakeCoreAPI):
    fake.agents = list(reversed(_agents(3)))
    html = body(alice.get("/?sort=evil"))
    assert batched_cards(html) == [["agent-000", "agent-001", "agent-002"]]


# --- memory pages, one page at a time ------------------------------------------------------


def test_a_long_memory_shows_its_newest_entries_first_then_more(alice: Client, fake):
    fake.put(structured(200_000, body=100), "travel-planner")
    entries = len(re.findall(r"^## Added", fake.text("travel-planner"), re.M))
    first = body(alice.get("/memory/agents/travel-planner"))
    shown = [int(n) for n in re.findall(r'<li class="entry" id="entry-(\d+)"', first)]
    assert shown == list(range(entries - 1, entries - 1 - PAGE_PARTS, -1))
    assert f"Entries 1\u2013{PAGE_PARTS} of {entries}, newest first." in first
    more = re.search(r'<a href="([^"]+\?page=2)" hx-get="\1" hx-target="#show-more"', first)
    assert more, "a Show more link that works without JavaScript"

    # htmx: only the next entries and the next Show more, in place of the link.
    fragment = body(alice.get(more[1], headers={**HTMX, "HX-Target": "show-more"}))
    assert fragment.lstrip().startswith('<li class="entry"')
    older = [int(n) for n in re.findall(r'id="entry-(\d+)"', fragment)]
    assert older == list(range(entries - 1 - PAGE_PARTS, entries - 1 - 2 * PAGE_PARTS, -1))
    assert "<html" not in fragment and 'id="show-more"' in fragment

    # Without JavaScript: the whole page, with a way back to newer entries.
    page_two = body(alice.get(more[1]))
    assert "Newer entries" in page_two and f"Entries {PAGE_PARTS + 1}\u2013" in page_two


def test_a_link_to_an_entry_opens_the_page_that_holds_it(alice: Client, fake: FakeCoreAPI):
    fake.put(structured(200_000, body=100), "travel-planner")
    html = body(alice.get("/memory/agents/travel-planner?entry=3"))
    assert 'id="entry-3"' in html and "Newer entries" in html


def test_a_huge_entry_is_shown_in_part_with_the_way_to_all_of_it(alice: Client, fake):
    fake.put("## Added 2026-01-01T00:00:00Z\n\n" + "word " * 40_000 + "\n", "travel-planner")
    response = alice.get("/memory/agents/travel-planner")
    assert response.status_code == 200
    assert len(response.content) < 3 * PART_CHARS + 30_000
    assert "This entry is long" in page_text(response)
    assert "?view=raw" in body(response)


def test_a_long_list_is_paged_and_its_items_can_be_deleted_on_each_page(alice: Client, fake):
    fake.put(long_list(100_000), "travel-planner")
    html = body(alice.get("/memory/agents/travel-planner"))
    items = [f for f in forms(html) if f.action == "/memory/items/delete"]
    assert len(items) == PAGE_PARTS
    assert f"Parts 1\u2013{PAGE_PARTS} of" in html
    second = body(alice.get("/memory/agents/travel-planner?page=2"))
    starts = [f.fields["start"] for f in forms(second) if f.action == "/memory/items/delete"]
    assert starts[0] == str(PAGE_PARTS)


def test_the_markdown_view_is_paged(alice: Client, fake: FakeCoreAPI):
    fake.put(long_list(200_000), "travel-planner")
    first = alice.get("/memory/agents/travel-planner?view=raw")
    assert len(first.content) < 100_000
    assert "Next part" in body(first) and "part 1 of 4" in page_text(first)
    last = body(alice.get("/memory/agents/travel-planner?view=raw&page=4"))
    assert "Previous part" in last and "Next part" not in last


def test_bad_page_numbers_show_the_first_page(alice: Client, fake: FakeCoreAPI):
    for query in ("?page=0", "?page=abc", "?page=999", "?entry=-3", "?view=raw&page=99"):
        response = alice.get("/memory/agents/travel-planner" + query)
        assert response.status_code == 200, query


def test_the_parsed_document_is_reused_until_it_changes(alice: Client, fake, monkeypatch):
    forget_prepared()
    parsed = []
    from memory_ui.documents import paging

    real = paging.parse_document
    monkeypatch.setattr(paging, "parse_document", lambda text: parsed.append(1) or real(text))
    for _ in range(3):
        alice.get("/memory/agents/travel-planner")
    assert len(parsed) == 1
    fake.put(fake.text("travel-planner") + "\n- one more\n", "travel-planner")
    alice.get("/memory/agents/travel-planner")
    assert len(parsed) == 2


def test_a_memory_page_hashes_its_document_once(alice: Client, fake, monkeypatch):
    """Its visit, its forms' version field and its parsed parts' cache all need the hash:
    a 1 MiB document takes milliseconds to hash, so once a page, not once each."""
    from memory_ui.documents import paging, versions

    fake.put(structured(200_000), "travel-planner")
    text = fake.text("travel-planner")
    hashed = []
    real = versions.content_hash

    def counted(value: str) -> str:
        hashed.append(value == text)
        return real(value)

    monkeypatch.setattr(versions, "content_hash", counted)
    monkeypatch.setattr(paging, "content_hash", counted)
    for _ in range(2):  # the first view parses it, the second finds it parsed
        fake.put(text, "travel-planner")  # as read from CoreAPI: a new object each time
        hashed.clear()
        page = alice.get("/memory/agents/travel-planner")
        assert page.status_code == 200 and 'name="version"' in body(page)
        assert hashed.count(True) == 1


# --- too large to change ------------------------------------------------------------------


def test_a_memory_over_corepapis_write_limit_can_be_read_but_not_changed(
    alice: Client, fake: FakeCoreAPI, settings
):
    fake.put(structured(2 * 1024 * 1024 + 50_000), "travel-planner")
    html = body(alice.get("/memory/agents/travel-planner"))
    assert "This memory is too large to change here." in html
    assert "/memory/edit?" not in html and 'form="entry-delete"' not in html
    assert 'action="/memory/append" hx-get="/memory/append"' in html  # notes still
    assert 'href="/memory/agents/travel-planner/export"' in html
    edit = alice.get("/memory/edit?scope=agent&agent=travel-planner")
    assert edit.status_code == 413
    assert "too large to edit here" in page_text(edit)
    assert "<textarea" not in body(edit)


def test_a_delete_on_a_memory_too_large_is_refused_before_it_is_sent(alice: Client, fake):
    fake.put(structured(2 * 1024 * 1024 + 50_000), "travel-planner")
    page = body(alice.get("/memory/agents/travel-planner?view=raw"))
    version = re.search(r'name="version" value="([^"]+)"', body(alice.get("/memory/user")))
    assert page and version
    from memory_ui.documents.versions import Version

    token = Version.of(fake._read("agent", fake.object_id("travel-planner"))).token()
    response = alice.post(
        "/memory/entries/delete",
        {"scope": "agent", "agent": "travel-planner", "version": token, "index": "0"},
    )
    assert response.status_code == 413
    assert "larger than CoreAPI accepts in one write" in page_text(response)
    assert fake.writes() == []


# --- previews -----------------------------------------------------------------------------


def test_a_long_preview_renders_only_its_start(alice: Client):
    response = alice.post("/memory/edit/preview", {"content": "- item\n" * 100_000}, headers=HTMX)
    assert response.status_code == 200
    assert len(response.content) < 200_000
    assert "Only the start of the draft is previewed" in page_text(response)


def test_one_preview_at_a_time_per_person(alice: Client, bob: Client):
    oid = identity_for("alice@contoso.com").oid
    with preview_turn(oid) as mine:
        assert mine
        busy = alice.post("/memory/edit/preview", {"content": "- x"}, headers=HTMX)
        assert busy.status_code == 429
        assert "Still rendering your previous preview" in page_text(busy)
        assert bob.post("/memory/edit/preview", {"content": "- x"}, headers=HTMX).status_code == 200
    assert alice.post("/memory/edit/preview", {"content": "- x"}, headers=HTMX).status_code == 200
    assert cache.get(f"preview-turn:{oid}") is None
