"""Deleted memory that comes back (issue 29, item 2): what a person deletes through the portal
leaves a keyed hash, never the text; when an agent writes the same text again, the memory
page flags the entry with "Delete again", so do search results (CoreAPI's entries and other
systems' items, leading to where "Delete again" is), What's new, the sensitive-data review,
the page to select entries to delete and the entry's own page, the memory support reveals
lists them,
dashboard's card and support's overview count it, and the daily job purges the hashes after
the retention."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime, timedelta
from html import unescape

from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.timezone import now

from devstack.coreapi import formats
from memory_ui.audit import Action
from memory_ui.models import AuditEvent, DeletedHash
from memory_ui.resurfacing import normalised
from memory_ui.sources.agent_notes import UNREACHABLE as AGENT_NOTES
from memory_ui.sources.legacy import LegacyUnavailable
from memory_ui.sources.protocol import Capability
from tests.fake_coreapi import FakeCoreAPI
from tests.fake_legacy import FakeLegacyBackend
from tests.fake_source import MISSING, NOTEBOOK
from tests.pages import hidden_fields, table_rows
from tests.views.helpers import HTMX, TRAVEL, USER, body, field_value, page_text
from tests.views.test_fake_source import ALICE, PAGE, notebook, target_url  # noqa: F401
from tests.views.test_legacy import PREFS, legacy  # noqa: F401
from tests.views.test_legacy import TRAVEL as LEGACY_TRAVEL
from tests.views.test_news import agent_adds, clock  # noqa: F401
from tests.views.test_sensitive import CARD, STRUCTURED
from tests.views.test_support import clear, export, look_up, looked_up, overview, start

AISLE = "- Prefers aisle seats and morning flights."
TRAVEL_PAGE = "/memory/agents/travel-planner"
CAME_BACK = re.compile(r'<li class="entry entry-came-back" id="entry-(\d+)"')


def today() -> str:
    return date_format(timezone.localtime(), "j F")


def delete_entry(client: Client, target: dict[str, str], url: str, index: int) -> None:
    version = field_value(body(client.get(url)), "version")
    fields = {**target, "version": version, "index": str(index)}
    assert client.post("/memory/entries/delete", fields).status_code == 302


def written_again(fake: FakeCoreAPI, text: str, agent: str | None = "travel-planner") -> None:
    """The agent appends `text` again, as CoreAPI would store it."""
    at = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)
    fake.put(formats.append_entry(fake.text(agent), text, at, reason="Learnt again"), agent)


def hash_queries(queries: CaptureQueriesContext) -> int:
    return sum(DeletedHash._meta.db_table in q["sql"] for q in queries.captured_queries)


def legacy_file_written_again(alice: Client, legacy: FakeLegacyBackend) -> None:  # noqa: F811
    """Alice deletes the travel store's preferences file; the agent writes it again (other
    spacing and case), and another file that only mentions the same words."""
    deleted = alice.post(
        reverse("source_delete", args=["legacy"]), {"target": LEGACY_TRAVEL, "item": PREFS}
    )
    assert deleted.status_code == 302
    again = "# TRAVEL\n\n- prefers AISLE SEATS\n-   vegan"
    legacy.put("travel-planner", ALICE, PREFS, again, updated=now())
    seats = "Aisle seats on long flights only"
    legacy.put("travel-planner", ALICE, "/memories/seats.md", seats, updated=now())


def test_an_entry_written_again_is_flagged_on_its_page_with_delete_again(
    alice: Client, fake: FakeCoreAPI
):
    delete_entry(alice, TRAVEL, TRAVEL_PAGE, 0)
    assert "aisle seats" not in fake.text("travel-planner")
    # Spacing and case differ: the text is compared normalised.
    written_again(fake, "-   prefers AISLE seats\nand morning flights.")

    html = body(alice.get(TRAVEL_PAGE))

    assert CAME_BACK.findall(html) == ["1"]  # the new entry; London (now entry 0) is not
    text = page_text(alice.get(TRAVEL_PAGE))
    assert f"This came back after you deleted it on {today()}." in text
    assert text.count("This came back") == 1
    again = re.search(r'<button type="submit" form="entry-delete" name="index" value="(\d+)"', html)
    assert again is not None and again[1] == "1" and "Delete again" in html

    # Delete again is the page's own delete: the entry goes.
    # "What it sees" marks it too (no Delete there: it changes nothing).
    sees = body(alice.get("/memory/agents/travel-planner/combined"))
    assert len(re.findall(r'class="entry entry-came-back"', sees)) == 1
    assert "This came back after you deleted it on" in sees

    fields = {**TRAVEL, "version": field_value(html, "version"), "index": again[1]}
    assert alice.post("/memory/entries/delete", fields).status_code == 302
    assert "aisle" not in fake.text("travel-planner").lower()
    assert "This came back" not in page_text(alice.get(TRAVEL_PAGE))


def test_an_undone_delete_is_not_flagged(alice: Client, fake: FakeCoreAPI):
    version = field_value(body(alice.get(TRAVEL_PAGE)), "version")
    fields = {**TRAVEL, "version": version, "index": "0"}
    deleted = alice.post("/memory/entries/delete", fields, headers=HTMX)
    token = field_value(body(deleted), "token")
    assert DeletedHash.objects.count() == 1
    assert alice.post("/memory/undo", {**TRAVEL, "token": token}).status_code == 302

    assert DeletedHash.objects.count() == 0
    assert "This came back" not in page_text(alice.get(TRAVEL_PAGE))


def test_only_the_person_who_deleted_it_sees_it_flagged(alice: Client, bob: Client, fake):
    delete_entry(alice, USER, "/memory/user", 0)
    written_again(fake, "- Prefers concise answers with a short summary first.", agent=None)
    assert "This came back" in page_text(alice.get("/memory/user"))
    assert "This came back" in page_text(alice.get("/search", {"q": "concise answers"}))
    assert DeletedHash.objects.get().upn == ALICE
    # The fake serves bob the same text: his pages hold it, never her flag.
    assert "concise answers" in page_text(bob.get("/memory/user"))
    for url, query in (("/memory/user", {}), ("/search", {"q": "concise answers"})):
        assert "This came back" not in page_text(bob.get(url, query))


def test_one_query_for_the_hashes_however_many_entries_came_back(alice: Client, fake: FakeCoreAPI):
    texts = [f"- Fact number {n} about seats." for n in range(8)]
    for text in texts:
        written_again(fake, text)
    for _ in texts:  # the newest first: each delete takes the last entry
        count = len(re.findall(r"^## Added", fake.text("travel-planner"), re.M))
        delete_entry(alice, TRAVEL, TRAVEL_PAGE, count - 1)
    for text in texts:
        written_again(fake, text)

    with CaptureQueriesContext(connection) as queries:
        html = body(alice.get(TRAVEL_PAGE))

    assert len(CAME_BACK.findall(html)) == 8
    assert hash_queries(queries) == 1


def test_the_dashboard_card_counts_what_came_back_with_one_query(alice: Client, fake: FakeCoreAPI):
    delete_entry(alice, TRAVEL, TRAVEL_PAGE, 0)
    delete_entry(alice, USER, "/memory/user", 1)
    written_again(fake, AISLE)
    written_again(fake, "- Writes in British English; dates as 2 October 2026.", agent=None)

    names = {"name": ["benefits-assistant", "it-helpdesk", "travel-planner"]}
    with CaptureQueriesContext(connection) as queries:
        batch = alice.get(reverse("cards_agents"), names, headers=HTMX)
    assert hash_queries(queries) == 1  # one for the batch, not one per agent
    text = page_text(batch)
    assert text.count("came back") == 1 and "1 came back after you deleted it" in text
    user_card = page_text(alice.get(reverse("card_user"), headers=HTMX))
    assert "1 came back after you deleted it" in user_card


def test_supports_overview_counts_what_came_back(alice: Client, carol: Client, fake):
    delete_entry(alice, TRAVEL, TRAVEL_PAGE, 0)
    written_again(fake, AISLE)

    overview = look_up(carol)

    text = page_text(overview)
    assert "1 came back after alice@contoso.com deleted it" in text
    rows = {
        re.sub(r"<[^>]+>", " ", row).split()[0]: row
        for row in re.findall(r"<tr>(.*?)</tr>", body(overview), re.S)
    }
    assert any("Travel" in label and "<td>1</td>" in row for label, row in rows.items())
    assert "aisle" not in body(overview).lower()  # still no content on the overview


def systems_section(overview) -> str:
    """The overview's part on the other memory systems."""
    html = body(overview)
    found = re.search(r'<section aria-labelledby="systems-heading">(.*?)</section>', html, re.S)
    assert found is not None
    return found[1]


def systems_text(overview) -> str:
    """What a person reads of that part."""
    return " ".join(unescape(re.sub(r"<[^>]+>", "", systems_section(overview))).split())


def test_supports_overview_counts_a_legacy_file_written_again(
    alice: Client,
    carol: Client,
    fake: FakeCoreAPI,
    legacy,  # noqa: F811
):
    legacy_file_written_again(alice, legacy)
    delete_entry(alice, TRAVEL, TRAVEL_PAGE, 0)
    written_again(fake, AISLE)

    with CaptureQueriesContext(connection) as queries:
        overview = look_up(carol)

    assert hash_queries(queries) == 1  # one for CoreAPI's memories and every other system
    text = page_text(overview)
    assert (
        "2 came back after alice@contoso.com deleted them through the portal (same text "
        "written again; counted per memory and system below): 1 entry in CoreAPI, 1 file in "
        "Legacy memory stores." in text
    )
    rows = table_rows(systems_section(overview))
    assert rows[0] == ["Store", "Files", "Came back"]
    travel = next(row for row in rows if row[0].startswith("Travel Planner"))
    assert travel == [f"Travel Planner (the memory store {LEGACY_TRAVEL})", "3", "1"]
    assert all(row[2] == "0" for row in rows[1:] if row is not travel)
    assert "<caption>Legacy memory stores</caption>" in systems_section(overview)
    html = body(overview).lower()
    assert "aisle" not in html and "vegan" not in html  # still no content on the overview
    assert not AuditEvent.objects.filter(action=Action.REVEAL).exists()  # counted, not revealed


def test_supports_overview_says_why_a_store_was_not_counted_and_counts_the_others(
    alice: Client,
    carol: Client,
    legacy,  # noqa: F811
    monkeypatch,
):
    deleted = alice.post(
        reverse("source_delete", args=["legacy"]), {"target": LEGACY_TRAVEL, "item": PREFS}
    )
    assert deleted.status_code == 302
    # Written since the delete, so read to be hashed; that read fails.
    legacy.put("it-helpdesk", ALICE, "/memories/laptop.md", "Laptop: ThinkPad", updated=now())
    read_page = legacy.read_page

    def unlistable(subject, target, cursor=None):
        if target.key == LEGACY_TRAVEL:
            raise LegacyUnavailable()
        return read_page(subject, target, cursor)

    def unreadable(subject, target, key):
        raise LegacyUnavailable()

    monkeypatch.setattr(legacy, "read_page", unlistable)
    monkeypatch.setattr(legacy, "read_item", unreadable)

    rows = table_rows(systems_section(look_up(carol)))

    travel = next(row for row in rows if row[0].startswith("Travel Planner"))
    assert travel[1:] == [LegacyUnavailable().message]
    # A file that cannot be read to be hashed is still counted, not the whole store lost.
    helpdesk = next(row for row in rows if row[0].startswith("It Helpdesk"))
    assert helpdesk[1:] == ["1", "0"]


def test_supports_overview_names_each_system_it_does_not_count_and_why(
    alice: Client,
    carol: Client,
    notebook,  # noqa: F811
    settings,
):
    deleted = alice.post(
        reverse("source_delete", args=["notebook"]), {"target": PAGE, "item": "coffee"}
    )
    assert deleted.status_code == 302
    NOTEBOOK.pages[ALICE][PAGE]["drinks"] = "alice takes her  COFFEE black."

    counted = look_up(carol)
    assert ["Notebook page weekly", "2", "1"] in table_rows(systems_section(counted))
    assert "1 came back after alice@contoso.com deleted it" in page_text(counted)
    assert "1 note in Team notebook." in page_text(counted)
    unreachable = f"Agents' private notes: {AGENT_NOTES} Ask the owner of each agent."
    assert unreachable in systems_text(counted)

    NOTEBOOK.down = True  # fails: named with why, the CoreAPI memories still shown
    failed = look_up(carol)
    assert failed.status_code == 200
    assert (
        "Team notebook: It could not be read just now: The team notebook is unavailable, "
        "try again." in systems_text(failed)
    )
    assert "entry came back" not in page_text(failed)
    assert any(row[0].startswith("Travel") for row in table_rows(body(failed)))

    NOTEBOOK.down = False
    settings.NOTEBOOK_WITHOUT = ["LIST"]  # cannot list: its own sentence
    assert f"Team notebook: {MISSING[Capability.LIST]}" in systems_text(look_up(carol))


def test_the_hash_store_holds_no_text(alice: Client, fake: FakeCoreAPI):
    delete_entry(alice, TRAVEL, TRAVEL_PAGE, 0)
    delete_entry(alice, USER, "/memory/user", 0)
    deleted = [AISLE, "- Prefers concise answers with a short summary first."]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {DeletedHash._meta.db_table}")
        rows = cursor.fetchall()
    assert len(rows) == 2
    stored = " ".join(str(value) for row in rows for value in row).lower()
    for text in deleted:
        assert normalised(text) not in stored
        for word in re.findall(r"[a-z]{4,}", text.lower()):
            assert word not in stored, word
        assert normalised(text).encode().hex() not in stored


def test_the_daily_job_purges_hashes_past_the_retention(alice: Client, fake, settings):
    delete_entry(alice, TRAVEL, TRAVEL_PAGE, 0)
    delete_entry(alice, USER, "/memory/user", 0)
    old, recent = DeletedHash.objects.order_by("id")
    now = timezone.now()
    DeletedHash.objects.filter(pk=old.pk).update(deleted_at=now - timedelta(days=366))
    DeletedHash.objects.filter(pk=recent.pk).update(deleted_at=now - timedelta(days=364))
    out = io.StringIO()

    call_command("purge_expired", stdout=out)

    assert list(DeletedHash.objects.values_list("pk", flat=True)) == [recent.pk]
    assert "Deleted 1 hashes of deleted memory past their retention." in out.getvalue()
    written_again(fake, AISLE)
    assert "This came back" not in page_text(alice.get(TRAVEL_PAGE))  # purged: not flagged

    settings.PORTAL_RESURFACING_RETENTION_DAYS = 30
    call_command("purge_expired", stdout=io.StringIO())
    assert not DeletedHash.objects.exists()


def test_a_generic_source_item_written_again_is_flagged(alice: Client, notebook):  # noqa: F811
    deleted = alice.post(
        reverse("source_delete", args=["notebook"]), {"target": PAGE, "item": "coffee"}
    )
    assert deleted.status_code == 302
    assert "coffee" not in NOTEBOOK.pages[ALICE][PAGE]
    NOTEBOOK.pages[ALICE][PAGE]["drinks"] = "alice takes her  COFFEE black."

    with CaptureQueriesContext(connection) as queries:
        page = alice.get(target_url())

    text = page_text(page)
    assert f"This came back after you deleted it on {today()}." in text
    assert text.count("This came back") == 1  # the desk note is not flagged
    assert "Delete again drinks" in text
    assert hash_queries(queries) == 1

    # The dashboard's section for the source counts it on the page's card.
    section_url = reverse("source_section", args=["notebook"])
    with CaptureQueriesContext(connection) as queries:
        section = page_text(alice.get(section_url, headers=HTMX))
    assert "1 came back after you deleted it" in section
    assert hash_queries(queries) == 1


def test_a_legacy_file_written_again_is_flagged_on_its_stores_page_and_the_dashboard(
    alice: Client,
    legacy,  # noqa: F811
):
    # The stores list files without their contents: each is read to be hashed, and only
    # where alice deleted something from them.
    legacy_file_written_again(alice, legacy)

    with CaptureQueriesContext(connection) as queries:
        page = alice.get(reverse("source_target", args=["legacy"]) + f"?target={LEGACY_TRAVEL}")
    text = page_text(page)
    assert f"This came back after you deleted it on {today()}." in text
    assert text.count("This came back") == 1  # seats.md is other words
    assert hash_queries(queries) == 1

    section = page_text(alice.get(reverse("source_section", args=["legacy"]), headers=HTMX))
    assert "1 came back after you deleted it" in section
    html = body(alice.get(reverse("source_section", args=["legacy"]), headers=HTMX)).lower()
    assert "aisle" not in html  # hashed, not shown


def test_a_batch_delete_keeps_the_hashes_and_its_undo_drops_them(alice: Client, fake):
    picks = {"q": "", "agent": "", "reason": "", "date_from": "", "date_to": ""}
    preview = alice.post(
        "/memory/select/preview",
        {**picks, "mode": "picked", "pick": ["user:0", "agent:travel-planner:0"]},
    )
    done = alice.post("/memory/select/delete", hidden_fields(body(preview)))
    assert "Deleted 2 entries" in page_text(done)
    assert DeletedHash.objects.count() == 2
    written_again(fake, AISLE)
    assert "This came back" in page_text(alice.get(TRAVEL_PAGE))

    alice.post("/memory/select/undo", {"token": hidden_fields(body(done))["token"][0]})
    # The undo put the shared memory's entry back; travel-planner changed since, so its
    # entry stays deleted and flagged.
    assert DeletedHash.objects.count() == 1
    assert "This came back" not in page_text(alice.get("/memory/user"))
    assert "This came back" in page_text(alice.get(TRAVEL_PAGE))


def test_a_deletion_request_keeps_the_hashes(alice: Client, carol: Client, fake: FakeCoreAPI):
    delete_entry(alice, TRAVEL, TRAVEL_PAGE, 0)
    kept = list(DeletedHash.objects.values_list("upn", "source", "digest"))

    request_url = start(carol)
    export(carol, request_url)
    assert clear(carol, request_url).status_code == 302
    assert "London" not in fake.text("travel-planner")  # erased

    assert list(DeletedHash.objects.values_list("upn", "source", "digest")) == kept
    written_again(fake, AISLE)  # the agent writes it again after the erasure
    assert "This came back" in page_text(alice.get(TRAVEL_PAGE))


ENTRY_PAGE = "/memory/entries/edit?scope=agent&amp;agent=travel-planner&amp;index="


def search_hits(response) -> list[str]:
    """Each search result's <li>, as the page has it."""
    return re.findall(
        r'<li class="search-hit[^"]*">(.*?)</li>\s*(?=<li class="search-hit|</ol>)',
        body(response),
        re.S,
    )


def test_search_flags_an_entry_written_again_and_leads_to_its_page(alice: Client, fake):
    delete_entry(alice, TRAVEL, TRAVEL_PAGE, 0)
    written_again(fake, "-   prefers AISLE seats\nand morning flights.")
    written_again(fake, "- Aisle or window: either.")  # matches too, never deleted

    with CaptureQueriesContext(connection) as queries:
        response = alice.get(reverse("search"), {"q": "aisle"})

    assert hash_queries(queries) == 1
    hits = search_hits(response)
    assert len(hits) == 2
    flagged = [hit for hit in hits if "This came back" in hit]
    assert len(flagged) == 1 and "morning flights" in flagged[0]
    assert 'class="search-hit search-hit-came-back"' in body(response)
    assert f"This came back after you deleted it on {today()}." in page_text(response)
    # Its link goes to the entry's own page, where Delete reads "Delete again".
    link = re.search(
        r'<p class="came-back" role="note">.*?<a href="([^"]+)">Delete again', flagged[0], re.S
    )
    assert link is not None and link[1] == f"{ENTRY_PAGE}1"
    entry_page = page_text(alice.get(link[1].replace("&amp;", "&")))
    assert f"This came back after you deleted it on {today()}." in entry_page
    assert "Delete again" in entry_page


def test_search_flags_a_file_of_another_system_written_again(alice: Client, legacy):  # noqa: F811
    deleted = alice.post(
        reverse("source_delete", args=["legacy"]), {"target": LEGACY_TRAVEL, "item": PREFS}
    )
    assert deleted.status_code == 302
    legacy.put("travel-planner", ALICE, PREFS, "# TRAVEL\n\n- prefers AISLE SEATS\n-   vegan")
    legacy.put("it-helpdesk", ALICE, "/memories/seats.md", "Aisle seats on long flights only")

    with CaptureQueriesContext(connection) as queries:
        response = alice.get(reverse("search"), {"q": "aisle seats"})

    assert hash_queries(queries) == 1  # one for CoreAPI's memories and every other system
    hits = [hit for hit in search_hits(response) if "item-key" in hit]
    assert len(hits) == 2
    flagged = [hit for hit in hits if "This came back" in hit]
    assert len(flagged) == 1 and PREFS in flagged[0]
    assert f"This came back after you deleted it on {today()}." in page_text(response)
    item_page = (
        reverse("source_item", args=["legacy"]) + f"?target={LEGACY_TRAVEL}&amp;item={PREFS}"
    )
    assert f'<a href="{item_page}">Delete again' in flagged[0]
    shown = page_text(alice.get(item_page.replace("&amp;", "&")))
    assert "This came back after you deleted it on" in shown and "Delete again" in shown


def test_the_entry_page_says_it_came_back_and_its_delete_reads_delete_again(alice: Client, fake):
    delete_entry(alice, TRAVEL, TRAVEL_PAGE, 0)
    written_again(fake, AISLE)
    url = "/memory/entries/edit?scope=agent&agent=travel-planner&index="

    page = alice.get(url + "1")

    text = page_text(page)
    assert f"This came back after you deleted it on {today()}." in text
    button = re.search(
        r'<form method="post" action="/memory/entries/delete" class="entry-page-delete">.*?</form>',
        body(page),
        re.S,
    )
    assert button is not None
    assert 'aria-label="Delete again entry 2">Delete again</button>' in button[0]
    # An entry never deleted: neither the note nor "again".
    other = alice.get(url + "0")
    assert "This came back" not in page_text(other)
    assert 'aria-label="Delete entry 1">Delete</button>' in body(other)

    # Delete again, without JavaScript: the page's own form.
    assert alice.post("/memory/entries/delete", hidden_fields(button[0])).status_code == 302
    assert "aisle" not in fake.text("travel-planner").lower()


def test_whats_new_flags_an_entry_written_again_and_leads_to_its_page(
    alice: Client,
    fake,
    clock,  # noqa: F811
):
    delete_entry(alice, TRAVEL, TRAVEL_PAGE, 0)  # her visit to the page, then the delete
    agent_adds(fake, clock, "travel-planner", AISLE, "Learnt again")
    agent_adds(fake, clock, "travel-planner", "- Seat 42.", "Seat booked")

    with CaptureQueriesContext(connection) as queries:
        response = alice.get("/whats-new")

    assert hash_queries(queries) == 1
    text = page_text(response)
    assert "2 new entries." in text
    assert text.count("This came back") == 1
    assert f"This came back after you deleted it on {today()}." in text
    rows = re.findall(
        r"<li[^>]*>\s*<article class=\"whats-new-entry\">(.*?)</article>", body(response), re.S
    )
    flagged = [row for row in rows if "This came back" in row]
    assert len(flagged) == 1 and "aisle seats" in flagged[0]
    assert f'<a href="{ENTRY_PAGE}1">Delete again' in flagged[0]


def test_the_sensitive_review_flags_an_entry_written_again_with_delete_again(alice, fake):
    fake.put(STRUCTURED, agent="travel-planner")
    delete_entry(alice, TRAVEL, TRAVEL_PAGE, 1)  # the card number
    assert CARD not in fake.text("travel-planner")
    written_again(fake, f"- Visa {CARD} for hotels.")
    written_again(fake, "- Amex 3782 822463 10005 for flights.")  # sensitive, never deleted

    with CaptureQueriesContext(connection) as queries:
        response = alice.get("/memory/sensitive")

    assert hash_queries(queries) == 1
    text = page_text(response)
    assert "2 entries may be sensitive" in text
    assert text.count("This came back") == 1
    assert f"This came back after you deleted it on {today()}." in text
    html = body(response)
    assert CARD not in html  # still masked
    assert 'aria-label="Delete again entry 2 of Travel Planner">Delete again</button>' in html
    assert 'aria-label="Delete entry 3 of Travel Planner">Delete</button>' in html


def test_a_memory_support_reveals_lists_what_came_back(alice: Client, carol: Client, fake):
    delete_entry(alice, TRAVEL, TRAVEL_PAGE, 0)
    written_again(fake, AISLE)

    with CaptureQueriesContext(connection) as queries:
        response = carol.post(
            f"{overview(looked_up(carol))}reveal",
            {"scope_key": "agent:travel-planner", "reason": "User asked what is stored"},
        )

    assert hash_queries(queries) == 1
    text = page_text(response)
    assert (
        f"1 entry came back after {ALICE} deleted it through the portal (the same text written "
        f"again): ## Added 2026-12-04T09:00:00Z — Learnt again, deleted on {today()}"
    ) in text
    shared = carol.post(
        f"{overview(looked_up(carol))}reveal", {"scope_key": "user", "reason": "User asked"}
    )
    assert "came back" not in page_text(shared)


def test_the_page_to_select_entries_to_delete_flags_an_entry_written_again(alice: Client, fake):
    delete_entry(alice, TRAVEL, TRAVEL_PAGE, 0)
    written_again(fake, AISLE)
    written_again(fake, "- Aisle or window: either.")  # matches too, never deleted

    with CaptureQueriesContext(connection) as queries:
        response = alice.get(reverse("batch_select"), {"q": "aisle"})

    assert hash_queries(queries) == 1
    labels = re.findall(r'<label class="batch-entry">(.*?)</label>', body(response), re.S)
    assert len(labels) == 2
    flagged = [label for label in labels if "This came back" in label]
    assert len(flagged) == 1 and "morning flights" in flagged[0]
    assert 'value="agent:travel-planner:1"' in flagged[0]
    assert f"This came back after you deleted it on {today()}." in page_text(response)
