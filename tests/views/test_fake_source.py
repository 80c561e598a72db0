"""Adding a memory system is a package and a settings entry (issue 27): a third source
that exists only for tests (`tests/fake_source`: a team notebook, kept in this process
since the devstack has no such system) is registered through PORTAL_MEMORY_SOURCES alone,
and shows on the dashboard, in search, in "Export everything", in support's deletion
request with its own rows, and in Activity's System filter; with each capability removed
in turn, its action is gone and its sentence is shown."""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Iterator

import pytest
from django.test import Client
from django.urls import reverse

from memory_ui.models import AuditEvent
from memory_ui.sources import registry
from memory_ui.sources.protocol import Capability
from tests.fake_coreapi import FakeCoreAPI
from tests.fake_source import MISSING, NOTEBOOK, TITLE
from tests.pages import forms, table_rows
from tests.views.helpers import body, page_text

ALICE = "alice@contoso.com"
SOURCES = ["memory_ui.sources.coreapi", "tests.fake_source", "memory_ui.sources.agent_notes"]
PAGE = "weekly"


@pytest.fixture
def notebook(settings, fake: FakeCoreAPI) -> Iterator[None]:
    settings.PORTAL_MEMORY_SOURCES = SOURCES
    settings.NOTEBOOK_WITHOUT = []
    NOTEBOOK.pages = {ALICE: {PAGE: {"coffee": "Alice takes her coffee black.", "desk": "Desk 4B"}}}
    NOTEBOOK.down = False
    yield
    NOTEBOOK.pages = {}
    NOTEBOOK.down = False


def target_url(page: str = "source_target", **query: str) -> str:
    query = {"target": PAGE, **query}
    return f"{reverse(page, args=['notebook'])}?" + "&".join(f"{k}={v}" for k, v in query.items())


def test_it_is_registered_through_settings_alone(notebook) -> None:
    assert [source.name for source in registry.sources()] == ["coreapi", "notebook", "agent_notes"]
    assert registry.source("notebook").title == TITLE


def test_the_dashboard_loads_its_section_and_its_page_lists_the_notes(
    alice: Client, notebook
) -> None:
    dashboard = body(alice.get(reverse("dashboard")))
    section_url = reverse("source_section", args=["notebook"])
    assert f'hx-get="{section_url}"' in dashboard
    assert f'<h2 id="notebook-heading" class="section-title">{TITLE}</h2>' in dashboard

    section = alice.get(section_url, headers={"HX-Request": "true"})
    assert section.status_code == 200
    assert "Notebook page weekly" in page_text(section)
    assert "<dt>Notes</dt><dd>2</dd>" in body(section)  # the source's own word for its items

    page = page_text(alice.get(target_url()))
    assert "coffee" in page and "Alice takes her coffee black." in page


def test_search_finds_its_notes(alice: Client, notebook) -> None:
    html = body(alice.get(reverse("search"), {"q": "coffee"}))
    assert f'<h3 id="search-source-notebook">{TITLE}' in html
    assert "Notebook page weekly" in html
    assert "1 match in 1 memory" in page_text(alice.get(reverse("search"), {"q": "coffee"}))


def test_export_everything_has_a_folder_for_it_and_names_it_when_it_is_down(
    alice: Client, notebook
) -> None:
    archive = zipfile.ZipFile(
        io.BytesIO(b"".join(alice.get(reverse("export_everything")).streaming_content))
    )
    assert "Alice takes her coffee black." in archive.read("notebook/weekly.md").decode()

    NOTEBOOK.down = True
    response = alice.get(reverse("export_everything"))
    assert response.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["files"]  # CoreAPI's memories are all there
    assert [entry["label"] for entry in manifest["missing_sources"]] == [TITLE]
    assert not [name for name in archive.namelist() if name.startswith("notebook/")]
    assert f"{TITLE} could not be reached" in page_text(alice.get(reverse("dashboard")))


def test_support_sees_it_before_the_clear_and_gets_its_own_rows_after(
    carol: Client, notebook
) -> None:
    from tests.views.test_support import clear, export, start

    request_url = start(carol)
    before = page_text(carol.get(request_url))
    assert f"{TITLE} Notebook page weekly to erase 2" in before
    assert "Agents' private notes everything not possible" in before
    assert "Ask the owner of each agent." in before

    assert "notebook/weekly.md" in export(carol, request_url).namelist()
    NOTEBOOK.pages[ALICE][PAGE]["desk"] = "Desk 5C"  # changed since the export: kept

    result = carol.get(clear(carol, request_url)["Location"])
    rows = [row for row in table_rows(body(result)) if row and row[0] == TITLE]
    assert rows == [
        [
            TITLE,
            "Notebook page weekly",
            "partly",
            "1 of 2 erased",
            "1 of 2 erased; 1 left: Changed since the export; kept: export again, then erase.",
        ]
    ]
    assert NOTEBOOK.pages[ALICE][PAGE] == {"desk": "Desk 5C"}  # read back: only the change left
    heading = re.search(r"<h1>(.*?)</h1>", body(result), re.S)[1]
    assert "all" not in heading.casefold()
    erased = AuditEvent.objects.filter(source="notebook", action=AuditEvent.Action.ERASE)
    assert erased.count() == 1 and erased.get().outcome == AuditEvent.Outcome.ERROR


def test_activity_names_it_and_filters_by_it(alice: Client, notebook) -> None:
    alice.post(reverse("source_delete", args=["notebook"]), {"target": PAGE, "item": "desk"})

    html = body(alice.get(reverse("activity"), {"system": "notebook"}))
    assert f'<option value="notebook" selected>{TITLE}</option>' in html
    heads, *found = table_rows(html)
    assert [row[heads.index("System")] for row in found] == [TITLE]


ACTIONS = {
    "EDIT_ITEM": ("Edit<span", "source_edit"),
    "DELETE_ITEM": ('action="/memory/sources/notebook/delete"', "source_delete"),
    "CLEAR_TARGET": ('href="/memory/sources/notebook/clear?', "source_clear"),
    "EXPORT": ('href="/memory/sources/notebook/export?', "source_export"),
}


@pytest.mark.parametrize("capability", sorted(ACTIONS))
def test_each_capability_removed_hides_its_action_and_says_why(
    alice: Client, notebook, settings, capability: str
) -> None:
    marker, url_name = ACTIONS[capability]
    assert marker in body(alice.get(target_url()))

    settings.NOTEBOOK_WITHOUT = [capability]
    page = body(alice.get(target_url()))
    assert marker not in page
    assert MISSING[Capability[capability]].replace("'", "&#x27;") in page
    send = alice.get if capability == "EXPORT" else alice.post
    refused = send(reverse(url_name, args=["notebook"]), {"target": PAGE, "item": "desk"})
    assert refused.status_code == 404
    assert NOTEBOOK.pages[ALICE][PAGE]["desk"] == "Desk 4B"


def test_without_search_it_is_not_searched(alice: Client, notebook, settings) -> None:
    settings.NOTEBOOK_WITHOUT = ["SEARCH"]
    assert "search-source-notebook" not in body(alice.get(reverse("search"), {"q": "coffee"}))


def test_delete_and_undo_through_its_pages_are_audited_with_its_name(
    alice: Client, notebook
) -> None:
    deleted = alice.post(
        reverse("source_delete", args=["notebook"]), {"target": PAGE, "item": "desk"}
    )
    assert deleted.status_code == 302 and "desk" not in NOTEBOOK.pages[ALICE][PAGE]
    token = re.search(r"undo=([\w-]+)", deleted["Location"])[1]
    page = body(alice.get(deleted["Location"]))
    assert (
        "Deleted desk." in page
        and '<button type="submit" class="secondary outline">Undo</button>' in page
    )

    undone = alice.post(reverse("source_undo", args=["notebook"]), {"target": PAGE, "undo": token})
    assert undone.status_code == 302 and NOTEBOOK.pages[ALICE][PAGE]["desk"] == "Desk 4B"
    actions = list(AuditEvent.objects.filter(source="notebook").values_list("action", flat=True))
    assert sorted(actions) == ["delete-entry", "undo"]


def test_a_target_that_is_not_theirs_is_a_404_without_a_change(alice: Client, notebook) -> None:
    missing = alice.post(
        reverse("source_delete", args=["notebook"]), {"target": "someone-else", "item": "desk"}
    )
    assert missing.status_code == 404
    assert alice.get(reverse("source_section", args=["nothing-here"])).status_code == 404


def test_an_edit_is_audited_with_the_text_before_and_after(alice: Client, notebook) -> None:
    editor = alice.get(target_url("source_edit", item="desk"))
    form = next(f for f in forms(body(editor)) if f.action.endswith("/notebook/edit"))
    saved = alice.post(form.action, {**form.fields, "text": "5C"})
    assert saved.status_code == 302 and NOTEBOOK.pages[ALICE][PAGE]["desk"] == "5C"
    event = AuditEvent.objects.get(source="notebook", action=AuditEvent.Action.EDIT)
    assert (event.sha256_before, event.sha256_after) == (_sha256("Desk 4B"), _sha256("5C"))


def test_an_undo_is_audited_with_the_text_it_put_back(alice: Client, notebook) -> None:
    deleted = alice.post(
        reverse("source_delete", args=["notebook"]), {"target": PAGE, "item": "desk"}
    )
    token = re.search(r"undo=([\w-]+)", deleted["Location"])[1]
    alice.post(reverse("source_undo", args=["notebook"]), {"target": PAGE, "undo": token})
    event = AuditEvent.objects.get(source="notebook", action=AuditEvent.Action.UNDO)
    assert (event.sha256_before, event.sha256_after) == ("", _sha256("Desk 4B"))


def test_a_clear_is_audited_with_its_count_not_as_a_reason(alice: Client, notebook) -> None:
    cleared = alice.post(
        reverse("source_clear", args=["notebook"]), {"target": PAGE, "phrase": "clear"}
    )
    assert cleared.status_code == 200 and NOTEBOOK.pages[ALICE][PAGE] == {}
    event = AuditEvent.objects.get(source="notebook", action=AuditEvent.Action.CLEAR)
    assert (event.count, event.reason) == (2, "")


def test_an_erasure_keeps_supports_reason_and_one_not_exported_is_a_failure(
    carol: Client, notebook
) -> None:
    from tests.views.test_support import REASON, clear, export, start

    request_url = start(carol)
    NOTEBOOK.down = True  # not in the export, so not erased
    export(carol, request_url)
    NOTEBOOK.down = False
    carol.get(clear(carol, request_url)["Location"])
    refused = AuditEvent.objects.get(source="notebook", action=AuditEvent.Action.ERASE)
    assert refused.outcome == AuditEvent.Outcome.ERROR and NOTEBOOK.pages[ALICE][PAGE]

    request_url = start(carol)
    export(carol, request_url)
    carol.get(clear(carol, request_url)["Location"])
    events = AuditEvent.objects.filter(source="notebook", action=AuditEvent.Action.ERASE)
    erased = events.exclude(pk=refused.pk).get()
    assert erased.outcome == AuditEvent.Outcome.OK
    assert (erased.reason, erased.count) == (REASON, 2)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_an_erasure_that_fails_part_way_counts_what_it_erased(
    carol: Client, notebook, monkeypatch
) -> None:
    from tests.fake_source import NotebookBackend, NotebookDown
    from tests.views.test_support import clear, export, start

    request_url = start(carol)
    export(carol, request_url)
    delete_item = NotebookBackend.delete_item

    def delete_one_then_fail(self, subject, target, key):
        if key == "desk":
            raise NotebookDown("The team notebook is unavailable, try again.", status=503)
        return delete_item(self, subject, target, key)

    monkeypatch.setattr(NotebookBackend, "delete_item", delete_one_then_fail)
    result = carol.get(clear(carol, request_url)["Location"])
    assert NOTEBOOK.pages[ALICE][PAGE] == {"desk": "Desk 4B"}  # coffee erased, desk left
    rows = [row for row in table_rows(body(result)) if row and row[0] == TITLE]
    assert [row[2:4] for row in rows] == [["partly", "1 of 2 erased"]]
    assert "The team notebook is unavailable" in rows[0][4]
    erased = AuditEvent.objects.get(source="notebook", action=AuditEvent.Action.ERASE)
    assert (erased.outcome, erased.count) == (AuditEvent.Outcome.ERROR, 1)


@pytest.mark.parametrize("capability", ["ERASE_SUBJECT", "EXPORT"])
def test_a_source_that_cannot_erase_is_not_possible_before_and_after_the_clear(
    carol: Client, notebook, settings, capability: str
) -> None:
    from tests.views.test_support import clear, export, start

    settings.NOTEBOOK_WITHOUT = [capability]
    why = MISSING[Capability[capability]]
    request_url = start(carol)
    before = page_text(carol.get(request_url))
    assert f"{TITLE} Notebook page weekly to erase" not in before
    assert f"{TITLE} everything not possible — {why}" in before

    export(carol, request_url)
    result = carol.get(clear(carol, request_url)["Location"])
    rows = [row for row in table_rows(body(result)) if row and row[0] == TITLE]
    assert rows == [[TITLE, "everything", "not possible", "—", why]]
    assert NOTEBOOK.pages[ALICE][PAGE]["desk"] == "Desk 4B"


def test_a_change_that_fails_offers_to_try_again_from_its_page_not_its_post_url(
    alice: Client, notebook
) -> None:
    NOTEBOOK.down = True
    failed = alice.post(
        reverse("source_delete", args=["notebook"]), {"target": PAGE, "item": "desk"}
    )
    assert failed.status_code == 503
    retry = re.search(r'<a href="([^"]*)" role="button" class="secondary">', body(failed))[1]
    assert retry.replace("&amp;", "&") == target_url()
    NOTEBOOK.down = False
    assert alice.get(retry.replace("&amp;", "&")).status_code == 200


def test_an_edit_does_not_overwrite_a_change_made_since_the_editor_opened(
    alice: Client, notebook
) -> None:
    editor = alice.get(target_url("source_edit", item="desk"))
    form = next(f for f in forms(body(editor)) if f.action.endswith("/notebook/edit"))
    NOTEBOOK.pages[ALICE][PAGE]["desk"] = "Desk 5C"  # changed meanwhile

    saved = alice.post(form.action, {**form.fields, "text": "Desk 6D"})
    assert saved.status_code == 409
    assert "Nothing was saved. It was changed since you opened it" in page_text(saved)
    assert NOTEBOOK.pages[ALICE][PAGE]["desk"] == "Desk 5C"
    event = AuditEvent.objects.get(source="notebook", action=AuditEvent.Action.EDIT)
    assert event.outcome == AuditEvent.Outcome.ERROR and event.error_status == 409

    editor = alice.get(target_url("source_edit", item="desk"))
    form = next(f for f in forms(body(editor)) if f.action.endswith("/notebook/edit"))
    assert alice.post(form.action, {**form.fields, "text": "Desk 6D"}).status_code == 302
    assert NOTEBOOK.pages[ALICE][PAGE]["desk"] == "Desk 6D"


def test_an_erasure_is_read_back_and_what_came_back_keeps_it_partly(
    carol: Client, notebook, monkeypatch
) -> None:
    """A source that answers every delete but still holds a note when read back (someone
    wrote it again meanwhile) is "partly", not "erased", and the heading never says all."""
    from tests.fake_source import NotebookBackend
    from tests.views.test_support import clear, export, start

    request_url = start(carol)
    export(carol, request_url)
    delete_item = NotebookBackend.delete_item

    def delete_then_written_again(self, subject, target, key):
        deleted = delete_item(self, subject, target, key)
        if key == "desk":
            NOTEBOOK.pages[ALICE][PAGE]["desk-again"] = "Desk 4B, still."
        return deleted

    monkeypatch.setattr(NotebookBackend, "delete_item", delete_then_written_again)
    result = carol.get(clear(carol, request_url)["Location"])
    rows = [row for row in table_rows(body(result)) if row and row[0] == TITLE]
    assert [row[2:4] for row in rows] == [["partly", "2 of 2 erased"]]
    assert "Read back after the erasure, 1 still there" in rows[0][4]
    heading = re.search(r"<h1>(.*?)</h1>", body(result), re.S)[1]
    assert "all" not in heading.casefold() and "partly" in heading.casefold()
