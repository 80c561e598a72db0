"""memory_ui.sources.legacy's client against the legacy store emulator over HTTP, with the token
the portal gets by client credentials from the devstack IdP (memory_ui.auth)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from devstack import legacy as legacy_module
from devstack.coreapi.faults import Faults
from devstack.serve import RunningServer
from memory_ui import auth
from memory_ui.sources.legacy import (
    LegacyBadRequest,
    LegacyConflict,
    LegacyForbidden,
    LegacyNotFound,
    LegacyOutcomeUnknown,
    LegacyUnauthorized,
    LegacyUnavailable,
    scope_for,
)
from memory_ui.sources.legacy.client import LegacyStoresClient, client_from_settings
from tests.stack import free_port

TRAVEL = "main.agents.travel_planner_memory"
HELPDESK = "main.agents.it_helpdesk_memory"
BENEFITS = "main.agents.benefits_assistant_memory"
FINANCE = "main.finance.finance_insights_memory"
ALICE = "alice@contoso.com"


class CountingSession(requests.Session):
    """Counts what is actually sent, to show which calls are retried."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        self.sent.append(str(method))
        return super().request(method, url, *args, **kwargs)


@pytest.fixture
def session() -> Iterator[CountingSession]:
    with CountingSession() as counting:
        yield counting


@pytest.fixture
def client(
    settings, portal_identity, fresh_legacy: RunningServer, session: CountingSession
) -> LegacyStoresClient:
    settings.LEGACY_STORES_BASE_URL = fresh_legacy.url
    made = client_from_settings(settings, auth.legacy_app_token)
    assert made is not None
    # The same configuration over a session that counts attempts, with quick backoff.
    return LegacyStoresClient(
        fresh_legacy.url, auth.legacy_app_token, session=session, backoff=0.01
    )


def test_off_unless_a_base_url_is_configured(settings) -> None:
    settings.LEGACY_STORES_BASE_URL = ""

    assert client_from_settings(settings, lambda: "unused") is None


def test_stores_listed_and_fetched_with_the_portal_token(client: LegacyStoresClient) -> None:
    page = client.list_stores("main", "agents")

    assert [s.full_name for s in page.items] == sorted([TRAVEL, HELPDESK, BENEFITS])
    assert page.next_page_token is None
    store = client.get_store(TRAVEL)
    assert (store.catalog_name, store.schema_name, store.name) == tuple(TRAVEL.split("."))
    assert store.created_at.year == 2026


def test_entries_paged_and_typed(client: LegacyStoresClient) -> None:
    scope = scope_for("{upn}", upn=ALICE, oid="unused")
    first = client.list_entries(TRAVEL, scope, page_size=2)
    rest = client.list_entries(TRAVEL, scope, page_size=2, page_token=first.next_page_token)

    paths = [e.path for e in first.items + rest.items]
    assert paths == [
        "/memories/preferences.md",
        "/memories/profile.md",
        "/memories/trips/2026-06-berlin.md",
    ]
    assert rest.next_page_token is None
    assert all(e.contents is None and e.has_contents for e in first.items)
    entry = client.get_entry(TRAVEL, scope, "/memories/preferences.md")
    assert entry.contents is not None and "aisle seats" in entry.contents
    assert entry.store == TRAVEL and entry.scope == ALICE
    assert entry.update_time.tzinfo is not None


def test_search(client: LegacyStoresClient) -> None:
    found = client.search(TRAVEL, ALICE, "berlin hotel", top_k=5)

    assert found[0].path == "/memories/trips/2026-06-berlin.md"
    assert found[0].score == 2
    with pytest.raises(ValueError, match="top_k"):
        client.search(TRAVEL, ALICE, "x", top_k=51)  # refused before sending


def test_every_write_form_round_trips(client: LegacyStoresClient) -> None:
    path = "/memories/notes.md"
    created = client.create_entry(HELPDESK, ALICE, path, "one\ntwo\n", "notes")
    assert created.contents == "one\ntwo\n"

    assert client.str_replace(HELPDESK, ALICE, path, "two", "2").contents == "one\n2\n"
    assert client.insert(HELPDESK, ALICE, path, "zero", insert_line=0).contents == (
        "zero\none\n2\n"
    )
    assert client.insert(HELPDESK, ALICE, path, "end").contents == "zero\none\n2\nend"
    replaced = client.replace_all(HELPDESK, ALICE, path, "fresh", description="new")
    assert (replaced.contents, replaced.description) == ("fresh", "new")

    client.delete_entry(HELPDESK, ALICE, path)
    with pytest.raises(LegacyNotFound) as missing:
        client.get_entry(HELPDESK, ALICE, path)
    assert missing.value.error_code == "RESOURCE_DOES_NOT_EXIST"


def test_store_refusals_map_onto_the_hierarchy(client: LegacyStoresClient) -> None:
    with pytest.raises(LegacyConflict) as exists:
        client.create_entry(TRAVEL, ALICE, "/memories/preferences.md", "x")
    assert exists.value.error_code == "RESOURCE_ALREADY_EXISTS"
    assert exists.value.portal_status == 409

    with pytest.raises(LegacyBadRequest) as twice:
        client.str_replace(TRAVEL, ALICE, "/memories/preferences.md", "- ", "* ")
    assert twice.value.error_code == "INVALID_PARAMETER_VALUE"
    assert "2 times" in (twice.value.detail or "")
    # The user-facing message is fixed text, never the store's (it may quote memory).
    assert "- " not in twice.value.message

    with pytest.raises(LegacyForbidden) as read_only:
        client.replace_all(BENEFITS, ALICE, "/memories/enrolment.md", "x")
    assert read_only.value.error_code == "PERMISSION_DENIED"
    with pytest.raises(LegacyForbidden):
        client.get_store(FINANCE)
    with pytest.raises(LegacyNotFound):
        client.get_store("main.agents.nope")


def test_a_refused_token_is_unauthorized(fresh_legacy: RunningServer) -> None:
    stranger = LegacyStoresClient(fresh_legacy.url, lambda: "not-a-token")

    with pytest.raises(LegacyUnauthorized) as refused:
        stranger.get_store(TRAVEL)
    assert refused.value.error_code == "UNAUTHENTICATED"
    assert refused.value.__cause__ is None  # an answer, not a transport failure


def test_reads_are_retried_and_writes_are_not(
    client: LegacyStoresClient, fresh_legacy: RunningServer, session: CountingSession
) -> None:
    legacy_module.emulator(fresh_legacy).faults = Faults(error_rate=1.0, error_status=503)

    with pytest.raises(LegacyUnavailable) as read:
        client.get_entry(TRAVEL, ALICE, "/memories/preferences.md")
    assert read.value.status == 503
    assert session.sent == ["GET", "GET", "GET"]  # 1 + LEGACY_STORES_GET_RETRIES

    session.sent.clear()
    with pytest.raises(LegacyUnavailable):
        client.insert(TRAVEL, ALICE, "/memories/preferences.md", "once")
    assert session.sent == ["PATCH"]


def test_a_dropped_write_is_outcome_unknown(
    client: LegacyStoresClient, fresh_legacy: RunningServer, session: CountingSession
) -> None:
    legacy_module.emulator(fresh_legacy).faults = Faults(drop_rate=1.0)

    with pytest.raises(LegacyOutcomeUnknown) as unknown:
        client.create_entry(TRAVEL, ALICE, "/memories/new.md", "x")
    assert isinstance(unknown.value.__cause__, requests.RequestException)
    assert session.sent == ["POST"]


def test_nothing_listening_is_unavailable_after_retries() -> None:
    with CountingSession() as counting:
        down = LegacyStoresClient(
            f"http://127.0.0.1:{free_port()}", lambda: "t", session=counting, backoff=0.01
        )
        with pytest.raises(LegacyUnavailable) as failed:
            down.list_entries(TRAVEL, ALICE)
    assert isinstance(failed.value.__cause__, requests.ConnectionError)
    assert len(counting.sent) == 3


def test_no_call_is_started_without_time_left(fresh_legacy: RunningServer) -> None:
    with CountingSession() as counting:
        hurried = LegacyStoresClient(
            fresh_legacy.url, lambda: "t", session=counting, remaining=lambda: 0.1
        )
        with pytest.raises(LegacyUnavailable):
            hurried.get_store(TRAVEL)
    assert counting.sent == []


def test_timeouts_are_shortened_to_the_deadline(fresh_legacy: RunningServer) -> None:
    legacy_module.emulator(fresh_legacy).faults = Faults(latency_ms=3000)
    with CountingSession() as counting:
        hurried = LegacyStoresClient(
            fresh_legacy.url, lambda: "t", session=counting, remaining=lambda: 0.5
        )
        with pytest.raises(LegacyUnavailable) as slow:
            hurried.get_store(TRAVEL)
    assert slow.value.detail == "ReadTimeout"
    assert counting.sent == ["GET"]  # a read timeout is not retried
