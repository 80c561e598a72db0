"""An agent's append no longer blocks a person's change, and nothing sent again after a
lost answer is added twice (docs/architecture.md, Changes made meanwhile).

The fake stands in for what the devstack cannot produce on demand: an append landing at an
exact point of a request, and a write applied without an answer. The same flows run
against the real devstack in tests/integration/test_merging.py.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from django.test import Client

from devstack.coreapi import formats
from memory_ui.sources.coreapi import CoreAPIOutcomeUnknown, CoreAPIUnavailable
from memory_ui.sources.coreapi.errors import OUTCOME_UNKNOWN_MESSAGE
from tests.fake_coreapi import FakeCoreAPI
from tests.transfers import make_archive, plan, upload
from tests.views.helpers import HTMX, USER, body, field_value, fields_of, page_text, textarea

FLIGHT = "- Flight to Madrid on 3 March, 10:00."


def agent_appends(fake: FakeCoreAPI, text: str = FLIGHT, reason: str = "Flight to Madrid") -> str:
    """An agent's append as CoreAPI writes it; the document after it."""
    fake.put(formats.append_entry(fake.text(), text, datetime.now(UTC), reason=reason))
    return fake.text()


def appends_before(fake: FakeCoreAPI, monkeypatch, method: str, times: int = 1) -> None:
    """The agent's append lands right before each of the next `times` `method` calls."""
    original = getattr(fake, method)
    left = [times]

    def late(*args, **kwargs):
        if left[0]:
            left[0] -= 1
            agent_appends(fake, f"- Agent fact {left[0]}.", f"fact {left[0]}")
        return original(*args, **kwargs)

    monkeypatch.setattr(fake, method, late)


def delete_fields(client: Client, index: int) -> dict[str, str]:
    html = body(client.get("/memory/user"))
    return {**USER, "version": field_value(html, "version"), "index": str(index)}


# --- changes that do not overlap an append go through ------------------------------------


@pytest.mark.parametrize("headers", [{}, HTMX], ids=["page", "htmx"])
def test_delete_after_an_append_keeps_both(alice: Client, fake: FakeCoreAPI, headers):
    fields = delete_fields(alice, 1)
    agent_appends(fake)
    response = alice.post("/memory/entries/delete", fields, headers=headers)
    assert response.status_code in (200, 302)
    assert "Writes in British English" not in fake.text()
    assert FLIGHT in fake.text() and "Prefers concise answers" in fake.text()
    shown = page_text(alice.get("/memory/user")) if not headers else page_text(response)
    assert "\u201cFlight to Madrid\u201d was added while you were changing this memory" in shown


def test_undo_after_an_append_restores_and_keeps_it(alice: Client, fake: FakeCoreAPI):
    before = fake.text()
    deleted = alice.post("/memory/entries/delete", delete_fields(alice, 1))
    token = deleted["Location"].split("undo=")[1]
    agent_appends(fake)
    response = alice.post("/memory/undo", {**USER, "token": token})
    assert response.status_code == 302
    assert fake.text().startswith(before.rstrip())
    assert fake.text().rstrip().endswith(FLIGHT)
    assert "both are kept" in page_text(alice.get("/memory/user"))


def test_edit_after_an_append_keeps_it_after_the_edit(alice: Client, fake: FakeCoreAPI):
    html = body(alice.get("/memory/edit", USER))
    fields = fields_of(html, "scope", "version", "base")
    draft = textarea(html, "content").replace("concise", "detailed")
    agent_appends(fake)
    response = alice.post("/memory/edit", {**fields, "content": draft, "action": "save"})
    assert response.status_code == 302
    assert fake.text().startswith(draft.rstrip() + "\n\n## Added ")
    assert fake.text().rstrip().endswith(FLIGHT)


def test_entry_edit_after_an_append_changes_only_that_entry(alice: Client, fake: FakeCoreAPI):
    html = body(alice.get("/memory/entries/edit", {**USER, "index": "0"}))
    version = field_value(html, "version")
    agent_appends(fake)
    response = alice.post(
        "/memory/entries/edit",
        {**USER, "index": "0", "version": version, "content": "- Prefers long answers."},
    )
    assert response.status_code == 302
    assert "- Prefers long answers." in fake.text() and "Prefers concise" not in fake.text()
    assert "Writes in British English" in fake.text()
    assert fake.text().rstrip().endswith(FLIGHT)


def test_appends_racing_the_conditional_write_are_merged_again(
    alice: Client, fake: FakeCoreAPI, monkeypatch
):
    fake.conditional = True
    fields = delete_fields(alice, 1)
    appends_before(fake, monkeypatch, "import_memory", times=2)  # two 412s, then it lands
    response = alice.post("/memory/entries/delete", fields)
    assert response.status_code == 302
    assert "Agent fact 0." in fake.text() and "Agent fact 1." in fake.text()
    assert "Writes in British English" not in fake.text()


def test_an_append_racing_every_attempt_ends_in_a_conflict(
    alice: Client, fake: FakeCoreAPI, monkeypatch
):
    fake.conditional = True
    fields = delete_fields(alice, 1)
    appends_before(fake, monkeypatch, "import_memory", times=10)
    response = alice.post("/memory/entries/delete", fields)
    assert response.status_code == 409
    assert "Writes in British English" in fake.text()  # nothing deleted, nothing lost
    assert fake.text().count("Agent fact") == 3  # one per attempt: MERGE_ATTEMPTS


# --- real overlaps are still refused -----------------------------------------------------


def test_a_change_to_the_entry_itself_is_a_conflict(alice: Client, fake: FakeCoreAPI):
    html = body(alice.get("/memory/entries/edit", {**USER, "index": "1"}))
    version = field_value(html, "version")
    fake.put(fake.text().replace("British English", "US English"))
    agent_appends(fake)
    meanwhile = fake.text()
    response = alice.post(
        "/memory/entries/edit",
        {**USER, "index": "1", "version": version, "content": "- Writes in Scots."},
    )
    assert response.status_code == 409
    assert fake.text() == meanwhile


def test_an_import_replace_is_refused_when_anything_arrived(alice: Client, fake: FakeCoreAPI):
    preview = alice.post("/memory/user/import/preview", {"pasted": "- Only this.\n"})
    html = body(preview)
    fields = {
        "text": "- Only this.\n",
        **fields_of(html, "source", "version", "submission"),
        "mode": "replace",
        "confirm_replace": "yes",
    }
    meanwhile = agent_appends(fake)
    response = alice.post("/memory/user/import/confirm", fields)
    assert response.status_code == 409
    assert fake.text() == meanwhile


def test_a_clear_is_refused_when_anything_arrived(alice: Client, fake: FakeCoreAPI):
    html = body(alice.get("/memory/clear", USER))
    meanwhile = agent_appends(fake)
    response = alice.post(
        "/memory/clear", {**USER, "version": field_value(html, "version"), "confirm": "true"}
    )
    assert response.status_code == 409
    assert fake.text() == meanwhile


# --- a note or import whose answer was lost is settled before it is sent again ----------


def answer_lost(fake: FakeCoreAPI, monkeypatch, method: str) -> Callable[..., object]:
    """From now on `method` is applied but its answer is lost, and the read that would
    settle it at once fails too: the outcome stays unknown. The real method, to put back."""
    original = getattr(fake, method)

    def applied_without_answer(*args, **kwargs):
        original(*args, **kwargs)
        fake.fail("get_memory", CoreAPIUnavailable("CoreAPI is unavailable."), times=1)
        raise CoreAPIOutcomeUnknown(OUTCOME_UNKNOWN_MESSAGE)

    monkeypatch.setattr(fake, method, applied_without_answer)
    return original


def note_form(client: Client) -> dict[str, str]:
    html = body(client.get("/memory/append", USER))
    return {**USER, "submission": field_value(html, "submission")}


def test_a_note_sent_again_after_a_lost_answer_is_added_once(
    alice: Client, fake: FakeCoreAPI, monkeypatch
):
    original = answer_lost(fake, monkeypatch, "append_memory")
    form = note_form(alice)
    sent = {**form, "content": "- Likes rain.", "reason": "Weather"}
    first = alice.post("/memory/append", sent)
    assert first.status_code == 504
    html = body(first)
    assert field_value(html, "submission") == form["submission"]  # the same key comes back
    assert textarea(html, "content") == "- Likes rain."
    monkeypatch.setattr(fake, "append_memory", original)

    again = alice.post("/memory/append", {**sent, "submission": field_value(html, "submission")})

    assert again.status_code == 302
    assert fake.text().count("- Likes rain.") == 1
    assert "already added" in page_text(alice.get("/memory/user"))


def test_a_note_that_certainly_failed_is_added_when_sent_again(alice: Client, fake: FakeCoreAPI):
    form = note_form(alice)
    sent = {**form, "content": "- Likes rain."}
    fake.fail("append_memory", CoreAPIUnavailable("CoreAPI is unavailable, try again."))
    first = alice.post("/memory/append", sent)
    assert first.status_code == 503
    assert field_value(body(first), "submission") == form["submission"]
    fake.heal()
    again = alice.post("/memory/append", sent)
    assert again.status_code == 302
    assert fake.text().count("- Likes rain.") == 1
    assert "Added your note" in page_text(alice.get("/memory/user"))


def test_a_note_whose_lost_answer_never_landed_is_added_when_sent_again(
    alice: Client, fake: FakeCoreAPI
):
    form = note_form(alice)
    sent = {**form, "content": "- Likes rain."}
    fake.fail("append_memory", CoreAPIOutcomeUnknown(OUTCOME_UNKNOWN_MESSAGE))
    assert alice.post("/memory/append", sent).status_code == 504
    fake.heal()
    again = alice.post("/memory/append", sent)
    assert again.status_code == 302
    assert fake.text().count("- Likes rain.") == 1
    # And sent once more, it was added: once.
    alice.post("/memory/append", sent)
    assert fake.text().count("- Likes rain.") == 1


# --- a restore run again skips what landed -----------------------------------------------


@pytest.mark.parametrize("mode", ["append", "replace"])
def test_a_restore_run_again_after_lost_answers_writes_nothing_twice(
    alice: Client, fake: FakeCoreAPI, monkeypatch, mode: str
):
    archive = make_archive({None: "- from the archive\n", "it-helpdesk": "- helpdesk copy\n"})
    apply_url, versions = plan(alice, upload(alice, archive)["Location"])
    original = answer_lost(fake, monkeypatch, "import_memory")
    fields = {
        "mode": mode,
        "confirm_replace": "yes",
        "scopes": ["user", "agent:it-helpdesk"],
        **{f"version-{key}": value for key, value in versions.items()},
    }
    assert alice.post(apply_url, fields).status_code == 302
    once = {None: fake.text(), "it-helpdesk": fake.text("it-helpdesk")}
    monkeypatch.setattr(fake, "import_memory", original)

    again = alice.post(apply_url, fields)

    assert again.status_code == 302
    assert {None: fake.text(), "it-helpdesk": fake.text("it-helpdesk")} == once
    assert once[None].count("- from the archive") == 1
    page = page_text(alice.get(again["Location"]))
    assert page.count("Already restored before the interruption; not written again") == 2
