"""The shared Microsoft Graph look-up (`memory_ui.directory`), against a local stand-in for
Graph (the devstack IdP's Graph is tested in tests/devstack and tests/integration): an
answer is kept a while, not for ever (a UPN can pass to another account), and an answer
that is not Graph's is "try again", never a crash."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from devstack.serve import start_in_thread
from memory_ui import directory
from memory_ui.directory import Directory, DirectoryUnavailable


class Graph:
    """Answers `GET /v1.0/users/{upn}` with `body`, counting the calls."""

    def __init__(self) -> None:
        self.body = json.dumps({"id": "a11ce000-0000-4000-8000-000000000001"}).encode()
        self.calls = 0

    def __call__(self, environ, start_response):
        self.calls += 1
        start_response("200 OK", [("Content-Type", "application/json")])
        return [self.body]


@pytest.fixture
def graph() -> Iterator[tuple[Graph, str]]:
    app = Graph()
    server = start_in_thread(app)
    yield app, server.url
    server.stop()


def test_an_answer_is_kept_a_while_then_asked_again(graph, monkeypatch) -> None:
    app, url = graph
    lookup = Directory(url, lambda: "token")

    assert lookup.object_id("alice@contoso.com") == "a11ce000-0000-4000-8000-000000000001"
    assert lookup.object_id("Alice@Contoso.com") == "a11ce000-0000-4000-8000-000000000001"
    assert app.calls == 1

    app.body = json.dumps({"id": "0a1ce2d0-0000-4000-8000-000000000009"}).encode()
    monkeypatch.setattr(directory, "KNOWN_SECONDS", 0.0)  # the account behind the UPN changed
    assert lookup.object_id("alice@contoso.com") == "0a1ce2d0-0000-4000-8000-000000000009"
    assert app.calls == 2


@pytest.mark.parametrize(
    "body",
    [b"<html>Sign in</html>", b'{"displayName": "Alice"}', b"[]", b'{"id": null}', b'{"id": "x"}'],
)
def test_an_answer_that_is_not_graphs_is_try_again(graph, body: bytes) -> None:
    app, url = graph
    app.body = body

    with pytest.raises(DirectoryUnavailable, match="try again later"):
        Directory(url, lambda: "token").object_id("alice@contoso.com")
