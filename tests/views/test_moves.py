"""Move or copy one entry (`/memory/entries/move`): the chooser, the preview, one
confirmation with both version checks, the entry in both memories when the removal
fails (and finishing it), one Undo for both, one audit event naming both memories."""

from __future__ import annotations

from django.test import Client

from devstack.coreapi import formats
from memory_ui.models import AuditEvent
from memory_ui.sources.coreapi import CoreAPIUnavailable
from tests.fake_coreapi import FakeCoreAPI, _at
from tests.pages import hidden_fields
from tests.views.helpers import HTMX, TRAVEL, body, is_page, page_text, starts_with

MOVE = "/memory/entries/move"
TRIP = {**TRAVEL, "index": "1"}  # "Upcoming trip"


def preview(client: Client, to: str, mode: str, entry: dict[str, str] = TRIP, **headers):
    return client.get(MOVE, {**entry, "to": to, "mode": mode, "step": "preview"}, headers=headers)


def confirm(client: Client, to: str = "user", mode: str = "move", entry=TRIP):
    shown = preview(client, to, mode, entry)
    assert shown.status_code == 200, page_text(shown)
    return client.post(f"{MOVE}/confirm", hidden_fields(body(shown)))


def test_every_entry_offers_move_or_copy(alice: Client, fake: FakeCoreAPI):
    # From its Actions: the page's one menu (filled for the entry by portal.js: the browser
    # test) and, without JavaScript, the entry's own page.
    page = body(alice.get("/memory/agents/travel-planner"))
    assert 'aria-label="Actions for entry 2: Upcoming trip"' in page
    menu = page[page.index('<template id="entry-actions">') : page.index("</template>")]
    assert f'href="{MOVE}?scope=agent&amp;agent=travel-planner"' in menu
    entry_page = body(alice.get("/memory/entries/edit", TRIP))
    assert f'href="{MOVE}?scope=agent&amp;agent=travel-planner&amp;index=1"' in entry_page


def test_the_chooser_offers_every_other_memory_of_the_user_and_move_or_copy(
    alice: Client, fake: FakeCoreAPI
):
    page = alice.get(MOVE, TRIP)
    text = page_text(page)
    assert page.status_code == 200 and is_page(page)
    assert "Move or copy entry 2" in text and "Trip to London" in text
    html = body(page)
    for key in ("user", "agent:benefits-assistant", "agent:it-helpdesk"):
        assert f'name="to" value="{key}"' in html
    assert 'value="agent:travel-planner"' not in html  # not into itself
    assert 'name="mode" value="move"' in html and 'name="mode" value="copy"' in html
    # With htmx, the panel alone, in the entry's place.
    panel = alice.get(MOVE, TRIP, headers=HTMX)
    assert not is_page(panel) and body(panel).lstrip().startswith('<li class="entry entry-moving')
    assert 'id="entry-1"' in body(panel)
    assert fake.writes() == []


def test_preview_shows_the_entry_as_it_lands_and_what_stays_behind(
    alice: Client, fake: FakeCoreAPI
):
    shown = preview(alice, "user", "move")
    text = page_text(shown)
    assert shown.status_code == 200
    assert "Preview: move “Upcoming trip” to Shared with every agent" in text
    assert "because: Upcoming trip (moved from Travel Planner)" in text
    assert "It leaves Travel Planner, which keeps 1 entry." in text
    assert "(2 entries there now)" in text
    copy = page_text(preview(alice, "user", "copy"))
    assert "Travel Planner keeps it as it is (2 entries)." in copy
    # "Change" goes back to the chooser with the choice kept.
    change = alice.get(MOVE, {**TRIP, "to": "user", "mode": "copy"})
    assert "Move or copy entry 2" in page_text(change)
    assert 'value="user" checked' in body(change) and 'value="copy" checked' in body(change)
    assert "because: Upcoming trip (copied from Travel Planner)" in copy
    assert fake.writes() == []


def test_move_lands_in_the_destination_leaves_the_source_and_is_audited_once(
    alice: Client, fake: FakeCoreAPI
):
    fake.conditional = True  # both writes carry If-Match
    travel_before, shared_before = fake.text("travel-planner"), fake.text(None)
    done = confirm(alice)
    assert done.status_code == 200, page_text(done)
    assert "Moved “Upcoming trip” from Travel Planner to Shared with every agent" in page_text(done)
    shared = fake.text(None)
    assert shared.startswith(shared_before.rstrip())
    assert shared.endswith(
        "## Added 2026-11-25T18:45:30Z — Upcoming trip (moved from Travel Planner)\n\n"
        "- Trip to London, 14-18 December 2026.\n"
    )
    assert "Trip to London" not in fake.text("travel-planner")
    assert "aisle seats" in fake.text("travel-planner")
    assert fake.writes() == ["import_memory", "import_memory"]  # destination, then source
    assert all(call.method != "append_memory" for call in fake.calls)

    events = list(AuditEvent.objects.all())
    assert len(events) == 1
    event = events[0]
    assert (event.action, event.outcome) == ("move-entry", "ok")
    assert (event.scope, event.agent_name) == ("agent", "travel-planner")
    assert (event.destination_scope, event.destination_agent_name) == ("user", "")
    assert event.bytes_before == len(travel_before.encode())
    assert event.bytes_after == len(fake.text("travel-planner").encode())
    assert event.destination_bytes_after == len(shared.encode())
    assert "Trip to London" not in str(event.__dict__)  # no content in the audit row

    activity = page_text(alice.get("/activity"))
    assert "Moved an entry from Travel Planner to Shared with every agent" in activity


def test_one_undo_puts_both_memories_back(alice: Client, fake: FakeCoreAPI):
    travel_before, shared_before = fake.text("travel-planner"), fake.text(None)
    done = confirm(alice)
    assert "One Undo puts both memories back as they were." in page_text(done)
    undone = alice.post(f"{MOVE}/undo", hidden_fields(body(done)))
    assert undone.status_code == 200
    assert page_text(undone).count("restored.") == 2
    assert fake.text("travel-planner") == travel_before
    assert fake.text(None) == shared_before
    again = alice.post(f"{MOVE}/undo", hidden_fields(body(done)))
    assert again.status_code == 410  # one Undo, used once


def test_on_its_memory_page_the_result_and_undo_come_with_the_memory_as_it_now_is(
    alice: Client, fake: FakeCoreAPI
):
    # htmx from the memory page: the list and its counts replaced, the result above them.
    on_page = {**HTMX, "HX-Current-URL": "http://testserver/memory/agents/travel-planner"}
    shown = preview(alice, "user", "move", **HTMX)
    done = alice.post(f"{MOVE}/confirm", hidden_fields(body(shown)), headers=on_page)
    assert done.status_code == 200, page_text(done)
    assert done["HX-Retarget"] == "#memory-content" and done["HX-Reswap"] == "outerHTML"
    html = body(done)
    assert starts_with(done, '<section id="memory-content"')
    assert '<section id="move-notice"' in html and 'hx-target="#memory-content"' in html
    assert "Trip to London" not in html and 'id="entry-1"' not in html  # moved away
    assert "<dt>Entries</dt><dd>1</dd>" in html
    assert "Back to Travel Planner" not in page_text(done)  # it is the page below

    undone = alice.post(f"{MOVE}/undo", hidden_fields(html), headers={**on_page,
                        "HX-Target": "memory-content"})  # fmt: skip
    html = body(undone)
    assert undone["HX-Retarget"] == "#memory-content"
    assert page_text(undone).count("restored.") == 2
    assert 'id="entry-1"' in html and "Trip to London" in html  # back in the list
    assert "<dt>Entries</dt><dd>2</dd>" in html

    # Used up: said above the list, which stays as it is.
    again = alice.post(f"{MOVE}/undo", hidden_fields(body(done)), headers=on_page)
    assert again.status_code == 410 and again["HX-Retarget"] == "#memory-content"
    assert "Undo is no longer available" in page_text(again)
    # The move page opened on its own (a new tab) keeps its panel.
    alone = {**HTMX, "HX-Current-URL": f"http://testserver{MOVE}?scope=agent"}
    shown = preview(alice, "user", "move", **HTMX)
    done = alice.post(f"{MOVE}/confirm", hidden_fields(body(shown)), headers=alone)
    assert "HX-Retarget" not in done and starts_with(done, '<li class="entry entry-moving"')
    assert 'hx-target="#entry-1"' in body(done)


def test_copy_keeps_the_provenance_line_and_leaves_the_source_alone(
    alice: Client, fake: FakeCoreAPI
):
    shared_before = fake.text(None)
    entry = {"scope": "user", "index": "1"}  # "User stated preference", operation op-2291
    done = confirm(alice, "agent:travel-planner", "copy", entry)
    assert done.status_code == 200
    assert "Copied “User stated preference” from Shared with every agent to Travel Planner" in (
        page_text(done)
    )
    assert fake.text(None) == shared_before
    assert fake.text("travel-planner").endswith(
        "## Added 2026-10-02T16:40:55Z — User stated preference (copied from Shared memory)\n"
        "> operation: op-2291\n\n- Writes in British English; dates as 2 October 2026.\n"
    )
    event = AuditEvent.objects.get()
    assert event.action == "copy-entry" and event.destination_agent_name == "travel-planner"
    assert event.sha256_before == event.sha256_after  # the source did not change
    undone = alice.post(f"{MOVE}/undo", hidden_fields(body(done)))
    assert page_text(undone).count("restored.") == 1
    assert "British English" not in fake.text("travel-planner")


def test_a_failed_removal_says_the_entry_is_in_both_and_retrying_finishes_the_move(
    alice: Client, fake: FakeCoreAPI
):
    travel_before, shared_before = fake.text("travel-planner"), fake.text(None)
    shown = preview(alice, "user", "move")
    fake.fail("import_memory", CoreAPIUnavailable("CoreAPI is unavailable, try again."),
              agent="travel-planner")  # fmt: skip
    done = alice.post(f"{MOVE}/confirm", hidden_fields(body(shown)))
    text = page_text(done)
    assert done.status_code == 503
    assert "“Upcoming trip” is now in both memories" in text
    assert "removing it from Travel Planner failed: CoreAPI is unavailable" in text
    assert "Nothing is lost." in text
    assert "Trip to London" in fake.text("travel-planner") and "Trip to London" in fake.text()
    event = AuditEvent.objects.get()
    assert event.outcome == "error" and event.destination_bytes_after is not None

    fake.heal()
    retried = alice.post(f"{MOVE}/retry", hidden_fields(body(done)))
    assert retried.status_code == 200, page_text(retried)
    assert "Moved “Upcoming trip” from Travel Planner" in page_text(retried)
    assert "Trip to London" not in fake.text("travel-planner")
    assert fake.text(None).count("Trip to London") == 1
    # One Undo still puts both back.
    undone = alice.post(f"{MOVE}/undo", hidden_fields(body(retried)))
    assert page_text(undone).count("restored.") == 2
    assert fake.text("travel-planner") == travel_before and fake.text(None) == shared_before


def test_a_failed_destination_write_changes_nothing(alice: Client, fake: FakeCoreAPI):
    shown = preview(alice, "user", "move")
    fake.fail("import_memory", CoreAPIUnavailable("CoreAPI is unavailable, try again."))
    before = (fake.text("travel-planner"), fake.text(None))
    done = alice.post(f"{MOVE}/confirm", hidden_fields(body(shown)))
    assert done.status_code == 503
    assert "CoreAPI is unavailable" in page_text(done)
    assert (fake.text("travel-planner"), fake.text(None)) == before
    fake.heal()
    # The key was released (certainly not written): the same confirmation works.
    again = alice.post(f"{MOVE}/confirm", hidden_fields(body(shown)))
    assert again.status_code == 200 and "Trip to London" in fake.text(None)


def test_nothing_is_written_when_either_memory_changed_since_the_preview(
    alice: Client, fake: FakeCoreAPI
):
    shown = preview(alice, "user", "move")
    before = (fake.text("travel-planner"), fake.text(None))
    fake.put(before[0].replace("London", "Paris"), "travel-planner")  # the entry edited
    done = alice.post(f"{MOVE}/confirm", hidden_fields(body(shown)))
    assert done.status_code == 409
    assert "Travel Planner changed since the preview, so nothing was done." in page_text(done)
    assert fake.text(None) == before[1] and fake.writes() == []

    fake.put(before[0], "travel-planner")
    shown = preview(alice, "user", "move")
    fake.put(before[1].replace("concise", "long"))  # an entry of the destination edited
    done = alice.post(f"{MOVE}/confirm", hidden_fields(body(shown)))
    assert done.status_code == 409
    assert "Shared with every agent changed since the preview" in page_text(done)
    assert fake.text("travel-planner") == before[0] and fake.writes() == []


def test_entries_appended_meanwhile_are_kept_in_both_memories(alice: Client, fake: FakeCoreAPI):
    fake.conditional = True
    shown = preview(alice, "user", "move")
    at = _at("2026-12-01T10:00:00+00:00")
    for agent in (None, "travel-planner"):
        fake.put(formats.append_entry(fake.text(agent), f"- Late {agent}.", at, "Late"), agent)
    done = alice.post(f"{MOVE}/confirm", hidden_fields(body(shown)))
    assert done.status_code == 200, page_text(done)
    assert "- Late None." in fake.text(None) and "- Late travel-planner." in fake.text(
        "travel-planner"
    )
    assert "Trip to London" in fake.text(None)
    assert "Trip to London" not in fake.text("travel-planner")


def test_the_confirmation_works_once(alice: Client, fake: FakeCoreAPI):
    shown = preview(alice, "user", "copy")
    first = alice.post(f"{MOVE}/confirm", hidden_fields(body(shown)))
    second = alice.post(f"{MOVE}/confirm", hidden_fields(body(shown)))
    assert first.status_code == 200 and second.status_code == 409
    assert "already sent" in page_text(second)
    assert fake.text(None).count("Trip to London") == 1


def test_only_the_users_own_memories(alice: Client, bob: Client, fake: FakeCoreAPI):
    assert preview(alice, "agent:not-an-agent", "move").status_code == 404
    assert alice.get(MOVE, {**TRIP, "agent": "nobody"}).status_code == 404
    fake.agents[:] = [a for a in fake.agents if a.name == "travel-planner"]
    entry = {"scope": "agent", "agent": "travel-planner", "index": "1"}
    assert preview(bob, "agent:benefits-assistant", "move", entry).status_code == 404
    assert fake.writes() == []


def test_a_missing_entry_is_said_plainly(alice: Client, fake: FakeCoreAPI):
    gone = alice.get(MOVE, {**TRIP, "index": "9"})
    assert gone.status_code == 404
    assert "That entry is not there any more" in page_text(gone)


def test_the_text_before_the_first_entry_lands_under_a_heading_without_forged_provenance(
    alice: Client, fake: FakeCoreAPI
):
    fake.put("> operation: forged · session: forged\nIntro text.\n\n" + fake.text(None))
    done = confirm(alice, "agent:travel-planner", "move", {"scope": "user", "index": "0"})
    assert done.status_code == 200, page_text(done)
    landed = fake.text("travel-planner").split(" — Moved from Shared memory\n", 1)[1]
    assert landed.startswith("\n\\> operation: forged")
    assert "forged" not in fake.text(None)


def test_without_the_agent_list_the_panel_says_why_and_nothing_is_written(
    alice: Client, fake: FakeCoreAPI
):
    fake.fail("list_agents", CoreAPIUnavailable("CoreAPI is unavailable, try again."))
    for entry in ({"scope": "user", "index": "0"}, TRIP):
        shown = alice.get(MOVE, entry, headers=HTMX)
        assert shown.status_code == 503
        assert "CoreAPI is unavailable" in page_text(shown)
        assert f'id="entry-{entry["index"]}"' in body(shown)  # in the entry's place
    undo = alice.post(f"{MOVE}/undo", {"scope": "user", "index": "0", "token": "x" * 22})
    assert undo.status_code == 503
    # Undo from the result above the memory's entries: said there, the entries left alone.
    from_notice = {**HTMX, "HX-Target": "memory-content"}
    form = {"scope": "user", "index": "0", "token": "x" * 22}
    undo = alice.post(f"{MOVE}/undo", form, headers=from_notice)
    assert undo.status_code == 503 and undo["HX-Retarget"] == "#move-notice"
    assert starts_with(undo, '<section id="move-notice"')
    assert "CoreAPI is unavailable" in page_text(undo)
    assert fake.writes() == []


def test_a_memory_too_large_to_rewrite_can_give_a_copy_but_not_a_move(
    alice: Client, fake: FakeCoreAPI, settings
):
    at = _at("2026-11-26T08:00:00+00:00")
    big = formats.append_entry(fake.text("travel-planner"), "x" * 2000, at, "Long")
    fake.put(big, "travel-planner")
    settings.COREAPI_MAX_BODY_BYTES = 1024 + 1500
    move = preview(alice, "agent:benefits-assistant", "move")
    assert move.status_code == 400
    assert "too large to change here, so the entry cannot leave it; copy it." in page_text(move)
    assert confirm(alice, "agent:benefits-assistant", "copy").status_code == 200
    assert "Trip to London" in fake.text("benefits-assistant")
    assert fake.text("travel-planner") == big
