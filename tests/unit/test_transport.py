"""memory_ui.transport: the HTTP mechanics both outbound clients share.

The clients' own tests (test_coreapi_client.py, integration/test_legacy_client.py) cover
the behaviour end to end; these pin the shared pieces, with `send` callables standing in
for an HTTP exchange (the loop's contract does not depend on a server).
"""

from __future__ import annotations

import pytest
import requests
from urllib3.exceptions import NewConnectionError

from memory_ui.sources.legacy.client import LegacyStoresClient
from memory_ui.transport import (
    MIN_ATTEMPT_SECONDS,
    exchange,
    is_transient,
    may_have_arrived,
    timeout_within,
)


class Outcome(Exception):
    def __init__(self, kind: str, exc: requests.RequestException) -> None:
        super().__init__(kind)
        self.kind = kind
        self.exc = exc


def _response(status: int) -> requests.Response:
    response = requests.Response()
    response.status_code = status
    return response


def _run(outcomes: list, *, retries: int, write: bool) -> tuple[object, list[int], list[int]]:
    """exchange() over a scripted list of responses and exceptions: what it returned or
    raised, the attempts sent and the pauses taken."""
    sent: list[int] = []
    paused: list[int] = []

    def send(attempt: int) -> requests.Response:
        sent.append(attempt)
        outcome = outcomes[attempt - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return _response(outcome)

    try:
        result: object = exchange(
            send,
            retries=retries,
            write=write,
            outcome_unknown=lambda exc: Outcome("unknown", exc),
            unavailable=lambda exc: Outcome("unavailable", exc),
            pause=paused.append,
        )
    except Outcome as exc:
        result = exc
    return result, sent, paused


def _refused() -> requests.ConnectionError:
    return requests.ConnectionError(NewConnectionError(None, "refused"))


def test_the_legacy_client_reads_the_environment_once_too(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "")
    client = LegacyStoresClient("https://stores.example", lambda: "token")
    assert client._session.proxies.get("https") == "http://proxy.example:3128"
    assert client._session.trust_env is False
    monkeypatch.setenv("NO_PROXY", "stores.example")
    assert LegacyStoresClient("https://stores.example", lambda: "t")._session.proxies == {}


def test_timeouts_are_cut_to_the_deadline_and_refused_near_it():
    assert timeout_within((3.05, 10.0), None) == (3.05, 10.0)
    assert timeout_within((3.05, 10.0), 5.0) == (3.05, 5.0)
    assert timeout_within((3.05, 10.0), 1.0) == (1.0, 1.0)
    assert timeout_within((3.05, 10.0), MIN_ATTEMPT_SECONDS - 0.01) is None


def test_a_read_is_retried_on_502_to_504_and_returns_the_first_other_answer():
    result, sent, paused = _run([503, 502, 200], retries=2, write=False)
    assert isinstance(result, requests.Response) and result.status_code == 200
    assert sent == [1, 2, 3] and paused == [1, 2]


def test_the_last_answer_is_returned_when_retries_are_spent():
    result, sent, _ = _run([503, 503, 503, 200], retries=2, write=False)
    assert isinstance(result, requests.Response) and result.status_code == 503
    assert sent == [1, 2, 3]


def test_a_404_is_not_retried():
    result, sent, paused = _run([404, 200], retries=2, write=False)
    assert isinstance(result, requests.Response) and result.status_code == 404
    assert sent == [1] and paused == []


def test_a_read_timeout_is_unavailable_at_once():
    result, sent, _ = _run([requests.exceptions.ReadTimeout(), 200], retries=2, write=False)
    assert isinstance(result, Outcome) and result.kind == "unavailable"
    assert sent == [1]


def test_a_write_that_may_have_arrived_is_outcome_unknown():
    result, sent, _ = _run([requests.exceptions.ReadTimeout(), 200], retries=0, write=True)
    assert isinstance(result, Outcome) and result.kind == "unknown"
    assert isinstance(result.exc, requests.exceptions.ReadTimeout)
    assert sent == [1]  # never resent: it may have been applied


def test_a_write_that_could_not_connect_is_unavailable():
    result, _, _ = _run([_refused()], retries=0, write=True)
    assert isinstance(result, Outcome) and result.kind == "unavailable"


@pytest.mark.parametrize(
    ("exc", "arrived", "transient"),
    [
        (requests.exceptions.ConnectTimeout(), False, True),
        (requests.exceptions.SSLError(), False, False),
        (requests.exceptions.ReadTimeout(), True, False),
        (requests.exceptions.ChunkedEncodingError(), True, True),
        (requests.ConnectionError(ConnectionResetError()), True, True),
    ],
)
def test_failures_are_classified(exc, arrived, transient):
    assert may_have_arrived(exc) is arrived
    assert is_transient(exc) is transient
