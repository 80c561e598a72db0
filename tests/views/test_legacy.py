"""The legacy memory stores' pages (the generic source pages: views.sources,
views.source_changes, views.source_move) through Django's
test client, with the legacy source replaced by `tests.fake_legacy.FakeLegacyBackend`
(installed where `legacy_ops` looks it up). That fake is what lets a source lack each
capability in turn; the real adapter and emulator are covered in tests/integration."""

from __future__ import annotations

import io
import json
import logging
import re
import zipfile
from dataclasses import replace
from unittest.mock import Mock

import pytest
from django.test import Client
from django.urls import reverse

from memory_ui.audit import AuditEvent
from memory_ui.memory.everything import missing_message
from memory_ui.sources import registry
from memory_ui.sources.coreapi import CoreAPIUnavailable
from memory_ui.sources.legacy import (
    LegacyForbidden,
    LegacyRateLimited,
    LegacyUnauthorized,
    LegacyUnavailable,
)
from memory_ui.sources.legacy import operations as legacy_ops
from memory_ui.sources.legacy.adapter import CAPABILITIES, READ_ONLY_REASON
from memory_ui.sources.protocol import Capability, Erasure
from tests.fake_legacy import STORES, FakeLegacyBackend, missing_sentence
from tests.pages import cells, table_rows
from tests.views.conftest import signed_in
from tests.views.helpers import body, field_value, page_text, refused
from tests.views.test_news import Clock, agent_adds
from tests.views.test_search import summary

TRAVEL = STORES["travel-planner"]
ALICE = "alice@contoso.com"
PREFS = "/memories/preferences.md"


@pytest.fixture
def legacy(fake, settings, monkeypatch: pytest.MonkeyPatch) -> FakeLegacyBackend:
    settings.LEGACY_STORES_BASE_URL = "http://legacy.invalid"
    backend = FakeLegacyBackend()
    backend.put(
        "travel-planner", ALICE, PREFS, "# Travel\n\n- Prefers aisle seats\n- Vegan", "Prefs"
    )
    backend.put("travel-planner", ALICE, "/memories/trips/berlin.md", "Berlin in May")
    monkeypatch.setattr(legacy_ops, "_backend", lambda: backend)
    return backend


SECTION = reverse("source_section", args=["legacy"])


def url(name: str, query: str = "", store: str = TRAVEL) -> str:
    """A page of the store's, the generic source pages' (the item in `query`)."""
    return reverse(name, args=["legacy"]) + f"?target={store}" + (f"&{query}" if query else "")


def posted(**fields: str) -> dict[str, str]:
    """A form's fields, with the store the travel planner's."""
    return {"target": TRAVEL, **fields}


def test_dashboard_first_paint_does_not_call_the_legacy_source(alice: Client, legacy) -> None:
    page = alice.get(reverse("dashboard")).content.decode()

    assert legacy.calls == []
    section = re.search(r'<section id="legacy-stores"[^>]*>', page)
    assert section and 'hx-trigger="intersect once"' in section.group(0)
    assert f'href="{SECTION}"' in page  # works without JavaScript


def test_dashboard_has_no_legacy_section_when_the_source_is_off(alice: Client, settings) -> None:
    settings.LEGACY_STORES_BASE_URL = ""

    assert 'id="legacy-stores"' not in alice.get(reverse("dashboard")).content.decode()
    assert alice.get(SECTION).status_code == 404


def test_section_shows_each_store_as_being_turned_down_with_its_files(
    alice: Client, legacy
) -> None:
    response = alice.get(SECTION, headers={"HX-Request": "true"})
    html = response.content.decode()

    assert response.status_code == 200
    assert "<h1>" not in html  # the fragment, for the dashboard
    assert html.count("Being turned down") >= 2
    assert TRAVEL in html and STORES["it-helpdesk"] in html
    assert re.search(r"<dt>Files</dt><dd>2</dd>", html)
    assert "No files about you." in html  # alice has nothing in the helpdesk store


def test_store_page_lists_files_and_the_turn_down_notice(alice: Client, legacy) -> None:
    html = alice.get(url("source_target")).content.decode()

    assert "being turned down" in html
    assert PREFS in html and "Prefs" in html and "/memories/trips/berlin.md" in html
    assert "aisle" not in html  # contents are read per file, not with the list
    assert legacy.calls == ["read_page"]


# --- how people see a store: its agent's name, the older system; the full name in Details --


def outside_details(html: str) -> str:
    """The page's text as read before opening any store's Details (links' addresses keep
    the store's full name: they are not read)."""
    html = re.sub(r'<details class="target-details">.*?</details>', "", html, flags=re.S)
    return re.sub(r"<[^>]+>", " ", html)


def test_cards_are_named_by_the_agents_display_name_and_say_older_system(
    alice: Client, legacy, fake
) -> None:
    fake.agents = [
        replace(agent, display_name="Trip Helper") if agent.name == "travel-planner" else agent
        for agent in fake.agents
    ]
    response = alice.get(SECTION, headers={"HX-Request": "true"})
    html = response.content.decode()
    shown = outside_details(html)

    titles = re.findall(r'<h3 id="legacy-card-\d+"><a [^>]*>([^<]*)</a></h3>', html)
    assert titles == ["Trip Helper", "IT Helpdesk"]
    assert TRAVEL not in shown and "travel-planner" not in shown and "Kept by" not in shown
    assert "older system" in shown and "CoreAPI" not in shown
    # The technical name is still there, folded away under each card's name.
    details = re.findall(r'<details class="target-details">.*?</details>', html, flags=re.S)
    assert len(details) == 2 and TRAVEL in details[0] and STORES["it-helpdesk"] in details[1]
    intro = re.search(r'<p class="source-description">(.*?)</p>', html, flags=re.S)
    assert intro and intro[1].casefold().count("turned down") == 1


def test_a_store_whose_agent_the_person_cannot_read_gets_a_readable_name(
    alice: Client, legacy, fake
) -> None:
    # Stores are listed to everyone: the display name is for those who can read the agent.
    fake.agents = [agent for agent in fake.agents if agent.name != "it-helpdesk"]
    fake.agents = [
        replace(agent, display_name="Trip Helper") if agent.name == "travel-planner" else agent
        for agent in fake.agents
    ]
    html = alice.get(SECTION, headers={"HX-Request": "true"}).content.decode()

    titles = re.findall(r'<h3 id="legacy-card-\d+"><a [^>]*>([^<]*)</a></h3>', html)
    assert titles == ["Trip Helper", "It Helpdesk"]  # the agent name, made readable


def test_stores_keep_readable_names_when_coreapi_cannot_list_the_agents(
    alice: Client, legacy, fake
) -> None:
    fake.fail("list_agents", CoreAPIUnavailable("CoreAPI is unavailable, try again."))
    response = alice.get(SECTION, headers={"HX-Request": "true"})

    titles = re.findall(
        r'<h3 id="legacy-card-\d+"><a [^>]*>([^<]*)</a></h3>', response.content.decode()
    )
    assert response.status_code == 200 and titles == ["Travel Planner", "It Helpdesk"]


def test_store_and_file_pages_name_the_agent_and_the_older_system(alice: Client, legacy) -> None:
    pages = {
        "store": alice.get(url("source_target")),
        "file": alice.get(url("source_item", f"item={PREFS}")),
        "move": alice.get(url("source_move", f"item={PREFS}")),
        "clear": alice.get(url("source_clear")),
    }

    for name, response in pages.items():
        html = response.content.decode()
        shown = outside_details(html.split("<main", 1)[1])
        read = shown.split("“Moved from ")[0]  # the move's reason names the store: provenance
        assert TRAVEL not in read and "travel-planner" not in shown, name
        assert TRAVEL not in html.split("</title>")[0], name
        assert "Kept by" not in shown and "into CoreAPI" not in shown, name
        assert "Travel Planner" in page_text(response), name
        assert page_text(response).casefold().count("being turned down") <= 1, name
    store = page_text(pages["store"])
    assert "Travel Planner in the older system" in store
    assert "The older system is being turned down." in store
    assert f"this is the memory store {TRAVEL}" in store  # in its Details
    assert re.search(r"<title>Travel Planner · the older system", body(pages["store"]))
    assert "Move to your current memory" in page_text(pages["file"])
    assert "Clear Travel Planner in the older system" in page_text(pages["clear"])


def test_store_page_pages_with_the_store_token(alice: Client, legacy) -> None:
    legacy.page_size = 1
    first = alice.get(url("source_target")).content.decode()
    next_url = re.search(r'href="([^"]*[?;]page=[^"]*)">Next files', first)

    assert next_url and PREFS in first and "berlin" not in first
    second = alice.get(next_url.group(1).replace("&amp;", "&")).content.decode()
    assert "/memories/trips/berlin.md" in second and PREFS not in second
    assert "First page" in second


def test_empty_store_and_other_users_files(bob: Client, legacy) -> None:
    html = bob.get(url("source_target")).content.decode()

    assert "This store keeps no files about you." in html
    assert PREFS not in html  # the scope is bob's, from his identity


def test_unknown_store_is_404(alice: Client, legacy) -> None:
    response = alice.get(url("source_target", store="main.finance.secret_memory"))

    assert response.status_code == 404
    assert legacy.calls == []


def test_anonymous_is_sent_to_sign_in(legacy) -> None:
    response = Client().get(url("source_target"))

    assert response.status_code == 302 and "login" in response["Location"]


def test_file_page_renders_contents_sanitized(alice: Client, legacy) -> None:
    legacy.put("travel-planner", ALICE, "/memories/x.md", "Hi <script>alert(1)</script> there")

    html = alice.get(url("source_item", "item=/memories/x.md")).content.decode()

    assert "<script>alert(1)" not in html
    assert "Hi" in html and "Edit the whole file" in html


def test_file_htmx_is_the_contents_only(alice: Client, legacy) -> None:
    response = alice.get(url("source_item", f"item={PREFS}"), headers={"HX-Request": "true"})

    assert "aisle" in response.content.decode()
    assert '<h1 class="item-key"' not in response.content.decode()


def test_missing_file_is_404_with_a_message(alice: Client, legacy) -> None:
    response = alice.get(url("source_item", "item=/memories/none.md"))

    assert response.status_code == 404
    assert "couldn" in response.content.decode()


def _version(client: Client) -> str:
    html = client.get(url("source_edit", f"item={PREFS}")).content.decode()
    found = re.search(r'name="version" value="([^"]+)"', html)
    assert found
    return found.group(1)


def test_whole_file_edit_previews_then_saves(alice: Client, legacy) -> None:
    version = _version(alice)
    form = posted(item=PREFS, text="# Travel\n\n- Window seats", version=version)

    preview = alice.post(url("source_edit"), {**form, "action": "preview"})
    assert "Preview of your change" in preview.content.decode()
    assert "Window seats" in preview.content.decode()
    assert "aisle" in legacy.files[(TRAVEL, ALICE)][PREFS].text  # nothing saved yet

    saved = alice.post(url("source_edit"), {**form, "action": "save"})
    assert saved.status_code == 302
    assert legacy.files[(TRAVEL, ALICE)][PREFS].text == "# Travel\n\n- Window seats"
    assert AuditEvent.objects.filter(source="legacy", action="edit").exists()


def test_whole_file_edit_refuses_a_file_changed_meanwhile(alice: Client, legacy) -> None:
    version = _version(alice)
    legacy.put("travel-planner", ALICE, PREFS, "changed elsewhere")
    form = posted(item=PREFS, text="mine", version=version, action="save")

    response = alice.post(url("source_edit"), form)

    html = response.content.decode()
    assert response.status_code == 409
    assert "changed elsewhere" in html and ">\nmine</textarea>" in html  # nothing lost
    assert legacy.files[(TRAVEL, ALICE)][PREFS].text == "changed elsewhere"


def test_one_entry_edit_is_a_str_replace(alice: Client, legacy) -> None:
    page = alice.get(url("source_entry", f"item={PREFS}&line=3")).content.decode()
    version = re.search(r'name="version" value="([^"]+)"', page)
    assert version and 'value="- Prefers aisle seats"' in page

    form = posted(item=PREFS, old="- Prefers aisle seats", new="- Prefers window seats")
    response = alice.post(url("source_entry"), {**form, "version": version[1], "action": "save"})

    assert response.status_code == 302
    assert (
        legacy.files[(TRAVEL, ALICE)][PREFS].text == "# Travel\n\n- Prefers window seats\n- Vegan"
    )


def test_a_line_that_is_no_number_is_a_400_not_a_500(alice: Client, legacy, caplog) -> None:
    # "²" passed isdigit() and then failed int(): a 500 and a traceback each time.
    for line in ("²", "٣x", "-1", "three"):
        legacy.calls.clear()
        with caplog.at_level(logging.ERROR):
            response = alice.get(url("source_entry", f"item={PREFS}&line={line}"))
        assert refused(response, 400), line
        assert legacy.calls == []  # refused before the store is asked for the file
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    # A number that names no entry is still a 404; a good one still opens its line.
    assert alice.get(url("source_entry", f"item={PREFS}&line=99")).status_code == 404
    assert alice.get(url("source_entry", f"item={PREFS}&line=3")).status_code == 200


def test_delete_then_undo_recreates_the_path(alice: Client, legacy) -> None:
    deleted = alice.post(url("source_delete"), posted(item=PREFS))

    assert deleted.status_code == 302 and "undo=" in deleted["Location"]
    assert PREFS not in legacy.files[(TRAVEL, ALICE)]
    page = alice.get(deleted["Location"]).content.decode()
    assert f"Deleted {PREFS}." in page
    token = re.search(r'name="undo" value="([^"]+)"', page)
    assert token

    undone = alice.post(url("source_undo"), posted(undo=token.group(1)))
    assert undone.status_code == 302
    assert legacy.files[(TRAVEL, ALICE)][PREFS].description == "Prefs"
    assert alice.post(url("source_undo"), posted(undo=token.group(1))).status_code == 302
    assert "can no longer be undone" in alice.get(url("source_target")).content.decode()


def test_undo_token_of_another_session_does_nothing(alice: Client, legacy) -> None:
    page = alice.get(alice.post(url("source_delete"), posted(item=PREFS))["Location"])
    token = re.search(r'name="undo" value="([^"]+)"', page.content.decode())
    assert token
    mallory = signed_in(Client(), "mallory@contoso.com")

    mallory.post(url("source_undo"), posted(undo=token.group(1)))

    assert PREFS not in legacy.files[(TRAVEL, ALICE)]
    assert not legacy.files.get((TRAVEL, "mallory@contoso.com"))


def test_clear_needs_the_typed_word_then_reports_each_file(alice: Client, legacy) -> None:
    refused = alice.post(url("source_clear"), posted(phrase="yes"))
    assert refused.status_code == 400 and legacy.files[(TRAVEL, ALICE)]

    done = alice.post(url("source_clear"), posted(phrase="clear")).content.decode()

    assert "Every file is deleted" in done
    assert PREFS in done and "/memories/trips/berlin.md" in done
    assert legacy.files[(TRAVEL, ALICE)] == {}


def test_export_of_store_and_file(alice: Client, legacy) -> None:
    store = alice.get(url("source_export"))
    one = alice.get(url("source_export", f"item={PREFS}"))

    assert store["Content-Disposition"].startswith("attachment")
    assert "aisle" in store.content.decode() and "Berlin" in store.content.decode()
    assert "aisle" in one.content.decode() and "Berlin" not in one.content.decode()


def test_posts_need_csrf(legacy) -> None:
    client = signed_in(Client(enforce_csrf_checks=True), ALICE)

    assert client.post(url("source_delete"), posted(item=PREFS)).status_code == 403
    assert PREFS in legacy.files[(TRAVEL, ALICE)]


# --- each action only where the source has the capability ---------------------------------

LINKS = {
    Capability.EDIT_ITEM: "Edit the whole file",
    Capability.DELETE_ITEM: "Delete this file",
    Capability.CLEAR_TARGET: "Clear this store",
    Capability.EXPORT: "Download as .md",
}
POSTS = {
    Capability.EDIT_ITEM: ("source_edit", posted(item=PREFS, text="x", version="v")),
    Capability.DELETE_ITEM: ("source_delete", posted(item=PREFS)),
    Capability.RESTORE_ITEM: ("source_undo", posted(undo="t")),
    Capability.CLEAR_TARGET: ("source_clear", posted(phrase="clear")),
}


@pytest.mark.parametrize(
    "lacking",
    [
        Capability.EDIT_ITEM,
        Capability.DELETE_ITEM,
        Capability.RESTORE_ITEM,
        Capability.CLEAR_TARGET,
        Capability.EXPORT,
    ],
)
def test_a_missing_capability_hides_the_action_and_says_why(
    alice: Client, legacy, lacking: Capability
) -> None:
    legacy.capabilities = CAPABILITIES & ~lacking

    pages = alice.get(url("source_target")).content.decode()
    pages += alice.get(url("source_item", f"item={PREFS}")).content.decode()

    assert missing_sentence(lacking) in pages
    if lacking in LINKS:
        assert LINKS[lacking] not in pages
    if lacking in POSTS:
        name, form = POSTS[lacking]
        assert alice.post(url(name), form).status_code == 404
    if lacking == Capability.EXPORT:
        assert alice.get(url("source_export")).status_code == 404
    assert len(legacy.files[(TRAVEL, ALICE)]) == 2  # nothing changed


def test_with_every_capability_no_missing_sentence_but_the_version_check(
    alice: Client, legacy
) -> None:
    html = alice.get(url("source_item", f"item={PREFS}")).content.decode()

    for capability, link in LINKS.items():
        assert link in html or capability == Capability.CLEAR_TARGET
        assert missing_sentence(capability) not in html
    assert missing_sentence(Capability.CONDITIONAL_WRITE) in html


def test_export_everything_includes_the_legacy_files(alice: Client, legacy) -> None:
    response = alice.get(reverse("export_everything"))

    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    legacy_file = f"legacy/legacy-{TRAVEL}.md"
    assert "aisle" in archive.read(legacy_file).decode()
    manifest = json.loads(archive.read("manifest.json"))
    assert [f["path"] for f in manifest["other_files"]] == [legacy_file]
    assert legacy_file not in [f["path"] for f in manifest["files"]]


def test_search_covers_the_legacy_files_and_links_to_each(alice: Client, legacy) -> None:
    html = alice.get(reverse("search"), {"q": "aisle seats"}).content.decode()

    assert "Legacy memory stores" in html
    assert f"{url('source_item')}&amp;item={PREFS}" in html
    assert "<mark>aisle seats</mark>" in html
    assert "berlin" not in html.lower()


def test_search_counts_count_the_legacy_files_too(
    alice: Client, legacy, monkeypatch: pytest.MonkeyPatch
) -> None:
    legacy.put("it-helpdesk", ALICE, "/memories/laptop.md", "Vegan snacks in the desk drawer")
    only_legacy = alice.get(reverse("search"), {"q": "vegan"})
    both = alice.get(reverse("search"), {"q": "aisle seats"})

    assert summary(only_legacy) == "2 matches in 2 memories."  # one file in each store
    assert "2 matches in 2 stores" in only_legacy.content.decode()
    assert "No memory yet" not in only_legacy.content.decode()
    assert "Nothing matches" not in only_legacy.content.decode()
    # One CoreAPI entry (Travel Planner's) and the legacy file: four results would not do.
    assert summary(both) == "2 matches in 2 memories."

    monkeypatch.setattr(legacy, "search", Mock(side_effect=LegacyUnavailable()))
    failed = alice.get(reverse("search"), {"q": "aisle seats"})
    assert summary(failed) == "1 match in 1 memory; 1 could not be searched."


def test_search_of_one_memory_or_by_reason_leaves_the_legacy_stores_out(
    alice: Client, legacy
) -> None:
    by_reason = alice.get(reverse("search"), {"q": "aisle", "reason": "x"}).content.decode()

    assert PREFS not in by_reason
    assert legacy.calls == []


# --- move into CoreAPI ---------------------------------------------------------------------


def test_legacy_move_preview_then_run_twice_adds_nothing(alice: Client, legacy, fake) -> None:
    fake.put("# Travel\n\n- Vegan\n", agent="travel-planner")  # one item is already there
    preview = alice.get(url("source_move", f"item={PREFS}")).content.decode()

    assert "Prefers aisle seats" in preview and "already there, skipped" in preview
    assert f"Moved from {TRAVEL} {PREFS}" in preview
    assert "aisle" not in fake.text("travel-planner")  # a preview writes nothing

    done = alice.post(url("source_move"), posted(item=PREFS, delete_verified="on"))
    html = done.content.decode()
    assert done.status_code == 200 and "The move is done" in html
    assert "the copy in the older system is deleted" in html
    assert "Prefers aisle seats" in fake.text("travel-planner")
    assert PREFS not in legacy.files[(TRAVEL, ALICE)]

    legacy.put("travel-planner", ALICE, PREFS, "# Travel\n\n- Prefers aisle seats\n- Vegan")
    before = fake.text("travel-planner")
    again = alice.post(url("source_move"), posted(item=PREFS)).content.decode()
    assert "already there" in again
    assert fake.text("travel-planner") == before
    assert PREFS in legacy.files[(TRAVEL, ALICE)]  # not asked to delete: kept


def test_a_move_that_would_add_nothing_is_not_offered(alice: Client, legacy, fake) -> None:
    fake.put("# Travel\n\n- Prefers aisle seats\n- Vegan\n", agent="travel-planner")
    preview = alice.get(url("source_move", f"item={PREFS}")).content.decode()

    assert "already there, skipped" in preview and "to add:" not in preview
    assert "Nothing here is missing from your current memory, so moving would add nothing." in (
        preview
    )
    assert ">Move to your current memory</button>" not in preview
    # The way on is back; deleting the copies CoreAPI already has is offered, not first.
    back = url("source_item", f"item={PREFS}").replace("&", "&amp;")
    assert f'<a href="{back}" role="button">Back</a>' in preview
    delete = '<button type="submit" class="secondary outline">Delete the copies in the older system'
    assert f"{delete}</button>" in preview
    assert 'name="delete_verified" value="on"' in preview

    done = alice.post(url("source_move"), posted(item=PREFS, delete_verified="on"))
    assert "the copy in the older system is deleted" in done.content.decode()
    assert PREFS not in legacy.files[(TRAVEL, ALICE)]


def test_a_move_that_would_add_nothing_without_delete_only_goes_back(
    alice: Client, legacy, fake
) -> None:
    legacy.capabilities = CAPABILITIES & ~Capability.DELETE_ITEM
    fake.put("# Travel\n\n- Prefers aisle seats\n- Vegan\n", agent="travel-planner")
    preview = alice.get(url("source_move", f"item={PREFS}")).content.decode()

    assert missing_sentence(Capability.DELETE_ITEM) in preview
    assert "<button" not in preview.split("<main")[1].split("</main>")[0]
    assert 'role="button">Back</a>' in preview


def test_a_moved_file_keeps_its_time_is_not_new_and_is_one_activity_event(
    alice: Client, legacy, fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Visits recorded on 1 December, 09:00; the legacy file last changed at 09:30 (NOW).
    clock = Clock()
    monkeypatch.setattr("memory_ui.visits.timezone", clock)
    alice.get("/memory/agents/travel-planner")
    agent_adds(fake, clock, "travel-planner", "- Window seat on night trains", "Trip talk")

    alice.post(url("source_move"), posted(item=PREFS))
    page = alice.get("/memory/agents/travel-planner").content.decode()

    reason = f"Moved from {TRAVEL} {PREFS} (file last changed 2026-12-01T09:30:00Z)"
    assert reason in fake.text("travel-planner")  # the file's own time, in the append
    moved = page_entry(page, "Vegan")
    assert "entry-new" not in moved and "Moved in" in moved
    assert 'the file last changed <time datetime="2026-12-01T09:30:00Z"' in moved
    assert "entry-new" in page_entry(page, "Window seat")  # what the agent added still is
    assert AuditEvent.objects.filter(action="append").count() == 0
    event = AuditEvent.objects.get(action="move")
    assert (event.reason, event.destination_agent_name) == (reason, "travel-planner")

    alice.post(url("source_move"), posted(item=PREFS))  # everything is there: nothing done

    page = alice.get(reverse("activity")).content.decode()
    rows = table_rows(page)
    assert len(rows) == 2  # the header row and the one move
    activity = " ".join(" ".join(row) for row in rows)
    assert "Added a note" not in activity and activity.count("Moved into CoreAPI") == 1


def page_entry(html: str, text: str) -> str:
    """The memory page's entry (from its <li class="entry…"> to the next) holding `text`."""
    found = [part for part in html.split('<li class="entry')[1:] if text in part]
    assert len(found) == 1, text
    return found[0]


def test_a_move_that_widens_who_reads_the_text_says_so_before(alice: Client, legacy, fake) -> None:
    own_agent = alice.get(url("source_move", f"item={PREFS}")).content.decode()
    assert "not one of your agents" not in own_agent

    fake.agents = [agent for agent in fake.agents if agent.name != "travel-planner"]
    one = alice.get(url("source_move", f"item={PREFS}")).content.decode()
    every = alice.get(url("source_move")).content.decode()

    assert "Into <strong>Shared with every agent</strong>" in one
    widening = re.search(r'<p id="move-widening"[^>]*><strong>([^<]*)</strong>', one)
    assert widening and widening[1] == (
        "The agent that kept this file is not one of your agents in CoreAPI, so it goes to "
        "“Shared with every agent”: every agent you use will read it, not only the one that "
        "kept it. To keep it from the others, do not move it."
    )
    assert '<button type="submit" aria-describedby="move-widening">Move to your current' in one
    assert "every agent you use will read them" in every


def test_move_without_delete_capability_says_why_and_keeps_the_copies(
    alice: Client, legacy, fake
) -> None:
    legacy.capabilities = CAPABILITIES & ~Capability.DELETE_ITEM
    preview = alice.get(url("source_move")).content.decode()

    assert missing_sentence(Capability.DELETE_ITEM) in preview
    assert 'name="delete_verified"' not in preview
    alice.post(url("source_move"), {"delete_verified": "on"})
    assert len(legacy.files[(TRAVEL, ALICE)]) == 2


# --- support's deletion request covers every source ----------------------------------------


def test_a_deletion_request_for_everything_covers_the_legacy_stores(
    carol: Client, legacy, fake
) -> None:
    from tests.views.test_support import clear, export, start

    request_url = start(carol)
    archive = export(carol, request_url)
    assert "aisle" in archive.read(f"legacy/legacy-{TRAVEL}.md").decode()

    cleared = clear(carol, request_url)
    assert cleared.status_code == 302
    result = carol.get(cleared["Location"]).content.decode()

    assert legacy.files[(TRAVEL, ALICE)] == {}
    assert "Other memory systems" in result
    assert [TRAVEL, "erased"] in [row[1:3] for row in table_rows(result)]
    assert "not possible" in cells(result) and "Cannot be listed." in result
    assert AuditEvent.objects.filter(source="legacy", action="erase").exists()


def test_before_the_clear_the_request_lists_every_system_store_and_who_to_ask(
    carol: Client, legacy, fake, settings
) -> None:
    from tests.views.test_support import start

    helpdesk = STORES["it-helpdesk"]
    legacy.read_only.add(helpdesk)
    legacy.put("it-helpdesk", ALICE, "/memories/devices.md", "ThinkPad")
    legacy.unreachable["main.finance.finance_insights_memory"] = "finance-platform@contoso.com"
    settings.LEGACY_STORES_CONTACT = "agents-platform@contoso.com"

    page = page_text(carol.get(start(carol)))

    assert "CoreAPI: the chosen memories now" in page
    assert f"Legacy memory stores {TRAVEL} to erase 2 —" in page  # alice's two files
    assert f"Legacy memory stores {helpdesk} not possible 1 Read only." in page
    assert (
        "main.finance.finance_insights_memory not possible — "
        "No access; ask finance-platform@contoso.com."
    ) in page
    assert "Conversations not possible" in page
    assert "Ask agents-platform@contoso.com which others exist." in page
    assert len(legacy.files[(TRAVEL, ALICE)]) == 2  # listing them changed nothing


def test_after_the_clear_the_heading_counts_what_was_erased_and_never_says_all(
    carol: Client, legacy, fake
) -> None:
    from tests.views.test_support import clear, export, start

    helpdesk = STORES["it-helpdesk"]
    legacy.read_only.add(helpdesk)
    legacy.put("it-helpdesk", ALICE, "/memories/devices.md", "ThinkPad")
    legacy.unreachable["main.finance.finance_insights_memory"] = "finance-platform@contoso.com"
    request_url = start(carol)
    export(carol, request_url)

    result = carol.get(clear(carol, request_url)["Location"])
    text = page_text(result)

    heading = re.search(r"<h1>(.*?)</h1>", result.content.decode(), re.S)[1]
    assert "all" not in heading.casefold()
    assert "partly cleared" in heading and "2 of 3 files in other systems" in heading
    assert f"{TRAVEL} erased 2 of 2 erased" in text
    assert f"{helpdesk} not possible 0 of 1 erased Read only." in text
    assert "main.finance.finance_insights_memory not possible — No access; ask" in text
    assert "/memories/devices.md" in legacy.files[(helpdesk, ALICE)]  # read-only: kept


def test_the_heading_says_all_only_when_every_system_was_erased(
    carol: Client, legacy, fake, monkeypatch: pytest.MonkeyPatch, settings
) -> None:
    from tests.views.test_support import clear, export, start

    # Only the sources the portal can erase in: agents' private notes never can be.
    settings.PORTAL_MEMORY_SOURCES = ["memory_ui.sources.coreapi", "memory_ui.sources.legacy"]
    # A source whose every row was erased (the real adapter always adds conversations).
    erase = legacy.erase_subject
    monkeypatch.setattr(
        legacy,
        "erase_subject",
        lambda *args: Erasure(tuple(o for o in erase(*args).outcomes if o.target)),
    )
    request_url = start(carol)
    export(carol, request_url)

    result = carol.get(clear(carol, request_url)["Location"]).content.decode()

    heading = re.search(r"<h1>(.*?)</h1>", result, re.S)[1]
    assert re.search(r"all cleared: \d+ memor(y|ies), 2 files in other systems", heading)


def test_a_request_for_some_memories_leaves_the_legacy_stores_alone(
    carol: Client, legacy, fake
) -> None:
    from tests.views.test_support import clear, export, look_up, request_fields, subject_of

    overview = look_up(carol)
    legacy.calls.clear()  # the overview counts the stores' files; the request is what follows
    nonce = field_value(body(overview), "nonce")
    started = carol.post(
        f"{reverse('support_user', args=[subject_of(overview)])}requests",
        request_fields(nonce, scopes=["agent:travel-planner"]),
    )
    assert started.status_code == 302
    request_url = started["Location"]
    before = page_text(carol.get(request_url))
    assert "the other memory systems are not part of this request" in before
    assert TRAVEL not in before and legacy.calls == []  # not even counted
    assert not [n for n in export(carol, request_url).namelist() if n.startswith("legacy/")]
    result = carol.get(clear(carol, request_url)["Location"]).content.decode()

    assert len(legacy.files[(TRAVEL, ALICE)]) == 2
    assert "Other memory systems" not in result


def test_store_list_escapes_hostile_paths_and_descriptions(alice: Client, legacy) -> None:
    legacy.put("travel-planner", ALICE, '/memories/"><b>x.md', "x", "<img src=x onerror=alert(1)>")

    html = alice.get(url("source_target")).content.decode()

    assert "<img src=x" not in html and '"><b>' not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_erasure_keeps_a_legacy_file_changed_since_the_export(carol: Client, legacy, fake) -> None:
    from tests.views.test_support import clear, export, start

    request_url = start(carol)
    export(carol, request_url)
    legacy.put("travel-planner", ALICE, PREFS, "# Travel\n\n- Window seats now", "Prefs")

    result = carol.get(clear(carol, request_url)["Location"]).content.decode()

    assert list(legacy.files[(TRAVEL, ALICE)]) == [PREFS]  # berlin erased, PREFS kept
    assert [TRAVEL, "partly"] in [row[1:3] for row in table_rows(result)]


def test_support_export_without_the_stores_says_so_and_their_erasure_erases_nothing(
    carol: Client, legacy, fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.views.test_support import clear, export, start

    def unreachable(*args: object) -> None:
        # The emulator's unreachability is covered in tests/integration/test_legacy_pages.py;
        # here it has to fail during support's export only, then answer for the erasure.
        raise LegacyUnavailable()

    request_url = start(carol)
    with monkeypatch.context() as patched:
        patched.setattr(legacy, "export_items", unreachable)
        archive = export(carol, request_url)
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["missing_sources"][0]["message"] == missing_message(registry.source("legacy"))
    assert manifest["files"] and not [n for n in archive.namelist() if n.startswith("legacy/")]

    result = carol.get(clear(carol, request_url)["Location"]).content.decode()

    assert len(legacy.files[(TRAVEL, ALICE)]) == 2  # not exported, so not erased
    assert "not possible" in cells(result)
    assert legacy_ops.NOT_EXPORTED.replace("'", "&#x27;") in result


def test_activity_and_the_audit_name_the_legacy_store(alice: Client, carol: Client, legacy) -> None:
    alice.post(url("source_delete"), posted(item=PREFS))
    assert AuditEvent.objects.filter(source="legacy", action="delete-entry").exists()

    own = alice.get(reverse("activity")).content.decode()
    audit = carol.get(reverse("support_audit")).content.decode()  # unfiltered: every event

    for html in (own, audit):
        # Its system, then the store, each in its own column.
        (row,) = [row for row in table_rows(html) if TRAVEL in row]
        assert row[row.index(TRAVEL) - 1] == "Legacy memory stores"


def test_admin_lists_and_filters_audit_events_by_system(carol: Client, legacy) -> None:
    alice_client = signed_in(Client(), ALICE)
    alice_client.post(url("source_delete"), posted(item=PREFS))
    AuditEvent.objects.create(actor_upn=ALICE, subject_upn=ALICE, action="edit", scope="user")
    changelist = reverse("admin:memory_ui_auditevent_changelist")

    listed = carol.get(changelist, {"source": "legacy"})
    html = listed.content.decode()

    assert listed.status_code == 200
    # The column and the filter say "System", each system named as Activity names it.
    assert re.search(r'<th scope="col" class="sortable column-system[^"]*">', html)
    assert "By system" in html
    assert '<td class="field-system">Legacy memory stores</td>' in html
    assert 'href="?source=coreapi">CoreAPI</a>' in html
    assert '<td class="field-system">CoreAPI</td>' not in html
    coreapi = carol.get(changelist, {"source": "coreapi"}).content.decode()
    assert '<td class="field-system">CoreAPI</td>' in coreapi
    assert '<td class="field-system">Legacy memory stores</td>' not in coreapi


def test_a_legacy_clear_and_erasure_keep_the_reason_given(alice: Client, carol: Client, legacy):
    """A store cleared counts its files in the event's count, not in the reason: a person's
    own clear has none, support's erasure has the request's."""
    from tests.views.test_support import REASON, clear, export, start

    alice.post(url("source_clear"), posted(phrase="clear"))
    legacy.put("travel-planner", ALICE, PREFS, "# Travel\n\n- Vegan", "Prefs")
    request_url = start(carol)
    export(carol, request_url)
    clear(carol, request_url)

    cleared = AuditEvent.objects.get(source="legacy", action="clear")
    assert (cleared.reason, cleared.count) == ("", 2)
    erased = AuditEvent.objects.filter(source="legacy", action="erase", agent_object_id=TRAVEL)
    assert [(e.reason, e.ticket) for e in erased] == [(REASON, "PRIV-1234")]
    found = {
        row[2]: row[-2] for row in table_rows(alice.get(reverse("activity")).content.decode())[1:]
    }
    assert found["Cleared · 2 files"] == "—"
    assert found["Erased (deletion request)"] == f"{REASON} · PRIV-1234"
    assert not [reason for reason in found.values() if "files" in reason]


def test_own_activity_links_legacy_events_to_configured_stores_only(
    alice: Client, carol: Client, legacy, settings
) -> None:
    alice.post(url("source_delete"), posted(item=PREFS))
    # An event about a store the portal has since been configured without.
    gone = "main.agents.retired_memory"
    AuditEvent.objects.create(
        actor_upn=ALICE, subject_upn=ALICE, action="delete-entry", source="legacy",
        agent_name="retired", agent_object_id=gone,
    )  # fmt: skip
    store_link = f'<a href="{url("source_target")}">{TRAVEL}</a>'

    own = alice.get(reverse("activity")).content.decode()
    audit = carol.get(reverse("support_audit")).content.decode()

    assert store_link in own
    assert gone in cells(own) and f">{gone}</a>" not in own  # named, not linked
    assert TRAVEL in cells(audit) and store_link not in audit

    settings.LEGACY_STORES_BASE_URL = ""  # the source turned off: its pages are 404s
    off = alice.get(reverse("activity")).content.decode()
    assert TRAVEL in cells(off) and store_link not in off


def test_own_activity_stands_when_the_store_setting_is_unreadable(alice: Client, settings) -> None:
    # The real configuration path (no fake backend): the legacy pages report the setting;
    # Activity, which only links to the stores, goes on without the links.
    settings.LEGACY_STORES_BASE_URL = "http://legacy.invalid"
    settings.LEGACY_STORES_AGENTS = "not json"
    legacy_ops.reset_caches()
    AuditEvent.objects.create(
        actor_upn=ALICE, subject_upn=ALICE, action="delete-entry", source="legacy",
        agent_name="travel-planner", agent_object_id=TRAVEL,
    )  # fmt: skip

    own = alice.get(reverse("activity"))

    assert own.status_code == 200
    assert TRAVEL in cells(own.content.decode())


@pytest.mark.parametrize(
    ("failure", "retry"),
    [
        (LegacyUnauthorized, False),  # the portal's own credentials: again is refused again
        (LegacyForbidden, False),
        (LegacyUnavailable, True),  # timeouts and 5xx
        (LegacyRateLimited, True),
    ],
)
def test_list_errors_offer_try_again_only_where_it_can_help(
    alice: Client, legacy, monkeypatch: pytest.MonkeyPatch, failure, retry: bool
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise failure()

    monkeypatch.setattr(legacy, "describe", refuse)
    monkeypatch.setattr(legacy, "read_page", refuse)
    stores = alice.get(SECTION, headers={"HX-Request": "true"})
    files = alice.get(url("source_target"))

    for response, again in ((stores, SECTION), (files, url("source_target"))):
        html = response.content.decode()
        assert response.status_code == failure.portal_status
        assert failure.default_message.replace("'", "&#x27;") in html
        assert (f'href="{again}" role="button" class="secondary">Try again' in html) is retry


def test_a_refused_service_credential_says_so_and_never_offers_sign_in_again(
    alice: Client, carol: Client, legacy, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.views.test_support import start

    def refuse(*args: object, **kwargs: object) -> None:
        raise LegacyUnauthorized()  # what the client raises on the stores' 401

    for step in ("describe", "read_page", "read_item", "search", "plan_erasure", "delete_item"):
        monkeypatch.setattr(legacy, step, refuse)
    sentence = "The portal's own access to the legacy memory stores was refused; contact support."
    pages = {
        "dashboard section": alice.get(SECTION, headers={"HX-Request": "true"}),
        "stores page": alice.get(SECTION),
        "store page": alice.get(url("source_target")),
        "file page": alice.get(url("source_item", f"item={PREFS}")),
        "move preview": alice.get(url("source_move", f"item={PREFS}")),
        "search": alice.get(reverse("search"), {"q": "aisle"}),
        "delete": alice.post(url("source_delete"), posted(item=PREFS), follow=True),
        "deletion request": carol.get(start(carol)),
    }

    for name, response in pages.items():
        text = page_text(response)
        assert sentence in text, name
        assert "Sign in again" not in text, name
    for name in ("dashboard section", "store page", "file page"):
        assert "Try again" not in page_text(pages[name]), name  # it would be refused again


def test_a_read_only_store_offers_no_edit_or_delete_anywhere_and_says_why(
    alice: Client, legacy
) -> None:
    # The per-store privilege: the source can edit and delete, this store does not let the
    # portal (no WRITE MEMORY STORE). The other store stays writable.
    legacy.read_only.add(TRAVEL)
    helpdesk = STORES["it-helpdesk"]
    legacy.put("it-helpdesk", ALICE, "/memories/devices.md", "Prefers aisle-side desks")
    reason = READ_ONLY_REASON
    read_only_note = "Read only: the portal may not change it."
    change_urls = [url(name) for name in ("source_edit", "source_entry", "source_clear")]
    change_urls += [reverse(name, args=["legacy"]) for name in ("source_delete", "source_undo")]

    places = {
        "store page": alice.get(url("source_target")),
        "file page": alice.get(url("source_item", f"item={PREFS}")),
        "file opened in place": alice.get(
            url("source_item", f"item={PREFS}"), headers={"HX-Request": "true"}
        ),
        "dashboard section": alice.get(SECTION, headers={"HX-Request": "true"}),
        "search hits": alice.get(reverse("search"), {"q": "aisle"}),
    }

    for name, response in places.items():
        html = response.content.decode()
        assert response.status_code == 200, name
        assert not [u for u in change_urls if u in html], name  # no Edit, Delete, Clear, Undo
        for offer in ("Edit", "Delete this file", "Clear this store", "to change it"):
            assert offer not in page_text(response), (name, offer)
    for name in ("store page", "file page"):
        assert page_text(places[name]).count(reason) == 1, name  # one sentence, before a click
    for name in ("dashboard section", "search hits"):
        text = page_text(places[name])
        assert text.count(read_only_note) == 1, name  # the travel store only
    assert "in IT Helpdesk in the older system" in page_text(places["search hits"])

    writable = page_text(alice.get(url("source_item", "item=/memories/devices.md", store=helpdesk)))
    assert "Delete this file" in writable and "Edit the whole file" in writable
    assert reason not in writable
    calls = list(legacy.calls)
    for change in change_urls:
        assert alice.post(change, posted(item=PREFS, phrase="clear")).status_code == 403
    assert legacy.calls == calls  # refused without asking the store
    assert PREFS in legacy.files[(TRAVEL, ALICE)]


def test_the_stores_old_addresses_lead_to_their_generic_pages(alice: Client, legacy) -> None:
    # Bookmarks of the legacy stores' own pages, before they were the generic ones.
    section = alice.get("/memory/legacy")
    store = alice.get(f"/memory/legacy/{TRAVEL}/")
    file = alice.get(f"/memory/legacy/{TRAVEL}/file?path={PREFS}", follow=True)

    assert (section.status_code, section["Location"]) == (301, SECTION)
    assert (store.status_code, store["Location"]) == (301, url("source_target"))
    assert file.redirect_chain[0][1] == 301 and "aisle" in file.content.decode()
    assert f"{reverse('source_item', args=['legacy'])}?" in file.redirect_chain[0][0]
    # Only where a source had its pages (Source.moved_from): anything else is no page.
    assert alice.get("/memory/no-such-system").status_code == 404
    assert alice.get(f"/memory/no-such-system/{TRAVEL}/file").status_code == 404
