"""A history per memory with restore (issue 29, item 3): the person's edits, deletes and
moves each keep the version before them, encrypted; the History page shows who changed the
memory and when, each of the person's changes with its diff, support's actions and agents'
entries; "Restore this version" puts an earlier version back while keeping what an agent
appended meanwhile; a deletion request and "Clear everything" leave no version behind, and
the daily job purges them after the retention."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime, timedelta

from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from devstack.coreapi import formats
from memory_ui.models import AuditEvent, PriorVersion
from tests.fake_coreapi import FakeCoreAPI
from tests.pages import hidden_fields
from tests.views.conftest import signed_in
from tests.views.helpers import TRAVEL, body, field_value, page_text
from tests.views.test_moves import confirm
from tests.views.test_support import clear, export, start

HISTORY = "/memory/history"
RESTORE = "/memory/history/restore"
TRAVEL_PAGE = "/memory/agents/travel-planner"
EDITED = "- Prefers window seats now."


def edit(client: Client, text: str) -> None:
    version = field_value(body(client.get("/memory/edit", TRAVEL)), "version")
    fields = {**TRAVEL, "content": text, "version": version, "action": "save"}
    assert client.post("/memory/edit", fields).status_code == 302


def delete_entry(client: Client, index: int) -> None:
    version = field_value(body(client.get(TRAVEL_PAGE)), "version")
    fields = {**TRAVEL, "version": version, "index": str(index)}
    assert client.post("/memory/entries/delete", fields).status_code == 302


def restore_forms(html: str) -> list[dict[str, list[str]]]:
    """The History's "Restore this version" forms, newest change first."""
    forms = re.findall(
        r'<form method="post" action="/memory/history/restore".*?</form>', html, re.S
    )
    return [hidden_fields(form) for form in forms]


def agent_appends(fake: FakeCoreAPI, text: str) -> None:
    at = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)
    fake.put(
        formats.append_entry(fake.text("travel-planner"), text, at, reason="Learnt"),
        "travel-planner",
    )


def test_edit_delete_move_then_restore_the_first_version_keeps_what_an_agent_appended(
    alice: Client, fake: FakeCoreAPI
):
    original = fake.text("travel-planner")
    edit(alice, original.rstrip() + "\n\n" + EDITED + "\n")
    delete_entry(alice, 0)
    assert confirm(alice, entry={**TRAVEL, "index": "0"}).status_code == 200  # moved to shared
    assert PriorVersion.objects.filter(target_key="agent:travel-planner").count() == 3

    memory_page = body(alice.get(TRAVEL_PAGE))
    assert 'href="/memory/history?scope=agent&amp;agent=travel-planner"' in memory_page
    page = alice.get(HISTORY, TRAVEL)
    assert page.status_code == 200
    text = page_text(page)
    assert text.count("Restore this version") == 3
    for change in ("Edited", "Deleted an entry", "Moved an entry"):
        assert change in text
    assert "added: + " + EDITED in text  # the edit's diff
    forms = restore_forms(body(page))

    # An agent appends after the History was shown, before the restore.
    agent_appends(fake, "- Books trains for trips under 4 hours.")
    oldest = forms[-1]  # before the edit: the original document
    done = alice.post(RESTORE, oldest)

    assert done.status_code == 302
    restored = fake.text("travel-planner")
    assert restored.startswith(original.rstrip())
    assert EDITED not in restored
    assert restored.rstrip().endswith("- Books trains for trips under 4 hours.")  # kept
    event = AuditEvent.objects.filter(action="restore-version").get()
    assert (event.outcome, event.agent_name) == ("ok", "travel-planner")
    # The restore is a change of its own: it can be taken back from the History too.
    assert page_text(alice.get(HISTORY, TRAVEL)).count("Restore this version") == 4


def test_an_entry_an_agent_appended_between_the_change_and_the_history_is_kept(
    alice: Client, fake: FakeCoreAPI
):
    """Not only what arrives while the History is open: an agent's entry written after the
    change, before the History was shown, is in no version of alice's and stays."""
    original = fake.text("travel-planner")
    delete_entry(alice, 1)  # "Upcoming trip"
    agent_appends(fake, "- Books trains for trips under 4 hours.")
    delete_entry(alice, 0)  # she deletes another one after it
    forms = restore_forms(body(alice.get(HISTORY, TRAVEL)))

    assert alice.post(RESTORE, forms[-1]).status_code == 302  # before the first delete

    restored = fake.text("travel-planner")
    assert restored.startswith(original.rstrip())
    assert restored.rstrip().endswith("- Books trains for trips under 4 hours.")
    assert restored.count("Books trains") == 1


def test_what_a_restore_puts_back_is_not_flagged_as_come_back(alice: Client, fake: FakeCoreAPI):
    # Her own restore is not an agent writing again what she deleted (as after an Undo).
    delete_entry(alice, 0)
    (form,) = restore_forms(body(alice.get(HISTORY, TRAVEL)))

    assert alice.post(RESTORE, form).status_code == 302

    assert "This came back" not in page_text(alice.get(TRAVEL_PAGE))


def test_a_restore_refuses_when_the_person_changed_the_memory_since(
    alice: Client, fake: FakeCoreAPI
):
    edit(alice, EDITED + "\n")
    (form,) = restore_forms(body(alice.get(HISTORY, TRAVEL)))
    fake.put("Rewritten elsewhere.\n", "travel-planner")  # not an append

    refused = alice.post(RESTORE, form)

    assert refused.status_code == 409
    assert "Nothing was restored" in page_text(refused)
    assert fake.text("travel-planner") == "Rewritten elsewhere.\n"


def test_support_actions_and_agent_entries_are_in_the_history(
    alice: Client, carol: Client, fake: FakeCoreAPI
):
    request_url = start(carol)
    export(carol, request_url)
    text = page_text(alice.get(HISTORY, TRAVEL))
    assert "Support" in text and "Exported" in text
    assert "An entry" in text and "Added: entry 1" in text


def test_another_person_can_neither_see_nor_restore_a_version(
    alice: Client, bob: Client, fake: FakeCoreAPI
):
    edit(alice, EDITED + "\n")
    (form,) = restore_forms(body(alice.get(HISTORY, TRAVEL)))

    # Bob's History of the same agent's memory shows none of alice's changes, and her
    # version's id, posted by him, is a 404 (the versions are kept per person).
    assert "Restore this version" not in page_text(bob.get(HISTORY, TRAVEL))
    assert bob.post(RESTORE, form).status_code == 404
    assert "Restore this version" not in page_text(bob.get(HISTORY, {"scope": "user"}))
    theirs = {**form, "scope": ["user"]}
    theirs.pop("agent")
    assert bob.post(RESTORE, theirs).status_code == 404
    assert fake.text("travel-planner") == EDITED + "\n"
    # An agent that is nobody's here is a 404 too.
    assert bob.get(HISTORY, {"scope": "agent", "agent": "no-such-agent"}).status_code == 404


def test_restore_needs_csrf(alice: Client, fake: FakeCoreAPI):
    edit(alice, EDITED + "\n")
    (form,) = restore_forms(body(alice.get(HISTORY, TRAVEL)))
    strict = signed_in(Client(enforce_csrf_checks=True), "alice@contoso.com")

    assert strict.post(RESTORE, form).status_code == 403
    assert fake.text("travel-planner") == EDITED + "\n"


def test_the_stored_versions_are_not_plaintext(alice: Client, fake: FakeCoreAPI):
    original = fake.text("travel-planner")
    edit(alice, EDITED + "\n")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {PriorVersion._meta.db_table}")
        rows = cursor.fetchall()
    assert len(rows) == 1
    stored = " ".join(
        bytes(value).decode("latin-1") if isinstance(value, bytes | memoryview) else str(value)
        for value in rows[0]
    ).lower()
    for word in re.findall(r"[a-z]{5,}", (original + EDITED).lower()):
        if word not in ("travel", "planner", "agent", "edit"):
            assert word not in stored, word


def test_a_deletion_request_leaves_no_earlier_version(
    alice: Client, bob: Client, carol: Client, fake: FakeCoreAPI
):
    edit(alice, EDITED + "\n")
    version = field_value(body(bob.get("/memory/edit", {"scope": "user"})), "version")
    bob.post("/memory/edit", {"scope": "user", "content": "Bob's.\n", "version": version})
    assert PriorVersion.objects.filter(upn="alice@contoso.com").exists()

    request_url = start(carol)
    export(carol, request_url)
    assert clear(carol, request_url).status_code == 302

    assert not PriorVersion.objects.filter(upn="alice@contoso.com").exists()
    assert PriorVersion.objects.filter(upn="bob@contoso.com").count() == 1  # not his request


def test_clear_everything_leaves_no_earlier_version(alice: Client, fake: FakeCoreAPI):
    edit(alice, EDITED + "\n")
    assert PriorVersion.objects.exists()

    done = alice.post("/memory/clear-everything", {"phrase": "clear everything"})

    assert done.status_code == 200, page_text(done)
    assert not fake.text("travel-planner")
    assert not PriorVersion.objects.exists()  # and the clear kept none of its own


def test_the_daily_job_purges_versions_past_the_retention(alice: Client, fake, settings):
    edit(alice, EDITED + "\n")
    edit(alice, "- Another change.\n")
    old, recent = PriorVersion.objects.order_by("id")
    now = timezone.now()
    PriorVersion.objects.filter(pk=old.pk).update(created_at=now - timedelta(days=31))
    PriorVersion.objects.filter(pk=recent.pk).update(created_at=now - timedelta(days=29))
    out = io.StringIO()

    call_command("purge_expired", stdout=out)

    assert list(PriorVersion.objects.values_list("pk", flat=True)) == [recent.pk]
    assert "Deleted 1 earlier versions of memories past their retention." in out.getvalue()
    assert page_text(alice.get(HISTORY, TRAVEL)).count("Restore this version") == 1


def test_a_rotated_key_still_opens_older_versions(alice: Client, fake, settings):
    from cryptography.fernet import Fernet

    edit(alice, EDITED + "\n")
    settings.PORTAL_HISTORY_KEYS = [Fernet.generate_key().decode(), *settings.PORTAL_HISTORY_KEYS]
    edit(alice, "- Another change.\n")
    text = page_text(alice.get(HISTORY, TRAVEL))
    assert text.count("Restore this version") == 2

    settings.PORTAL_HISTORY_KEYS = settings.PORTAL_HISTORY_KEYS[:1]  # the old key retired
    text = page_text(alice.get(HISTORY, TRAVEL))
    assert text.count("Restore this version") == 1
    assert "This version can no longer be read" in text
