"""memory_ui.sources.coreapi: error parsing, typed results, and the transport under faults.

The real devstack emulator (integration tests) covers the CoreAPI contract. The scripted
server here exists only to produce exact transport faults in isolation: a 503 before a
200, a response slower than the read timeout, a dropped connection, a TLS certificate
only the devstack CA vouches for.
"""

from __future__ import annotations

import json
import logging
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest
import requests

from devstack.pki import Pki
from memory_ui import budget
from memory_ui.sources.coreapi import (
    Agent,
    CallerAuth,
    CoreAPIBadRequest,
    CoreAPIConflict,
    CoreAPIError,
    CoreAPIForbidden,
    CoreAPINotFound,
    CoreAPIOutcomeUnknown,
    CoreAPIPreconditionFailed,
    CoreAPIRateLimited,
    CoreAPIRejected,
    CoreAPIRequestTooLarge,
    CoreAPIUnauthorized,
    CoreAPIUnavailable,
    CoreAPIUnexpectedResponse,
    Memory,
    UserIdentity,
    agent_object_id,
    parse_agents,
    parse_error_response,
)
from memory_ui.sources.coreapi.client import CoreAPIClient, client_from_settings
from memory_ui.sources.coreapi.types import memory_from_json

INSTANCE = "00000000-0000-0000-0000-000000000000"
BENEFITS = f"/instances/{INSTANCE}/providers/FoundationaLLM.Agent/agents/benefits-assistant"
TOKEN = "eyJ.alice-token.sig"
ALICE = CallerAuth(TOKEN)
CAROL_FOR_ALICE = CallerAuth(
    "eyJ.app-token.sig",
    UserIdentity(
        name="Alice Example",
        user_name="alice@contoso.com",
        user_id="11111111-1111-1111-1111-111111111111",
        upn="alice@contoso.com",
        group_ids=("g1", "g2"),
    ),
)
MEMORY_JSON = {
    "scope": "user",
    "upn": "alice@contoso.com",
    "user_name": "alice@contoso.com",
    "name": "Alice Example",
    "agent_object_id": None,
    "agent_name": None,
    "content_markdown": "# User memory\n\n- Prefers concise answers\n",
    "created_on": "2026-07-19T12:00:00+00:00",
    "updated_on": "2026-07-19T12:05:00+00:00",
}
PROBLEM = {"content-type": "application/problem+json"}

ClientCall = Callable[[CoreAPIClient], object]


def problem(status: int, **extra: object) -> bytes:
    return json.dumps(
        {"type": "https://tools.ietf.org/html/rfc9110", "status": status, **extra}
    ).encode()


# Error bodies


def test_problem_details_keep_coreapi_words_for_logs_only() -> None:
    body = problem(403, title="Forbidden", detail="No access to agent x.", traceId="00-abc-01")

    error = parse_error_response(403, PROBLEM, body, correlation_id="c1")

    assert isinstance(error, CoreAPIForbidden)
    assert error.status == 403
    assert error.message == "You do not have access to this memory."
    assert str(error) == error.message
    assert (error.title, error.detail, error.trace_id) == (
        "Forbidden",
        "No access to agent x.",
        "00-abc-01",
    )
    assert error.correlation_id == "c1"


def test_validation_problem_details_join_the_field_messages() -> None:
    body = problem(
        400,
        title="One or more validation errors occurred.",
        errors={"scope": ["Invalid scope."], "content_markdown": ["Must not be empty."]},
    )

    error = parse_error_response(400, {"Content-Type": "application/json"}, body)

    assert isinstance(error, CoreAPIBadRequest)
    assert error.errors == {"scope": ["Invalid scope."], "content_markdown": ["Must not be empty."]}
    assert error.message == "CoreAPI rejected the request: Invalid scope.; Must not be empty."


def test_problem_details_without_content_type_are_still_read() -> None:
    error = parse_error_response(400, {}, problem(400, title="Bad Request", detail="confirm"))

    assert error.message == "CoreAPI rejected the request: confirm"


def test_plain_text_403_from_a_wrong_instance_id() -> None:
    error = parse_error_response(
        403, {"Content-Type": "text/plain"}, b"Access denied. Invalid instance ID."
    )

    assert isinstance(error, CoreAPIForbidden)
    assert error.detail == "Access denied. Invalid instance ID."
    assert error.message == "You do not have access to this memory."


def test_plain_text_400_explains_itself() -> None:
    error = parse_error_response(400, {"Content-Type": "text/plain"}, b"Invalid import mode.\n")

    assert error.message == "CoreAPI rejected the request: Invalid import mode."


def test_quota_body_gives_retry_after() -> None:
    body = json.dumps(
        {
            "quota_name": "memory-writes",
            "quota_context": "alice@contoso.com",
            "quota_exceeded": True,
            "time_until_retry_seconds": 29.2,
        }
    ).encode()

    error = parse_error_response(429, {"Content-Type": "application/json"}, body)

    assert isinstance(error, CoreAPIRateLimited)
    assert error.retry_after == 30
    assert error.title == "Quota exceeded: memory-writes"
    assert error.message == "CoreAPI is busy; try again in 30 s."


def test_retry_after_header_seconds_win_over_the_quota_body() -> None:
    body = json.dumps({"quota_name": "q", "time_until_retry_seconds": 30}).encode()

    error = parse_error_response(429, {"retry-after": "7"}, body)

    assert error.retry_after == 7
    assert error.message == "CoreAPI is busy; try again in 7 s."


def test_retry_after_header_as_http_date() -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)

    error = parse_error_response(429, {"Retry-After": when}, b"")

    assert error.retry_after is not None
    assert 100 <= error.retry_after <= 121


def test_retry_after_in_the_past_is_now() -> None:
    error = parse_error_response(429, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, b"")

    assert error.retry_after == 0
    assert error.message == "CoreAPI is busy; try again in 1 s."


def test_unreadable_retry_after_falls_back_to_the_body_or_nothing() -> None:
    quota = json.dumps({"quota_name": "q", "time_until_retry_seconds": 12}).encode()

    assert parse_error_response(429, {"Retry-After": "soon"}, quota).retry_after == 12
    error = parse_error_response(429, {"Retry-After": "soon"}, b"")
    assert error.retry_after is None
    assert error.message == "CoreAPI is busy; try again shortly."


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (400, CoreAPIBadRequest),
        (401, CoreAPIUnauthorized),
        (403, CoreAPIForbidden),
        (404, CoreAPINotFound),
        (409, CoreAPIConflict),
        (429, CoreAPIRateLimited),
        (413, CoreAPIRequestTooLarge),
        (422, CoreAPIRejected),
        (500, CoreAPIUnavailable),
        (502, CoreAPIUnavailable),
        (503, CoreAPIUnavailable),
        (504, CoreAPIUnavailable),
        (302, CoreAPIUnexpectedResponse),
    ],
)
def test_status_maps_to_one_exception_class(status: int, error_class: type[CoreAPIError]) -> None:
    error = parse_error_response(status, {}, b"")

    assert type(error) is error_class
    assert error.status == status
    assert error.message


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (401, "Your session with CoreAPI has expired; sign in again."),
        (404, "CoreAPI could not find this agent or memory."),
        (409, "The memory was changed elsewhere; reload it and try again."),
        (500, "CoreAPI is unavailable, try again."),
        (422, "CoreAPI refused the request (HTTP 422)."),
        (400, "CoreAPI rejected the request."),
    ],
)
def test_messages_for_empty_bodies(status: int, message: str) -> None:
    assert parse_error_response(status, {}, b"  ").message == message


@pytest.mark.parametrize(
    ("headers", "body"),
    [
        ({"Content-Type": "text/html"}, b"<html><body><h1>502 Bad Gateway</h1></body></html>"),
        ({}, b"<!DOCTYPE html><html><script>alert(1)</script></html>"),
        ({"Content-Type": "text/plain"}, b"<?xml version='1.0'?><Error>gateway</Error>"),
    ],
)
@pytest.mark.parametrize("status", [400, 403, 502])
def test_markup_from_proxies_never_reaches_the_message(
    status: int, headers: dict[str, str], body: bytes
) -> None:
    error = parse_error_response(status, headers, body)

    assert "<" not in error.message
    assert error.detail == ""
    assert error.title == ""


@pytest.mark.parametrize(
    "body", [b'{"title": "Bad', b"[1, 2]", b'"just a string"', b"\xff\xfe{not json}"]
)
def test_invalid_or_odd_json_gives_a_generic_message(body: bytes) -> None:
    error = parse_error_response(400, {"Content-Type": "application/json"}, body)

    assert isinstance(error, CoreAPIBadRequest)
    assert error.message == "CoreAPI rejected the request."


def test_huge_plain_text_is_truncated() -> None:
    error = parse_error_response(400, {"Content-Type": "text/plain"}, b"x" * 5_000_000)

    assert len(error.message) < 400
    assert len(error.detail) <= 1000


def test_huge_json_is_not_parsed() -> None:
    body = problem(400, title="t", detail="d" * 2_000_000)

    error = parse_error_response(400, PROBLEM, body)

    assert error.message == "CoreAPI rejected the request."


def test_long_problem_detail_is_clipped_in_the_message() -> None:
    error = parse_error_response(400, PROBLEM, problem(400, detail="word " * 1000))

    assert len(error.message) < 400
    assert error.message.endswith("…")


def test_unexpected_response_is_a_kind_of_unavailable() -> None:
    assert issubclass(CoreAPIUnexpectedResponse, CoreAPIUnavailable)
    assert issubclass(CoreAPIUnavailable, CoreAPIError)


# Typed results


def test_memory_from_the_contract_example() -> None:
    memory = memory_from_json(MEMORY_JSON)

    assert memory.scope == "user"
    assert memory.upn == "alice@contoso.com"
    assert memory.name == "Alice Example"
    assert memory.agent_object_id is None
    assert memory.content_markdown.startswith("# User memory")
    assert memory.created_on == datetime(2026, 7, 19, 12, 0, tzinfo=UTC)
    assert memory.updated_on == datetime(2026, 7, 19, 12, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-07-19T12:05:00Z", datetime(2026, 7, 19, 12, 5, tzinfo=UTC)),
        ("2026-07-19T12:05:00.1234567Z", datetime(2026, 7, 19, 12, 5, 0, 123456, tzinfo=UTC)),
        ("2026-07-19T12:05:00.5+00:00", datetime(2026, 7, 19, 12, 5, 0, 500000, tzinfo=UTC)),
        ("2026-07-19T14:05:00+02:00", datetime(2026, 7, 19, 12, 5, tzinfo=UTC)),
        ("2026-07-19T12:05:00", datetime(2026, 7, 19, 12, 5, tzinfo=UTC)),
        ("yesterday", None),
        ("", None),
        (1752926700, None),
        (None, None),
    ],
)
def test_memory_dates_are_parsed_tolerantly(raw: object, expected: datetime | None) -> None:
    memory = memory_from_json({**MEMORY_JSON, "updated_on": raw})

    assert memory.updated_on == expected


def test_memory_tolerates_missing_null_and_extra_fields() -> None:
    memory = memory_from_json({"content_markdown": None, "upn": 42, "etag": "x", "extra": {}})

    assert memory == Memory(scope="", upn="", content_markdown="")


@pytest.mark.parametrize("data", [[], "text", None, {"scope": "user"}, {"content_markdown": ["a"]}])
def test_memory_of_the_wrong_shape_is_refused(data: object) -> None:
    with pytest.raises(ValueError, match="MemoryResponse"):
        memory_from_json(data)


def agent_element(name: str, **resource: object) -> dict[str, object]:
    return {
        "resource": {
            "type": "generic-agent",
            "name": name,
            "object_id": f"/instances/{INSTANCE}/providers/FoundationaLLM.Agent/agents/{name}",
            "display_name": f"{name} display",
            "description": f"About {name}",
            "inline_context": False,
            **resource,
        },
        "roles": ["Reader"],
        "actions": [],
        "properties": {"enabled": True},
    }


def test_agents_are_parsed_and_sorted_by_name() -> None:
    agents = parse_agents(
        [agent_element("travel-planner"), agent_element("benefits-assistant"), agent_element("IT")]
    )

    assert [agent.name for agent in agents] == ["benefits-assistant", "IT", "travel-planner"]
    assert agents[0] == Agent(
        name="benefits-assistant",
        object_id=BENEFITS,
        display_name="benefits-assistant display",
        description="About benefits-assistant",
        roles=("Reader",),
        enabled=True,
    )


def test_agent_fields_fall_back() -> None:
    element = agent_element("it-helpdesk", display_name=None, description=None)
    element["roles"] = ["Owner", 7, None]
    element["properties"] = None

    (agent,) = parse_agents([element])

    assert agent.display_name == "it-helpdesk"
    assert agent.description == ""
    assert agent.roles == ("Owner",)
    assert agent.enabled is True


def test_disabled_agent_is_kept_with_its_flag() -> None:
    element = agent_element("it-helpdesk")
    element["properties"] = {"enabled": False}

    assert parse_agents([element])[0].enabled is False


def test_elements_that_are_not_agents_are_skipped() -> None:
    prompt = agent_element(
        "p", object_id=f"/instances/{INSTANCE}/providers/FoundationaLLM.Prompt/prompts/p"
    )
    listing = [
        agent_element("travel-planner"),
        prompt,
        agent_element("", object_id=BENEFITS),
        {"resource": "benefits-assistant"},
        {"roles": ["Reader"]},
        "benefits-assistant",
        None,
    ]

    assert [agent.name for agent in parse_agents(listing)] == ["travel-planner"]


def test_agents_listing_must_be_an_array() -> None:
    with pytest.raises(ValueError, match="array"):
        parse_agents({"value": []})


def test_user_identity_header_has_exactly_the_coreapi_keys() -> None:
    identity = CAROL_FOR_ALICE.user_identity
    assert identity is not None

    decoded = json.loads(identity.to_header())

    assert list(decoded) == ["name", "user_name", "user_id", "upn", "group_ids"]
    assert decoded == {
        "name": "Alice Example",
        "user_name": "alice@contoso.com",
        "user_id": "11111111-1111-1111-1111-111111111111",
        "upn": "alice@contoso.com",
        "group_ids": ["g1", "g2"],
    }


def test_user_identity_header_is_ascii_even_for_non_ascii_names() -> None:
    header = UserIdentity("Zoë\r\nX: y", "zoe@contoso.com", "id", "zoe@contoso.com").to_header()

    assert header.isascii()
    assert "\r" not in header
    assert "\n" not in header
    assert json.loads(header)["name"] == "Zoë\r\nX: y"


def test_caller_auth_repr_hides_the_token() -> None:
    assert TOKEN not in repr(ALICE)


def test_agent_object_id_helper() -> None:
    assert agent_object_id(INSTANCE, "benefits-assistant") == BENEFITS
    with pytest.raises(ValueError, match="agent name"):
        agent_object_id(INSTANCE, "../prompts/x")


# The scripted server


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering, cut short at teardown


CLOSE = Reply(status=0)  # drop the connection without answering


def json_reply(data: object, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    headers = {"Content-Type": "application/json", **(headers or {})}
    return Reply(status, json.dumps(data).encode(), headers)


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes
    client_port: int

    def json(self) -> object:
        return json.loads(self.body)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, so connection reuse is observable
    server: _HTTPServer

    def do_GET(self) -> None:
        self.server.scripted.answer(self)

    do_POST = do_GET

    def log_message(self, format: str, *args: object) -> None:
        pass


class _HTTPServer(ThreadingHTTPServer):
    scripted: ScriptedServer

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # clients that time out or fail TLS are the point of these tests


class ScriptedServer:
    """Records each request and answers it with the next scripted Reply (500 when none is left)."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self.script: deque[Reply] = deque()
        self.seen: list[Seen] = []
        self.release = threading.Event()
        self._lock = threading.Lock()
        self.httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.scripted = self
        if ssl_context is not None:
            self.httpd.socket = ssl_context.wrap_socket(self.httpd.socket, server_side=True)
        scheme = "https" if ssl_context else "http"
        self.url = f"{scheme}://127.0.0.1:{self.httpd.server_address[1]}"
        # A short poll interval keeps shutdown, and so each test's teardown, fast.
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()

    def then(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        body = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        with self._lock:
            self.seen.append(
                Seen(
                    method=handler.command,
                    path=handler.path,
                    headers={k.lower(): v for k, v in handler.headers.items()},
                    body=body,
                    client_port=handler.client_address[1],
                )
            )
            reply = self.script.popleft() if self.script else Reply(500, b"unscripted")
        if reply is CLOSE:
            handler.close_connection = True
            return
        if reply.delay:
            self.release.wait(reply.delay)
        handler.send_response(reply.status)
        for name, value in reply.headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(reply.body)))
        handler.end_headers()
        handler.wfile.write(reply.body)

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    yield scripted
    scripted.stop()


@pytest.fixture
def client(server: ScriptedServer) -> Iterator[CoreAPIClient]:
    coreapi = CoreAPIClient(server.url, INSTANCE, read_timeout=2, backoff=0)
    yield coreapi
    coreapi.close()


@pytest.fixture
def slow_client(server: ScriptedServer) -> Iterator[CoreAPIClient]:
    coreapi = CoreAPIClient(server.url, INSTANCE, read_timeout=0.2, backoff=0)
    yield coreapi
    coreapi.close()


def memory_path(suffix: str = "") -> str:
    return f"/instances/{INSTANCE}/memory{suffix}"


# Requests as sent


def test_get_memory_sends_the_contract_request(
    server: ScriptedServer, client: CoreAPIClient
) -> None:
    server.then(json_reply({**MEMORY_JSON, "scope": "agent", "agent_object_id": BENEFITS}))

    memory = client.get_memory(ALICE, "agent", BENEFITS)

    assert memory.agent_object_id == BENEFITS
    (seen,) = server.seen
    assert seen.method == "GET"
    assert seen.path == memory_path() + "?scope=agent&agentObjectId=" + requests.utils.quote(
        BENEFITS, safe=""
    )
    assert seen.headers["authorization"] == f"Bearer {TOKEN}"
    assert seen.headers["accept"] == "application/json"
    assert len(seen.headers["x-correlation-id"]) == 32
    assert "x-user-identity" not in seen.headers


def test_combined_scope_is_the_default(server: ScriptedServer, client: CoreAPIClient) -> None:
    server.then(json_reply({**MEMORY_JSON, "scope": "combined"}))

    assert client.get_memory(ALICE).scope == "combined"
    assert server.seen[0].path == memory_path() + "?scope=combined"


def test_support_calls_carry_the_user_identity(
    server: ScriptedServer, client: CoreAPIClient
) -> None:
    server.then(json_reply(MEMORY_JSON))

    client.get_memory(CAROL_FOR_ALICE, "user")

    headers = server.seen[0].headers
    assert headers["authorization"] == "Bearer eyJ.app-token.sig"
    assert CAROL_FOR_ALICE.user_identity is not None
    assert headers["x-user-identity"] == CAROL_FOR_ALICE.user_identity.to_header()


def test_a_given_correlation_id_is_sent(server: ScriptedServer, client: CoreAPIClient) -> None:
    server.then(json_reply(MEMORY_JSON))

    client.get_memory(ALICE, "user", correlation_id="req-42")

    assert server.seen[0].headers["x-correlation-id"] == "req-42"


def test_append_sends_snake_case_without_absent_fields(
    server: ScriptedServer, client: CoreAPIClient
) -> None:
    server.then(json_reply(MEMORY_JSON))

    client.append_memory(ALICE, "agent", "- likes tea", agent_object_id=BENEFITS, reason="said so")

    (seen,) = server.seen
    assert (seen.method, seen.path) == ("POST", memory_path("/append"))
    assert seen.headers["content-type"] == "application/json"
    assert seen.json() == {
        "scope": "agent",
        "agent_object_id": BENEFITS,
        "content_markdown": "- likes tea",
        "reason": "said so",
    }


def test_clear_confirms(server: ScriptedServer, client: CoreAPIClient) -> None:
    server.then(json_reply({**MEMORY_JSON, "content_markdown": ""}))

    memory = client.clear_memory(ALICE, "user")

    assert memory.content_markdown == ""
    assert server.seen[0].path == memory_path("/clear")
    assert server.seen[0].json() == {"scope": "user", "confirm": True}


def test_import_sends_the_mode(server: ScriptedServer, client: CoreAPIClient) -> None:
    server.then(json_reply(MEMORY_JSON))

    client.import_memory(ALICE, "user", "# Mine\n", mode="replace")

    assert server.seen[0].path == memory_path("/import")
    assert server.seen[0].json() == {
        "scope": "user",
        "content_markdown": "# Mine\n",
        "mode": "replace",
    }


def test_export_returns_utf8_markdown(server: ScriptedServer, client: CoreAPIClient) -> None:
    markdown = "# Memory\n\n- Café ☕\n"
    server.then(Reply(200, markdown.encode(), {"Content-Type": "text/markdown; charset=utf-8"}))

    assert client.export_memory(ALICE, "combined", agent_object_id=BENEFITS) == markdown
    assert server.seen[0].headers["accept"] == "text/markdown"
    assert server.seen[0].path.startswith(memory_path("/export") + "?scope=combined&")


def test_export_refuses_an_html_page(server: ScriptedServer, client: CoreAPIClient) -> None:
    server.then(Reply(200, b"<html>Sign in</html>", {"Content-Type": "text/html"}))

    with pytest.raises(CoreAPIUnexpectedResponse):
        client.export_memory(ALICE, "user")


def test_list_agents(server: ScriptedServer, client: CoreAPIClient) -> None:
    server.then(json_reply([agent_element("it-helpdesk"), agent_element("benefits-assistant")]))

    agents = client.list_agents(ALICE)

    assert [agent.object_id for agent in agents] == [BENEFITS, agents[1].object_id]
    assert server.seen[0].path == f"/instances/{INSTANCE}/completions/agents"


@pytest.mark.parametrize(
    "reply",
    [
        Reply(200, b"not json", {"Content-Type": "application/json"}),
        Reply(200, b""),
        json_reply([MEMORY_JSON]),
        json_reply({"scope": "user"}),
        Reply(204),
    ],
)
def test_unusable_success_bodies_are_unexpected_responses(
    server: ScriptedServer, client: CoreAPIClient, reply: Reply
) -> None:
    server.then(reply)

    with pytest.raises(CoreAPIUnexpectedResponse) as caught:
        client.get_memory(ALICE, "user")

    assert caught.value.message == "CoreAPI returned an unexpected response; try again later."


def test_errors_carry_the_request_correlation_id(
    server: ScriptedServer, client: CoreAPIClient
) -> None:
    server.then(Reply(404, problem(404, title="Not Found"), PROBLEM))

    with pytest.raises(CoreAPINotFound) as caught:
        client.get_memory(ALICE, "agent", BENEFITS, correlation_id="req-7")

    assert caught.value.correlation_id == "req-7"
    assert caught.value.title == "Not Found"


def test_redirects_are_not_followed(server: ScriptedServer, client: CoreAPIClient) -> None:
    server.then(Reply(302, b"", {"Location": "/login"}))

    with pytest.raises(CoreAPIUnexpectedResponse):
        client.append_memory(ALICE, "user", "- x")

    assert len(server.seen) == 1


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda c: c.get_memory(ALICE, "everything"), "scope"),
        (lambda c: c.get_memory(ALICE, "agent"), "agent_object_id"),
        (lambda c: c.export_memory(ALICE, "agent"), "agent_object_id"),
        (lambda c: c.append_memory(ALICE, "combined", "- x"), "scope"),
        (lambda c: c.append_memory(ALICE, "user", "  \n"), "content_markdown"),
        (lambda c: c.append_memory(ALICE, "agent", "- x"), "agent_object_id"),
        (lambda c: c.clear_memory(ALICE, "combined"), "scope"),
        (lambda c: c.clear_memory(ALICE, "agent"), "agent_object_id"),
        (lambda c: c.import_memory(ALICE, "user", "# x", mode="merge"), "mode"),
        (lambda c: c.import_memory(ALICE, "user", ""), "content_markdown"),
        (lambda c: c.get_memory(CallerAuth(""), "user"), "access_token"),
        (lambda c: c.get_memory(ALICE, "user", correlation_id="bad\r\nid"), "correlation_id"),
    ],
)
def test_bad_arguments_fail_before_any_request(
    server: ScriptedServer, client: CoreAPIClient, call: ClientCall, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        call(client)

    assert server.seen == []


# Retries, timeouts and dropped connections


def test_get_is_retried_after_503_with_the_same_correlation_id(
    server: ScriptedServer, client: CoreAPIClient
) -> None:
    server.then(Reply(503), Reply(502), json_reply(MEMORY_JSON))

    assert client.get_memory(ALICE, "user").upn == "alice@contoso.com"
    assert len(server.seen) == 3
    assert len({seen.headers["x-correlation-id"] for seen in server.seen}) == 1


def test_get_gives_up_after_its_retries(server: ScriptedServer, client: CoreAPIClient) -> None:
    server.then(Reply(504), Reply(504), Reply(504), json_reply(MEMORY_JSON))

    with pytest.raises(CoreAPIUnavailable) as caught:
        client.get_memory(ALICE, "user")

    assert caught.value.status == 504
    assert len(server.seen) == 3  # get_retries=2


@pytest.mark.parametrize("status", [500, 429, 404])
def test_get_is_not_retried_on_other_statuses(
    server: ScriptedServer, client: CoreAPIClient, status: int
) -> None:
    server.then(Reply(status, headers={"Retry-After": "3"}), json_reply(MEMORY_JSON))

    with pytest.raises(CoreAPIError) as caught:
        client.get_memory(ALICE, "user")

    assert caught.value.status == status
    assert len(server.seen) == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.append_memory(ALICE, "user", "- x"),
        lambda c: c.clear_memory(ALICE, "user"),
        lambda c: c.import_memory(ALICE, "user", "# x", mode="replace"),
    ],
)
def test_posts_are_never_retried(
    server: ScriptedServer, client: CoreAPIClient, call: ClientCall
) -> None:
    server.then(Reply(503), json_reply(MEMORY_JSON))

    with pytest.raises(CoreAPIUnavailable) as caught:
        call(client)

    assert caught.value.status == 503
    assert caught.value.message == "CoreAPI is unavailable, try again."
    assert len(server.seen) == 1


def test_read_timeout_is_unavailable_quickly(
    server: ScriptedServer, slow_client: CoreAPIClient
) -> None:
    server.then(Reply(delay=5))
    started = time.monotonic()

    with pytest.raises(CoreAPIUnavailable) as caught:
        slow_client.get_memory(ALICE, "user")

    assert time.monotonic() - started < 2
    assert caught.value.status is None
    assert caught.value.message == "CoreAPI is unavailable, try again."
    assert isinstance(caught.value.__cause__, requests.Timeout)
    assert len(server.seen) == 1


def test_a_get_is_not_retried_after_a_read_timeout(
    server: ScriptedServer, slow_client: CoreAPIClient
) -> None:
    # CoreAPI that slow would make a retry as slow: the request's time goes to the user.
    server.then(Reply(delay=5), json_reply(MEMORY_JSON))

    with pytest.raises(CoreAPIUnavailable):
        slow_client.get_memory(ALICE, "user")

    assert len(server.seen) == 1


def test_calls_within_a_deadline_end_by_it(server: ScriptedServer) -> None:
    client = CoreAPIClient(server.url, INSTANCE, read_timeout=10, backoff=0)
    server.then(Reply(delay=5))
    started = time.monotonic()

    with budget.deadline(0.6), pytest.raises(CoreAPIUnavailable) as caught:
        client.get_memory(ALICE, "user")

    assert time.monotonic() - started < 1.5
    assert isinstance(caught.value.__cause__, requests.Timeout)


def test_nothing_is_sent_when_the_deadline_has_passed(server: ScriptedServer) -> None:
    client = CoreAPIClient(server.url, INSTANCE)

    with budget.deadline(0.1), pytest.raises(CoreAPIUnavailable) as caught:
        client.append_memory(ALICE, "user", "- x")

    assert not caught.value.outcome_unknown
    assert server.seen == []


def test_calls_beyond_the_cap_wait_their_turn_then_are_refused(server: ScriptedServer) -> None:
    client = CoreAPIClient(server.url, INSTANCE, max_concurrent=1, queue_timeout=0.3)
    server.then(Reply(delay=2, status=200, body=json.dumps(MEMORY_JSON).encode()))
    first = threading.Thread(target=client.get_memory, args=(ALICE, "user"))
    first.start()
    try:
        deadline = time.monotonic() + 5
        while len(server.seen) < 1 and time.monotonic() < deadline:
            time.sleep(0.01)  # polling the condition, with a deadline
        started = time.monotonic()
        with pytest.raises(CoreAPIUnavailable) as caught:
            client.append_memory(ALICE, "user", "- x")
        waited = time.monotonic() - started
    finally:
        first.join()

    assert 0.25 < waited < 1.5
    assert "busy" in caught.value.message and not caught.value.outcome_unknown
    assert len(server.seen) == 1  # the refused call sent nothing


def test_a_body_over_the_limit_is_refused_before_it_is_sent(server: ScriptedServer) -> None:
    client = CoreAPIClient(server.url, INSTANCE, max_body_bytes=1000)

    with pytest.raises(CoreAPIRequestTooLarge) as caught:
        client.import_memory(ALICE, "user", "\u00e9" * 200, mode="replace")  # 1,200+ bytes as JSON

    assert caught.value.portal_status == 413
    assert server.seen == []


def test_post_timeout_is_not_retried(server: ScriptedServer, slow_client: CoreAPIClient) -> None:
    server.then(Reply(delay=5), json_reply(MEMORY_JSON))

    with pytest.raises(CoreAPIOutcomeUnknown) as caught:
        slow_client.append_memory(ALICE, "user", "- x")

    # Sent, and no answer: it may have been applied, so never "nothing was changed".
    assert caught.value.portal_status == 504 and caught.value.outcome_unknown
    assert len(server.seen) == 1


def test_get_recovers_from_a_dropped_connection(
    server: ScriptedServer, client: CoreAPIClient
) -> None:
    server.then(CLOSE, json_reply(MEMORY_JSON))

    assert client.get_memory(ALICE, "user").scope == "user"
    assert len(server.seen) == 2


def test_post_on_a_dropped_connection_is_not_resent(
    server: ScriptedServer, client: CoreAPIClient
) -> None:
    server.then(CLOSE, json_reply(MEMORY_JSON))

    with pytest.raises(CoreAPIOutcomeUnknown) as caught:
        client.clear_memory(ALICE, "user")

    assert caught.value.status is None
    assert isinstance(caught.value.__cause__, requests.ConnectionError)
    assert len(server.seen) == 1


def test_a_post_that_cannot_connect_is_known_not_sent() -> None:
    client = CoreAPIClient(f"http://127.0.0.1:{free_port()}", INSTANCE, backoff=0)
    with pytest.raises(CoreAPIUnavailable) as caught:
        client.append_memory(ALICE, "user", "- x")
    assert not caught.value.outcome_unknown
    client.close()


def test_etags_are_read_and_if_match_is_sent(server: ScriptedServer, client: CoreAPIClient):
    etag = '"' + "a" * 64 + '"'
    server.then(json_reply(MEMORY_JSON, headers={"ETag": etag}), json_reply(MEMORY_JSON))
    memory = client.get_memory(ALICE, "user")
    assert memory.etag == etag
    assert client.import_memory(ALICE, "user", "# x", mode="replace", if_match=etag).etag is None
    assert server.seen[1].headers["if-match"] == etag
    assert "if-match" not in server.seen[0].headers


def test_a_refused_precondition_is_its_own_error(server: ScriptedServer, client: CoreAPIClient):
    server.then(Reply(412, b'{"title":"Precondition Failed","status":412}'))
    with pytest.raises(CoreAPIPreconditionFailed) as caught:
        client.clear_memory(ALICE, "user", if_match='"' + "b" * 64 + '"')
    assert caught.value.portal_status == 409


def test_if_match_must_be_an_entity_tag(client: CoreAPIClient):
    with pytest.raises(ValueError, match="entity tag"):
        client.clear_memory(ALICE, "user", if_match="no quotes\r\nX-Evil: 1")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_connection_refused_is_retried_then_unavailable(
    caplog: pytest.LogCaptureFixture,
) -> None:
    coreapi = CoreAPIClient(f"http://127.0.0.1:{free_port()}", INSTANCE, backoff=0)
    caplog.set_level(logging.INFO, logger="memory_ui.sources.coreapi")

    with pytest.raises(CoreAPIUnavailable) as caught:
        coreapi.list_agents(ALICE)

    assert caught.value.status is None
    attempts = [record.getMessage().rsplit("attempt=", 1)[1] for record in caplog.records]
    assert attempts == ["1", "2", "3"]
    coreapi.close()


# Pooling, logging, settings and TLS


def test_one_pooled_connection_serves_consecutive_calls(
    server: ScriptedServer, client: CoreAPIClient
) -> None:
    server.then(json_reply(MEMORY_JSON), json_reply(MEMORY_JSON), json_reply([]))

    client.get_memory(ALICE, "user")
    client.append_memory(ALICE, "user", "- x")
    client.list_agents(ALICE)

    assert len({seen.client_port for seen in server.seen}) == 1


def test_a_given_session_is_used(server: ScriptedServer) -> None:
    session = requests.Session()
    session.headers["User-Agent"] = "memory-portal-test"
    coreapi = CoreAPIClient(server.url, INSTANCE, session=session)
    server.then(json_reply([]))

    assert coreapi.list_agents(ALICE) == []
    assert server.seen[0].headers["user-agent"] == "memory-portal-test"
    session.close()


def test_one_log_line_per_attempt_without_token_or_content(
    server: ScriptedServer, client: CoreAPIClient, caplog: pytest.LogCaptureFixture
) -> None:
    server.then(Reply(503), json_reply(MEMORY_JSON))
    caplog.set_level(logging.INFO, logger="memory_ui.sources.coreapi")

    client.get_memory(ALICE, "agent", BENEFITS, correlation_id="req-9")

    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 2
    assert lines[0].startswith(
        f"CoreAPI GET /instances/{INSTANCE}/memory?scope=agent&agentObjectId="
    )
    assert " -> 503 in " in lines[0]
    assert lines[0].endswith("correlation_id=req-9 attempt=1")
    assert " -> 200 in " in lines[1]
    assert lines[1].endswith("attempt=2")
    assert [record.levelno for record in caplog.records] == [logging.WARNING, logging.INFO]
    assert not any(TOKEN in line or "Prefers concise" in line for line in lines)


def test_client_from_settings(server: ScriptedServer) -> None:
    settings = SimpleNamespace(
        COREAPI_BASE_URL=server.url + "/",
        COREAPI_INSTANCE_ID=INSTANCE,
        COREAPI_CONNECT_TIMEOUT="1",
        COREAPI_READ_TIMEOUT="2",
        COREAPI_GET_RETRIES="0",
        COREAPI_CA_BUNDLE="",
    )
    coreapi = client_from_settings(settings)
    server.then(Reply(503), json_reply([]))

    with pytest.raises(CoreAPIUnavailable):
        coreapi.list_agents(ALICE)

    assert len(server.seen) == 1
    assert server.seen[0].path == f"/instances/{INSTANCE}/completions/agents"
    coreapi.close()


@pytest.fixture
def tls_server(pki: Pki, monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    # The system bundle in the environment would override Session.verify; it must not
    # override the client's per-request verify.
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", requests.certs.where())
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(pki.server_cert), str(pki.server_key))
    scripted = ScriptedServer(context)
    yield scripted
    scripted.stop()


def test_ca_bundle_is_honoured_despite_the_environment(
    tls_server: ScriptedServer, pki: Pki
) -> None:
    settings = SimpleNamespace(
        COREAPI_BASE_URL=tls_server.url,
        COREAPI_INSTANCE_ID=INSTANCE,
        COREAPI_CA_BUNDLE=str(pki.ca_cert),
    )
    coreapi = client_from_settings(settings)
    tls_server.then(json_reply([]))

    assert coreapi.list_agents(ALICE) == []
    coreapi.close()


def test_untrusted_certificate_fails_once_without_retries(
    tls_server: ScriptedServer, caplog: pytest.LogCaptureFixture
) -> None:
    coreapi = CoreAPIClient(tls_server.url, INSTANCE, backoff=0)
    caplog.set_level(logging.INFO, logger="memory_ui.sources.coreapi")

    with pytest.raises(CoreAPIUnavailable) as caught:
        coreapi.list_agents(ALICE)

    assert isinstance(caught.value.__cause__, requests.exceptions.SSLError)
    assert len(caplog.records) == 1
    coreapi.close()


def test_agents_with_names_outside_coreapis_rule_are_skipped():
    def element(name: str) -> dict:
        return {
            "resource": {
                "name": name,
                "object_id": f"/instances/i/providers/FoundationaLLM.Agent/agents/{name}",
            }
        }

    names = [
        a.name
        for a in parse_agents(
            [
                element("good-agent_1"),
                element("bad name"),
                element("9lives"),
                element('x"><script>'),
            ]
        )
    ]
    assert names == ["good-agent_1"]


def test_the_environment_is_read_once_when_the_client_is_built(monkeypatch):
    """Proxies from the environment still apply (read when the client is built, honouring
    no_proxy), but requests no longer reads .netrc or the environment on each call."""
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "")
    client = CoreAPIClient("https://coreapi.example", "instance")
    assert client._session.proxies.get("https") == "http://proxy.example:3128"
    assert client._session.trust_env is False
    monkeypatch.setenv("NO_PROXY", "coreapi.example")
    assert CoreAPIClient("https://coreapi.example", "instance")._session.proxies == {}


def test_memory_has_content_is_anything_but_whitespace():
    assert not Memory(scope="user", upn="a", content_markdown="").has_content
    assert not Memory(scope="user", upn="a", content_markdown=" \n\t\n").has_content
    assert Memory(scope="user", upn="a", content_markdown="\n- x\n").has_content
