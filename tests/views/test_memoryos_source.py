"""MemoryOS (seed 002) through the registry alone: PORTAL_MEMORY_SOURCES naming
memory_ui.sources.memoryos, its emulator at MEMORYOS_BASE_URL. The dashboard shows its
agents and says it cannot list, search asks each agent, support's deletion request names it
"not possible" with its reason, before and after the clear, and "Export everything" names it
among the systems it cannot include. "What <agent> is told about me" asks only when the
person submits, shows the exact context and the ranked memories, and "This is wrong" sends
the person's correction to the emulator."""

from __future__ import annotations

import html as htmllib
import io
import re
import zipfile

import pytest
from django.test import Client
from django.urls import reverse

from devstack.coreapi.faults import Faults
from devstack.memoryos import emulator
from devstack.serve import RunningServer
from memory_ui.models import AuditEvent
from memory_ui.sources import registry
from memory_ui.sources.memoryos.adapter import MISSING, NO_ERASURE, NO_LIST, NOTICES, TITLE
from memory_ui.sources.protocol import Capability, PreviewState
from memory_ui.web.forms.sources import MAX_CORRECTION, SUGGESTED_QUESTION
from memory_ui.web.views.told import NOT_KEPT
from tests.devstack.memoryos_api import ALICE as ALICE_OID
from tests.devstack.memoryos_api import BLOCKED_KEY, DEGRADED_KEY, PASSTHROUGH_KEY, Api, ids
from tests.pages import forms, page_html, table_rows
from tests.views.conftest import identity_for, signed_in
from tests.views.helpers import body, page_text, textarea

NO_EXPORT = MISSING[Capability.EXPORT]
TOLD = reverse("source_told", args=["memoryos"])
REPORT = reverse("source_report", args=["memoryos"])

ALICE = "alice@contoso.com"

SOURCES = [
    "memory_ui.sources.coreapi",
    "memory_ui.sources.memoryos",
    "memory_ui.sources.agent_notes",
]


@pytest.fixture
def memoryos_source(settings, fake, fresh_memoryos: RunningServer) -> None:
    settings.PORTAL_MEMORY_SOURCES = SOURCES
    settings.MEMORYOS_BASE_URL = fresh_memoryos.url
    # The view tests' alice has the object id identity_for gives, not the devstack's.
    store = emulator(fresh_memoryos).store
    with store.db.write() as conn:
        for table in ("memories", "clarifications"):
            conn.execute(
                f"UPDATE {table} SET external_user_id = ? WHERE external_user_id = ?",
                (identity_for(ALICE).oid, ALICE_OID),
            )


def test_it_is_registered_through_settings_alone(memoryos_source) -> None:
    assert [source.name for source in registry.sources()] == ["coreapi", "memoryos", "agent_notes"]


def test_the_dashboard_shows_its_agents_and_that_it_cannot_list(
    alice: Client, memoryos_source, fresh_memoryos: RunningServer
) -> None:
    section_url = reverse("source_section", args=["memoryos"])
    assert f'hx-get="{section_url}"' in body(alice.get(reverse("dashboard")))

    section = alice.get(section_url, headers={"HX-Request": "true"})

    assert section.status_code == 200
    text = page_text(section)
    assert "Travel Planner" in text and "IT Helpdesk" in text
    assert NO_LIST in text
    # Retrieval moves last_accessed and counts against quota: only when a person asks.
    assert emulator(fresh_memoryos).store.db.rows("SELECT id FROM retrievals") == []


def test_search_asks_each_agent(alice: Client, memoryos_source) -> None:
    html = body(alice.get(reverse("search"), {"q": "ThinkPad"}))

    # A hit leads to what its agent is told: the service has no list to lead to.
    assert f'<a href="{TOLD}?target=it-helpdesk">' in html
    assert reverse("source_target", args=["memoryos"]) not in html

    assert f'<h3 id="search-source-memoryos">{TITLE}' in html
    assert "<mark>ThinkPad</mark> X1 Carbon" in html
    assert "Alice uses a ThinkPad X1 Carbon with Windows 11." in page_text(
        alice.get(reverse("search"), {"q": "ThinkPad"})
    )


def test_support_deletion_request_says_not_possible_before_and_after_the_clear(
    carol: Client, memoryos_source
) -> None:
    from tests.views.test_support import clear, export, start

    request_url = start(carol)
    before = page_text(carol.get(request_url))
    assert f"{TITLE} everything not possible — {NO_ERASURE}" in before

    archive = export(carol, request_url)
    assert not [name for name in archive.namelist() if name.startswith("memoryos/")]
    result = carol.get(clear(carol, request_url)["Location"])
    rows = [row for row in table_rows(body(result)) if row and row[0] == TITLE]
    assert rows == [[TITLE, "everything", "not possible", "—", NO_ERASURE]]


# --- "What <agent> is told about me" and "This is wrong" -------------------------------

SEAT_QUESTION = "Which seat does Alice prefer?"


def _retrievals(server: RunningServer) -> list:
    return emulator(server).store.db.rows("SELECT id FROM retrievals")


def _ask(client: Client, question: str = SEAT_QUESTION, target: str = "travel-planner"):
    return client.post(TOLD, {"target": target, "question": question})


def _context(html: str) -> str:
    (found,) = re.findall(r'<pre class="told-context">(.*?)</pre>', html, re.S)
    return htmllib.unescape(found)


def _report_forms(html: str) -> list:
    return [form for form in forms(html) if form.action == REPORT]


def test_the_form_page_asks_nothing(
    alice: Client, memoryos_source, fresh_memoryos: RunningServer
) -> None:
    response = alice.get(TOLD, {"target": "travel-planner"})

    html = page_html(response)
    assert "What an agent is told about you" in page_text(response)
    (form,) = [form for form in forms(html) if form.action == TOLD]
    assert form.method == "post" and "csrfmiddlewaretoken" in form.fields
    assert re.search(r'<option value="travel-planner" selected>Travel Planner</option>', html)
    assert '<option value="it-helpdesk">IT Helpdesk</option>' in html
    assert SUGGESTED_QUESTION in html  # the suggested question, ready to send as it is
    assert "told-context" not in html
    # Retrieval moves last_accessed and counts against quota: only when a person asks.
    assert _retrievals(fresh_memoryos) == []


def test_an_agent_not_in_the_list_is_a_404(
    alice: Client, memoryos_source, fresh_memoryos: RunningServer
) -> None:
    assert alice.get(TOLD, {"target": "benefits-assistant"}).status_code == 404
    assert _ask(alice, target="benefits-assistant").status_code == 404
    assert _ask(alice, target="../retrieve").status_code == 404
    assert _retrievals(fresh_memoryos) == []


def test_a_source_without_preview_has_no_such_page(alice: Client, memoryos_source) -> None:
    assert alice.get(reverse("source_told", args=["agent_notes"])).status_code == 404
    assert alice.get(reverse("source_told", args=["coreapi"])).status_code == 404


def test_asking_shows_exactly_what_the_agent_is_given_then_the_ranked_memories(
    alice: Client, memoryos_source, fresh_memoryos: RunningServer
) -> None:
    response = _ask(alice)

    html = page_html(response)
    assert len(_retrievals(fresh_memoryos)) == 1  # the one the person asked for
    served = Api(fresh_memoryos.url).ok(
        external_user_id=identity_for(ALICE).oid,
        query=SEAT_QUESTION,
        agent_id="travel-planner",
        limit=10,
    )
    assert _context(html) == served["system_prompt_addition"] != ""
    text = page_text(response)
    assert "For this question, the top 10 memories" in text
    assert "everything" not in text.split("Show what it is told", 1)[1].casefold()
    first = served["data"][0]
    assert first["id"] in ids("aisle-seats")
    facts = (
        "<div><dt>Category</dt><dd>preference</dd></div>",
        "<div><dt>Importance</dt><dd>8.5</dd></div>",
        "<div><dt>Relevance</dt><dd>0.96</dd></div>",
        "<div><dt>Last used</dt><dd>",
        f"<div><dt>Came from</dt><dd>{first['provenance']['service']}, "
        f"event {first['provenance']['event_id']}, observed <time",
    )
    assert all(fact in html for fact in facts)
    assert "written by" in text
    # The seat conflict is mentioned, never answered here (the seed: no clarification screen).
    assert "An agent will ask you about this in a conversation" in text
    assert "clarifications" not in html and 'name="answer"' not in html
    assert len(_report_forms(html)) == len(served["data"])
    assert "banner" not in html  # a full answer: no banner
    events = AuditEvent.objects.filter(source="memoryos", action="preview")
    assert [(e.agent_name, e.outcome) for e in events] == [("travel-planner", "ok")]


def test_memory_text_and_the_context_are_escaped(
    alice: Client, memoryos_source, fresh_memoryos: RunningServer
) -> None:
    hostile = "Prefers <script>alert(1)</script> aisle seats"
    with emulator(fresh_memoryos).store.db.write() as conn:
        conn.execute(
            "UPDATE memories SET content = ? WHERE id = ?", (hostile, min(ids("aisle-seats")))
        )

    html = page_html(_ask(alice))

    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert hostile in _context(html)


@pytest.mark.parametrize(
    ("key", "state", "words"),
    [
        (DEGRADED_KEY, PreviewState.DEGRADED, "degraded mode"),
        (PASSTHROUGH_KEY, PreviewState.PASSTHROUGH, "passed this question through"),
        (BLOCKED_KEY, PreviewState.BLOCKED, "is blocked"),
    ],
)
def test_a_banner_says_when_memory_is_degraded_passed_through_or_blocked(
    alice: Client, memoryos_source, settings, key: str, state: PreviewState, words: str
) -> None:
    settings.MEMORYOS_API_KEY = key

    response = _ask(alice)

    html = page_html(response)
    assert f'class="told-banner told-{state}" role="status"' in html
    assert NOTICES[state] in page_text(response) and words in NOTICES[state]


def test_this_is_wrong_sends_the_correction_and_says_sent_not_corrected(
    alice: Client, memoryos_source, fresh_memoryos: RunningServer
) -> None:
    form = _report_forms(page_html(_ask(alice)))[0]

    response = alice.post(REPORT, {**form.fields, "correction": "I prefer window seats now."})

    text = page_text(response)
    assert "Sent for correction" in text and "corrected" not in text.casefold()
    assert "I prefer window seats now." in text
    (arrived,) = Api(fresh_memoryos.url).received()
    assert (arrived["outcome"], arrived["correction"]) == (
        "user_corrected",
        "I prefer window seats now.",
    )
    assert arrived["used_memory_ids"] == [form.fields["item"]]
    assert arrived["external_user_id"] == identity_for(ALICE).oid
    (event,) = AuditEvent.objects.filter(source="memoryos", action="report")
    assert (event.agent_name, event.outcome) == ("travel-planner", "ok")


def test_this_is_wrong_needs_csrf(memoryos_source, fresh_memoryos: RunningServer) -> None:
    browser = signed_in(Client(enforce_csrf_checks=True), ALICE)
    assert browser.post(TOLD, {"target": "travel-planner", "question": "q"}).status_code == 403
    form = {"target": "travel-planner", "preview": "x", "item": "y", "correction": "z"}
    assert browser.post(REPORT, form).status_code == 403
    assert _retrievals(fresh_memoryos) == []
    assert Api(fresh_memoryos.url).received() == []


def test_a_correction_is_length_limited_and_kept_when_refused(
    alice: Client, memoryos_source, fresh_memoryos: RunningServer
) -> None:
    form = _report_forms(page_html(_ask(alice)))[0]
    too_long = "w" * (MAX_CORRECTION + 1)

    for correction, status in ((too_long, 400), ("", 400)):
        response = alice.post(REPORT, {**form.fields, "correction": correction})
        assert response.status_code == status
        assert "Sent for correction" not in page_text(response)
    assert textarea(body(response), "correction") == ""
    response = alice.post(REPORT, {**form.fields, "correction": too_long})
    assert textarea(body(response), "correction") == too_long
    assert Api(fresh_memoryos.url).received() == []


def test_only_a_memory_the_person_was_shown_can_be_reported(
    alice: Client, bob: Client, memoryos_source, fresh_memoryos: RunningServer
) -> None:
    form = _report_forms(page_html(_ask(alice)))[0]

    for changed in ({"preview": "made-up"}, {"item": "another-memory"}):
        response = alice.post(REPORT, {**form.fields, **changed, "correction": "true"})
        assert response.status_code == 409
        assert NOT_KEPT in page_text(response)
    # Another person's session never holds alice's answer.
    assert bob.post(REPORT, {**form.fields, "correction": "true"}).status_code == 409
    assert Api(fresh_memoryos.url).received() == []


def test_the_agents_page_says_it_cannot_list_never_nothing(
    alice: Client, memoryos_source, fresh_memoryos: RunningServer
) -> None:
    response = alice.get(reverse("source_target", args=["memoryos"]), {"target": "travel-planner"})

    text = page_text(response)
    assert NO_LIST in text
    assert "keeps nothing" not in text
    assert f'href="{TOLD}?target=travel-planner"' in body(response)
    section = page_text(alice.get(reverse("source_section", args=["memoryos"])))
    assert "Nothing about you" not in section and "keeps nothing" not in section
    assert "What Travel Planner is told about you" in section
    assert _retrievals(fresh_memoryos) == []


def test_export_everything_names_it_among_the_systems_that_cannot_export(
    alice: Client, memoryos_source
) -> None:
    text = page_text(alice.get(reverse("dashboard")))

    assert "Export everything cannot include:" in text
    assert f"{TITLE}: {NO_EXPORT}" in text
    archive = zipfile.ZipFile(
        io.BytesIO(b"".join(alice.get(reverse("export_everything")).streaming_content))
    )
    assert not [name for name in archive.namelist() if name.startswith("memoryos/")]


def test_an_empty_question_is_refused_without_asking(
    alice: Client, memoryos_source, fresh_memoryos: RunningServer
) -> None:
    response = _ask(alice, question="")

    assert response.status_code == 400
    assert "told-context" not in body(response)
    assert _retrievals(fresh_memoryos) == []


def test_a_report_the_service_refuses_keeps_what_the_person_wrote(
    alice: Client, memoryos_source, fresh_memoryos: RunningServer
) -> None:
    form = _report_forms(page_html(_ask(alice)))[0]
    emulator(fresh_memoryos).faults = Faults(error_rate=1.0, error_status=503)

    response = alice.post(REPORT, {**form.fields, "correction": "Window seats, always."})

    emulator(fresh_memoryos).faults = Faults()
    assert response.status_code == 503
    assert "Nothing was sent." in page_text(response)
    assert "Sent for correction" not in page_text(response)
    assert textarea(body(response), "correction") == "Window seats, always."
    assert Api(fresh_memoryos.url).received() == []
    (event,) = AuditEvent.objects.filter(source="memoryos", action="report")
    assert (event.outcome, event.error_status) == ("error", 503)


def test_a_report_whose_answer_was_lost_never_says_nothing_was_sent(
    alice: Client, memoryos_source, fresh_memoryos: RunningServer
) -> None:
    form = _report_forms(page_html(_ask(alice)))[0]
    emulator(fresh_memoryos).faults = Faults(drop_rate=1.0)  # the answer never comes

    response = alice.post(REPORT, {**form.fields, "correction": "Window seats, always."})

    emulator(fresh_memoryos).faults = Faults()
    assert response.status_code == 504
    text = page_text(response)
    assert "We don't know whether it arrived." in text and "Nothing was sent" not in text
    assert textarea(body(response), "correction") == "Window seats, always."


def test_the_contact_set_for_memoryos_is_whom_a_deletion_request_names(
    carol: Client, memoryos_source, settings
) -> None:
    """MEMORYOS_CONTACT: whom to ask for the erasure and export this service cannot do."""
    from tests.views.test_support import start

    settings.MEMORYOS_CONTACT = "the Contoso AI platform team"
    before = page_text(carol.get(start(carol)))
    assert (
        "Not possible: MemoryOS offers no erasure through its API; "
        "ask the Contoso AI platform team." in before
    )
    assert "ask its operator" not in before


def test_supports_overview_says_to_support_why_it_is_not_counted(
    carol: Client, memoryos_source, settings
) -> None:
    """Not the person's sentence ("what it keeps about you", "ask a question"): support
    reads that MemoryOS cannot list a person's memory, and whom to ask."""
    from tests.views.test_support import look_up

    settings.MEMORYOS_CONTACT = "the Contoso AI platform team"
    text = page_text(look_up(carol))

    assert (
        "MemoryOS: MemoryOS cannot list what it keeps about a person: it only answers an "
        "agent's question. Ask the Contoso AI platform team." in text
    )
    assert "keeps about you" not in text and "Ask a question" not in text
