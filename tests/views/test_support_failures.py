"""Support's deletion request when CoreAPI fails: what staff typed comes back, and the
result page's heading says what the clear did, from the outcomes below it."""

from __future__ import annotations

from django.test import Client

from memory_ui.sources.coreapi import CoreAPIUnavailable
from tests.fake_coreapi import FakeCoreAPI
from tests.views.helpers import body, each_failure, fail, field_value, field_values, page_text
from tests.views.test_support import (
    clear,
    export,
    look_up,
    overview,
    request_fields,
    start,
    subject_of,
)

UNAVAILABLE = CoreAPIUnavailable("CoreAPI is unavailable, try again.")


def test_a_request_started_while_coreapi_fails_keeps_the_reason_and_ticket(
    carol: Client, fake: FakeCoreAPI, subtests
):
    # The failures: 5xx and dropped connections (unavailable), 429, a malformed
    # answer (502); and a refusal.
    chosen = {"unavailable", "rate-limited", "unexpected-response", "forbidden"}
    for (failure,) in each_failure():
        if failure.name not in chosen:
            continue
        with subtests.test(failure.name):
            page = look_up(carol)
            requests_url = f"{overview(subject_of(page))}requests"
            fail(fake, "list_agents", failure)
            fields = request_fields(
                field_value(body(page), "nonce"), scopes=["user", "agent:it-helpdesk"]
            )
            response = carol.post(requests_url, fields)
            assert response.status_code == failure.portal_status
            html = body(response)
            assert field_value(html, "reason") == fields["reason"]
            assert field_value(html, "ticket") == fields["ticket"]
            assert field_values(html, "scopes") == ["user", "agent:it-helpdesk"]
            assert "Your deletion request was not started" in page_text(response)
            assert '<button type="submit">Start the deletion request again</button>' in html
            fake.heal()
            # Sent again as it came back, it starts the request.
            again = {n: field_values(html, n) for n in ("nonce", "reason", "ticket", "scopes")}
            started = carol.post(requests_url, again)
            assert started.status_code == 302, page_text(started)


def test_the_result_heading_says_what_the_clear_did(carol: Client, fake: FakeCoreAPI):
    request_url = start(carol, scopes=["user", "agent:it-helpdesk"])
    export(carol, request_url)
    fake.fail("clear_memory", UNAVAILABLE, agent="it-helpdesk")
    partly = page_text(carol.get(clear(carol, request_url)["Location"]))
    assert "Partly cleared: 1 of 2" in partly
    assert "PRIV-1234 · alice@contoso.com: partly cleared: 1 of 2" in partly  # the <h1>


def test_the_result_heading_says_nothing_was_cleared(carol: Client, fake: FakeCoreAPI):
    request_url = start(carol, scopes=["user", "agent:it-helpdesk"])
    export(carol, request_url)
    fake.fail("clear_memory", UNAVAILABLE)
    result = page_text(carol.get(clear(carol, request_url)["Location"]))
    assert "Nothing was cleared" in result
    assert "All 2 cleared" not in result and "Partly" not in result
    fake.heal()
    html = body(carol.get(f"{request_url}result"))
    retry = {name: field_values(html, name) for name in ("nonce", "confirm_upn", "scopes")}
    done = page_text(carol.get(carol.post(f"{request_url}clear", retry)["Location"]))
    assert "All 2 cleared" in done and "Nothing was cleared" not in done


def test_a_memory_written_to_right_after_its_clear_is_not_called_cleared(
    carol: Client, fake: FakeCoreAPI, monkeypatch
):
    """The clear is read back: an agent that writes to a memory between its clear and that
    read leaves it "not cleared", with what the read found, never "All 2 cleared"."""
    request_url = start(carol, scopes=["user", "agent:it-helpdesk"])
    export(carol, request_url)
    clear_memory = fake.clear_memory

    def clear_then_the_agent_writes(auth, scope, **where):
        cleared = clear_memory(auth, scope, **where)
        if scope == "agent":
            fake.put("- Uses the VPN from home.\n", agent="it-helpdesk")
        return cleared

    monkeypatch.setattr(fake, "clear_memory", clear_then_the_agent_writes)
    result = page_text(carol.get(clear(carol, request_url)["Location"]))
    assert "Partly cleared: 1 of 2" in result and "All 2 cleared" not in result
    assert "Read back after the clear, it holds something again" in result
    assert fake.text("it-helpdesk") == "- Uses the VPN from home.\n"
