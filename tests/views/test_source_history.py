"""A history per memory for every source with an adapter (issue 29, item 3), through the
generic source pages with the legacy stores replaced by `tests.fake_legacy`: alice's edit,
entry edit and delete of a file each keep the version before; the file's page links its
History (diffs, newest first); "Restore this version" is a conditional write (409 with
nothing written where the file changed since the History was shown), of her own versions
only (another person's is a 404), needs CSRF and is refused on a read-only store; a deleted
file is found again on its store's page and put back by the source's restore, else appended,
else not offered with the source's sentence; a deletion request and "Clear everything" leave
no version behind."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from memory_ui.audit import AuditEvent
from memory_ui.models import PriorVersion
from memory_ui.sources import generic
from memory_ui.sources.legacy.adapter import CAPABILITIES, READ_ONLY_REASON
from memory_ui.sources.protocol import Capability
from tests.fake_legacy import NOTES, FakeLegacyBackend, missing_sentence
from tests.pages import Form, forms
from tests.views.conftest import signed_in
from tests.views.helpers import body, page_text
from tests.views.test_legacy import ALICE, PREFS, TRAVEL, legacy, posted, url  # noqa: F401
from tests.views.test_support import clear, export, start

ORIGINAL = "# Travel\n\n- Prefers aisle seats\n- Vegan"
RESTORE = reverse("source_history_restore", args=["legacy"])


def history(client: Client, item: str = PREFS):
    return client.get(url("source_history", f"item={item}"))


def restore_forms(client: Client, item: str = PREFS) -> list[Form]:
    """The History's "Restore this version" forms, newest change first."""
    return [f for f in forms(body(history(client, item))) if f.action == RESTORE]


def edit(client: Client, text: str, item: str = PREFS) -> None:
    editor = client.get(url("source_edit", f"item={item}"))
    form = next(f for f in forms(body(editor)) if f.action.endswith("/legacy/edit"))
    assert client.post(form.action, {**form.fields, "text": text}).status_code == 302


def text_of(legacy: FakeLegacyBackend, item: str = PREFS) -> str | None:  # noqa: F811
    found = legacy.files[(TRAVEL, ALICE)].get(item)
    return None if found is None else found.text


def test_an_edit_keeps_the_version_before_and_restoring_it_puts_it_back(
    alice: Client,
    legacy,  # noqa: F811
) -> None:
    edit(alice, "# Travel\n\n- Window seats")
    assert PriorVersion.objects.filter(upn=ALICE, target_key__startswith="legacy:").count() == 1

    item_page = body(alice.get(url("source_item", f"item={PREFS}")))
    history_url = url("source_history", f"item={PREFS}").replace("&", "&amp;")
    assert f'href="{history_url}"' in item_page
    page = history(alice)
    text = page_text(page)
    assert page.status_code == 200
    assert "You · Edited" in text
    assert re.search(r"removed: \S - Prefers aisle seats", text)  # the edit's diff
    assert "added: + - Window seats" in text
    (form,) = restore_forms(alice)

    done = alice.post(form.action, form.fields)

    assert done.status_code == 302
    assert text_of(legacy) == ORIGINAL
    event = AuditEvent.objects.filter(source="legacy", action="restore-version").get()
    assert event.outcome == "ok"
    # The restore is a change of its own, newest first: it can be taken back the same way.
    text = page_text(history(alice))
    assert text.index("Restored an earlier version") < text.index("Edited")
    assert len(restore_forms(alice)) == 2


def test_an_entry_edit_is_kept_too(alice: Client, legacy) -> None:  # noqa: F811
    page = body(alice.get(url("source_entry", f"item={PREFS}&line=3")))
    form = next(f for f in forms(page) if f.action.endswith("/legacy/entry"))
    fields = {**form.fields, "new": "- Prefers window seats", "action": "save"}
    assert alice.post(form.action, fields).status_code == 302

    (restore,) = restore_forms(alice)
    assert alice.post(restore.action, restore.fields).status_code == 302
    assert text_of(legacy) == ORIGINAL


@pytest.mark.parametrize(
    ("mine", "agents", "restored"),
    [
        # The agent adds a line after her edit: kept after the version put back.
        (
            "# Travel\n\n- Window seats",
            "# Travel\n\n- Window seats\n- Flies from Oslo",
            f"{ORIGINAL}\n- Flies from Oslo\n",
        ),
        # The agent rewrites her line: what it wrote is its own, kept too.
        (
            "# Travel\n\n- Window seats",
            "# Travel\n\n- Flies business",
            f"{ORIGINAL}\n- Flies business\n",
        ),
        # One value superseded (as a memory-api memory): not glued to the version put back.
        ("Window seats", "Flies business", ORIGINAL),
    ],
    ids=["added", "rewritten", "one line"],
)
def test_a_restore_keeps_what_an_agent_wrote_since_the_change(
    alice: Client,
    legacy,  # noqa: F811
    mine: str,
    agents: str,
    restored: str,
) -> None:
    edit(alice, mine)
    legacy.put("travel-planner", ALICE, PREFS, agents)  # after her edit, before the History
    (form,) = restore_forms(alice)

    assert alice.post(form.action, form.fields).status_code == 302

    assert text_of(legacy) == restored


def test_a_file_changed_since_the_history_was_shown_is_not_overwritten(
    alice: Client,
    legacy,  # noqa: F811
) -> None:
    edit(alice, "mine")
    (form,) = restore_forms(alice)
    legacy.put("travel-planner", ALICE, PREFS, "changed elsewhere")

    refused = alice.post(form.action, form.fields)

    assert refused.status_code == 409
    assert "Nothing was restored" in page_text(refused)
    assert "changed elsewhere" in page_text(refused)  # the History as it is now
    assert text_of(legacy) == "changed elsewhere"
    failed = AuditEvent.objects.get(source="legacy", action="restore-version")
    assert failed.outcome == "error"


def test_another_persons_version_is_a_404(alice: Client, bob: Client, legacy) -> None:  # noqa: F811
    edit(alice, "mine")
    (form,) = restore_forms(alice)
    legacy.put("travel-planner", "bob@contoso.com", PREFS, "Bob's")

    assert "Restore this version" not in page_text(history(bob))
    assert bob.post(form.action, form.fields).status_code == 404
    assert text_of(legacy) == "mine"
    assert legacy.files[(TRAVEL, "bob@contoso.com")][PREFS].text == "Bob's"


def test_a_restore_needs_csrf(alice: Client, legacy) -> None:  # noqa: F811
    edit(alice, "mine")
    (form,) = restore_forms(alice)
    strict = signed_in(Client(enforce_csrf_checks=True), ALICE)

    assert strict.post(form.action, form.fields).status_code == 403
    assert text_of(legacy) == "mine"


def test_a_read_only_store_offers_no_restore_and_refuses_one(alice: Client, legacy) -> None:  # noqa: F811
    edit(alice, "mine")
    (form,) = restore_forms(alice)
    legacy.read_only.add(TRAVEL)

    text = page_text(history(alice))
    assert "You · Edited" in text and "Restore this version" not in text
    assert text.count(READ_ONLY_REASON) == 1
    refused = alice.post(form.action, form.fields)
    assert refused.status_code == 403
    assert READ_ONLY_REASON in page_text(refused)
    assert text_of(legacy) == "mine"


def test_a_deleted_file_is_found_on_its_stores_page_and_brought_back(
    alice: Client,
    legacy,  # noqa: F811
) -> None:
    assert alice.post(url("source_delete"), posted(item=PREFS)).status_code == 302
    assert text_of(legacy) is None

    store = alice.get(url("source_target"))
    assert "Deleted by you in the last 30 days" in page_text(store)
    history_url = url("source_history", f"item={PREFS}").replace("&", "&amp;")
    assert f'href="{history_url}"' in body(store)
    text = page_text(history(alice))
    assert "You deleted this file" in text and "You · Deleted an entry" in text
    assert "(brought back as it was before this change)" in text
    (form,) = restore_forms(alice)

    assert alice.post(form.action, form.fields).status_code == 302

    assert text_of(legacy) == ORIGINAL
    assert "Deleted by you" not in page_text(alice.get(url("source_target")))
    # The file is there again: its History now restores over it, from its version.
    now = generic.version_of(legacy.files[(TRAVEL, ALICE)][PREFS])
    assert [f.fields["version"] for f in restore_forms(alice)] == [now]


def test_a_deleted_file_written_again_meanwhile_is_not_overwritten(
    alice: Client,
    legacy,  # noqa: F811
) -> None:
    alice.post(url("source_delete"), posted(item=PREFS))
    (form,) = restore_forms(alice)
    legacy.put("travel-planner", ALICE, PREFS, "written again by the agent")

    refused = alice.post(form.action, form.fields)

    assert refused.status_code == 409
    assert text_of(legacy) == "written again by the agent"


def test_without_restore_a_deleted_file_is_appended_as_a_new_one(
    alice: Client,
    legacy,  # noqa: F811
) -> None:
    legacy.capabilities = CAPABILITIES & ~Capability.RESTORE_ITEM
    alice.post(url("source_delete"), posted(item=PREFS))
    assert "(added again as a new file" in page_text(history(alice))
    (form,) = restore_forms(alice)

    done = alice.post(form.action, form.fields)

    assert done.status_code == 302
    assert text_of(legacy) is None and text_of(legacy, NOTES) == ORIGINAL
    assert done["Location"] == url("source_item", f"item={NOTES}")
    # The deleted file's History says it was brought back, offers no second restore, and
    # refuses the same form again: nothing added twice.
    text = page_text(history(alice))
    assert "you brought it back already" in text and "You deleted this" not in text
    assert restore_forms(alice) == []
    assert alice.post(form.action, form.fields).status_code == 409
    assert text_of(legacy, NOTES) == ORIGINAL


def test_without_restore_or_append_a_deleted_file_says_why(alice: Client, legacy) -> None:  # noqa: F811
    legacy.capabilities = CAPABILITIES & ~Capability.RESTORE_ITEM & ~Capability.APPEND
    alice.post(url("source_delete"), posted(item=PREFS))
    text = page_text(history(alice))

    assert "Restore this version" not in text
    assert missing_sentence(Capability.RESTORE_ITEM) in text
    change = PriorVersion.objects.get().pk
    fields = posted(item=PREFS, change=str(change), version="")
    assert alice.post(RESTORE, fields).status_code == 404
    assert text_of(legacy) is None and NOTES not in legacy.files[(TRAVEL, ALICE)]


def test_an_unknown_item_without_changes_is_a_404(alice: Client, legacy) -> None:  # noqa: F811
    assert history(alice, "/memories/never.md").status_code == 404


def test_support_keeps_no_version_of_a_generic_item(carol: Client, legacy) -> None:  # noqa: F811
    request_url = start(carol)
    export(carol, request_url)
    assert clear(carol, request_url).status_code == 302

    assert text_of(legacy) is None  # support's erasure deleted the file
    assert not PriorVersion.objects.exists()


@pytest.mark.parametrize("how", ["deletion request", "clear everything"])
def test_a_deletion_request_or_clear_everything_leaves_no_version_of_a_file(
    alice: Client,
    bob: Client,
    carol: Client,
    legacy,  # noqa: F811
    how: str,
) -> None:
    edit(alice, "mine")
    alice.post(url("source_delete"), posted(item="/memories/trips/berlin.md"))
    legacy.put("travel-planner", "bob@contoso.com", PREFS, "Bob's")
    edit(bob, "Bob's own")
    assert PriorVersion.objects.filter(upn=ALICE).count() == 2

    if how == "deletion request":
        request_url = start(carol)
        export(carol, request_url)
        assert clear(carol, request_url).status_code == 302
    else:
        done = alice.post("/memory/clear-everything", {"phrase": "clear everything"})
        assert done.status_code == 200, page_text(done)

    assert not PriorVersion.objects.filter(upn=ALICE).exists()
    assert PriorVersion.objects.filter(upn="bob@contoso.com").count() == 1  # not his request


def test_an_items_page_breadcrumb_names_the_item_not_its_object(
    alice: Client,
    legacy,  # noqa: F811
) -> None:
    page = body(alice.get(url("source_item", f"item={PREFS}")))
    crumbs = page[page.index('class="source-crumbs"') :].split("</div>", 1)[0]
    assert "Item(" not in crumbs and "aisle" not in crumbs.lower()  # no text in the crumbs
    assert PREFS in crumbs
