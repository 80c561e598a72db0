"""CoreAPI failures as users meet them: each card or page says what happened, in place.

The faults come from the real emulator's switches (devstack/coreapi/faults.py); nothing is
mocked. Each test resets the switches it touched.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from django.core.cache import cache
from django.test import Client

from devstack import coreapi as coreapi_module
from devstack import idp as idp_module
from devstack.coreapi.app import emulator
from devstack.coreapi.faults import Faults
from memory_ui.sources.coreapi import Agent
from memory_ui.sources.coreapi import client as coreapi_client

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def faults(coreapi) -> Iterator[Faults]:
    app = emulator(coreapi)
    app.faults = Faults()
    yield app.faults
    app.faults = Faults()


def _fresh_client(settings, **overrides) -> None:
    for name, value in overrides.items():
        setattr(settings, name, value)
    coreapi_client.get_client.cache_clear()


def test_throttled_agent_card_says_when_to_retry_and_others_load(alice: Client, faults: Faults):
    faults.path_regex = "agents/travel-planner"
    faults.throttle_rate = 1.0
    faults.retry_after_seconds = 7
    card = alice.get("/cards/agents/travel-planner", **HTMX)
    html = card.content.decode()
    assert card.status_code == 429
    assert "CoreAPI is busy; try again in 7 s." in html
    assert 'hx-get="/cards/agents/travel-planner"' in html  # the Retry button
    assert "Retry</button>" in html
    assert alice.get("/cards/agents/benefits-assistant", **HTMX).status_code == 200
    faults.throttle_rate = 0.0
    retried = alice.get("/cards/agents/travel-planner", **HTMX)
    assert retried.status_code == 200
    assert "Entries</dt><dd>2</dd>" in retried.content.decode()


@pytest.mark.parametrize("status", [500, 503])
def test_server_errors_say_coreapi_is_unavailable(
    alice: Client, faults: Faults, status: int, settings
):
    _fresh_client(settings, COREAPI_GET_RETRIES=0)
    faults.path_regex = "scope=user"
    faults.error_rate = 1.0
    faults.error_status = status
    card = alice.get("/cards/user", **HTMX)
    assert card.status_code == 503
    assert "CoreAPI is unavailable, try again." in card.content.decode()
    page = alice.get("/memory/user")
    assert page.status_code == 503
    assert "CoreAPI is unavailable, try again." in page.content.decode()
    assert "Traceback" not in page.content.decode()


def test_transient_errors_are_retried_for_reads(alice: Client, faults: Faults, settings):
    """Half the reads fail; with retries the user still gets the page (seeded draws)."""
    _fresh_client(settings, COREAPI_GET_RETRIES=6)
    faults.error_rate = 0.5
    faults.error_status = 503
    faults.rng.seed(1234)
    for _ in range(5):
        assert alice.get("/cards/user", **HTMX).status_code == 200


@pytest.mark.parametrize(
    ("client_settings", "fault", "card_url"),
    [
        pytest.param(
            {"COREAPI_READ_TIMEOUT": 0.3},
            {"path_regex": "agents/it-helpdesk", "latency_ms": 2000},
            "/cards/agents/it-helpdesk",
            id="timeout",
        ),
        pytest.param(
            {},
            {"path_regex": "scope=user", "drop_rate": 1.0},
            "/cards/user",
            id="dropped-connection",
        ),
    ],
)
def test_no_answer_says_coreapi_is_unavailable(
    alice: Client, faults: Faults, settings, client_settings, fault, card_url
):
    _fresh_client(settings, COREAPI_GET_RETRIES=0, **client_settings)
    for name, value in fault.items():
        setattr(faults, name, value)
    card = alice.get(card_url, **HTMX)
    assert card.status_code == 503
    assert "CoreAPI is unavailable, try again." in card.content.decode()


def test_agent_list_failure_keeps_the_page_usable(alice: Client, faults: Faults, settings):
    cache.clear()  # the agent list was cached at sign-in's first page load
    _fresh_client(settings, COREAPI_GET_RETRIES=0)
    faults.path_regex = "completions/agents"
    faults.error_rate = 1.0
    page = alice.get("/")
    html = page.content.decode()
    assert page.status_code == 503
    assert "We couldn't load your agents." in html
    assert 'hx-get="/cards/user"' in html  # user memory still loads
    assert "Try again" in html


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_coreapi_down(alice: Client, settings):
    cache.clear()
    _fresh_client(
        settings, COREAPI_BASE_URL=f"http://127.0.0.1:{_closed_port()}", COREAPI_GET_RETRIES=0
    )
    page = alice.get("/")
    assert page.status_code == 503
    assert "CoreAPI is unavailable, try again." in page.content.decode()
    memory = alice.get("/memory/user")
    assert memory.status_code == 503
    assert "CoreAPI is unavailable, try again." in memory.content.decode()


def test_wrong_instance_id_is_no_access(alice: Client, settings):
    """CoreAPI answers 403 in plain text (`Access denied. Invalid instance ID.`)."""
    cache.clear()
    _fresh_client(settings, COREAPI_INSTANCE_ID="11111111-1111-1111-1111-111111111111")
    card = alice.get("/cards/user", **HTMX)
    assert card.status_code == 403
    assert "You do not have access to this memory." in card.content.decode()


def test_agent_gone_since_the_list_was_cached_is_not_found(alice: Client, demo):
    """A stale agent list (an agent deleted meanwhile) reaches CoreAPI's 404."""
    key = f"agents:{demo.user('alice@contoso.com').oid}"
    ghost = Agent(
        name="retired-agent",
        object_id=f"/instances/{demo.instance_id}/providers/FoundationaLLM.Agent/agents/retired-agent",
        display_name="Retired Agent",
        description="",
        roles=("Reader",),
        enabled=True,
    )
    cache.set(key, [ghost], 60)
    card = alice.get("/cards/agents/retired-agent", **HTMX)
    assert card.status_code == 404
    assert "CoreAPI could not find this agent or memory." in card.content.decode()


def test_coreapi_rejecting_the_token_asks_to_sign_in_again(alice: Client, settings, tmp_path):
    """An emulator that trusts a different IdP refuses the portal's token with 401."""
    other_idp = idp_module.start(home=tmp_path / "other")
    other_coreapi = coreapi_module.start(
        home=tmp_path / "other", idp_url=other_idp.url, ca_file=tmp_path / "other" / "ca.pem"
    )
    try:
        _fresh_client(settings, COREAPI_BASE_URL=other_coreapi.url)
        page = alice.get("/memory/user")
        html = page.content.decode()
        assert page.status_code == 401
        assert "Your session with CoreAPI has expired; sign in again." in html
        assert "Sign in again</a>" in html
    finally:
        other_coreapi.stop()
        other_idp.stop()
