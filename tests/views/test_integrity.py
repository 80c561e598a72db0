"""Nothing lost or doubled by races and unknown outcomes: conditional writes where
CoreAPI offers them (docs/conditional-writes.md), writes that got no answer, and a clear
that carries the version its confirmation showed.

The fake stands in for timing the devstack can't produce on demand: an agent's append
landing between the portal's read and its write, and a write applied without an answer.
"""

from __future__ import annotations

import pytest
from django.test import Client

from memory_ui.models import AuditEvent
from memory_ui.sources.coreapi import CoreAPIOutcomeUnknown
from memory_ui.sources.coreapi.errors import OUTCOME_UNKNOWN_MESSAGE
from tests.fake_coreapi import FakeCoreAPI
from tests.views.helpers import USER, body, field_value, fields_of, page_text, textarea

NO_ANSWER = "CoreAPI did not answer in time."


def agent_appends_before(fake: FakeCoreAPI, monkeypatch, method: str, note: str) -> None:
    """An agent's append lands right before the portal's `method` call reaches CoreAPI."""
    original = getattr(fake, method)

    def late(*args, **kwargs):
        fake.put(fake.text() + f"\n{note}\n")
        return original(*args, **kwargs)

    monkeypatch.setattr(fake, method, late)


def applied_without_answer(fake: FakeCoreAPI, monkeypatch, method: str) -> None:
    """CoreAPI applies the write, but the answer never arrives (a read timeout)."""
    original = getattr(fake, method)

    def lost(*args, **kwargs):
        original(*args, **kwargs)
        raise CoreAPIOutcomeUnknown(OUTCOME_UNKNOWN_MESSAGE)

    monkeypatch.setattr(fake, method, lost)


def edit(alice: Client, content: str):
    html = body(alice.get("/memory/edit", USER))
    fields = fields_of(html, "scope", "version", "base")
    return alice.post("/memory/edit", {**fields, "content": content, "action": "save"})


def test_with_conditional_writes_an_append_in_the_window_is_never_erased(
    alice: Client, fake: FakeCoreAPI, monkeypatch
):
    fake.conditional = True
    agent_appends_before(fake, monkeypatch, "import_memory", "- Agent: books trains")
    response = edit(alice, "- My own version\n")
    assert response.status_code == 409  # the conflict page, with the draft kept
    assert "- Agent: books trains" in fake.text()
    assert textarea(body(response), "content") == "- My own version\n"
    assert fake.called("import_memory")[-1]  # the write was attempted, conditionally


def test_without_conditional_writes_the_window_is_one_round_trip(
    alice: Client, fake: FakeCoreAPI, monkeypatch
):
    """What the extension prevents: with a CoreAPI that lacks it, an append landing
    between the read and the write is lost (measured, not hidden)."""
    agent_appends_before(fake, monkeypatch, "import_memory", "- Agent: books trains")
    assert edit(alice, "- My own version\n").status_code == 302
    assert fake.text() == "- My own version\n"
    reads = [c.method for c in fake.calls].count("get_memory")
    assert reads == 3  # the editor, the check right before the write, the check after


def test_an_append_applied_without_an_answer_is_reported_done(
    alice: Client, fake: FakeCoreAPI, monkeypatch
):
    applied_without_answer(fake, monkeypatch, "append_memory")
    response = alice.post("/memory/append", {**USER, "content": "- Likes rain"})
    assert response.status_code == 302
    assert fake.text().count("- Likes rain") == 1
    assert "Added your note to your shared memory." in page_text(alice.get("/memory/user"))
    assert AuditEvent.objects.get(action="append").outcome == "ok"


def test_an_append_without_an_answer_is_never_called_nothing(alice: Client, fake: FakeCoreAPI):
    fake.fail("append_memory", CoreAPIOutcomeUnknown(OUTCOME_UNKNOWN_MESSAGE))
    response = alice.post("/memory/append", {**USER, "content": "- Likes rain"})
    assert response.status_code == 504
    text = page_text(response)
    assert NO_ANSWER in text and "Nothing was added" not in text
    assert textarea(body(response), "content") == "- Likes rain"  # kept to try again


def test_a_replace_applied_without_an_answer_is_reported_saved(
    alice: Client, fake: FakeCoreAPI, monkeypatch
):
    applied_without_answer(fake, monkeypatch, "import_memory")
    assert edit(alice, "- Saved anyway\n").status_code == 302
    assert fake.text() == "- Saved anyway\n"


def test_a_replace_without_an_answer_keeps_the_draft(alice: Client, fake: FakeCoreAPI):
    fake.fail("import_memory", CoreAPIOutcomeUnknown(OUTCOME_UNKNOWN_MESSAGE))
    response = edit(alice, "- Not yet\n")
    assert response.status_code == 504
    assert NO_ANSWER in page_text(response) and "Nothing was saved" not in page_text(response)
    assert textarea(body(response), "content") == "- Not yet\n"


@pytest.mark.parametrize("conditional", [False, True], ids=["plain", "if-match"])
def test_clear_refuses_when_more_arrived_after_the_confirmation(
    alice: Client, fake: FakeCoreAPI, conditional
):
    fake.conditional = conditional
    panel = body(alice.get("/memory/clear", USER))
    version = field_value(panel, "version")
    fake.put(fake.text() + "\n- Arrived after the confirmation\n")
    response = alice.post("/memory/clear", {**USER, "confirm": "true", "version": version})
    assert response.status_code == 409
    assert "nothing was cleared" in page_text(response)
    assert "- Arrived after the confirmation" in fake.text()
    again = field_value(body(response), "version")
    done = alice.post("/memory/clear", {**USER, "confirm": "true", "version": again})
    assert done.status_code == 302 and fake.text() == ""


def test_clear_everything_reports_unknown_outcomes_as_unknown(alice: Client, fake: FakeCoreAPI):
    fake.fail("clear_memory", CoreAPIOutcomeUnknown(OUTCOME_UNKNOWN_MESSAGE), agent="it-helpdesk")
    response = alice.post("/memory/clear-everything", {"phrase": "clear everything"})
    assert response.status_code == 504
    assert "IT Helpdesk: not known yet." in page_text(response)
