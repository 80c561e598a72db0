"""CoreAPI emulator over real HTTP: the memory contract's endpoint and validation tables
(docs/architecture.md, The CoreAPI memory contract; What the real CoreAPI does beyond
the contract; Document formats).

Tests that write use an emulator over their own fresh home (`fresh`), or ad-hoc users, so
the seeded demo memory of the session's `coreapi` stays intact and order never matters.
Helpers here (`Api`, `start_emulator`, ...) are shared by the other test_coreapi_* modules.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from devstack import coreapi
from devstack.config import fixtures
from devstack.coreapi import Faults
from devstack.pki import Pki
from devstack.serve import RunningServer

INSTANCE = fixtures().instance_id
ALICE = "alice@contoso.com"
BOB = "bob@contoso.com"
CAROL = "carol@contoso.com"
TS = r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"  # heading timestamp
MEMORY_KEYS = {
    "scope",
    "upn",
    "user_name",
    "name",
    "agent_object_id",
    "agent_name",
    "content_markdown",
    "created_on",
    "updated_on",
}
PROBLEM_KEYS = {"type", "title", "status", "traceId"}

ALICE_BENEFITS = (
    "## Added 2026-10-05T09:30:00Z \u2014 Enrolment question\n"
    "\n"
    "- Enrolled in the **PPO Plus** health plan; dependants: one child.\n"
    "- Asked about the [parental leave policy](https://intranet.contoso.com/hr/parental-leave).\n"
    "\n"
    "## Added 2026-11-12T14:22:41Z \u2014 401(k) contribution change\n"
    "> operation: op-5120 \u00b7 session: sess-90b1\n"
    "\n"
    "- Raised 401(k) contribution to 8% from January.\n"
)
BOB_USER = (
    "## Added 2026-11-28T10:00:00Z \u2014 User stated preference\n"
    "\n"
    "- Prefers step-by-step instructions.\n"
)


def agent_id(name: str, instance: str = INSTANCE) -> str:
    return f"/instances/{instance}/providers/FoundationaLLM.Agent/agents/{name}"


def ad_hoc_upn() -> str:
    """A user nobody else writes to: isolated memory within a shared emulator."""
    return f"t-{uuid.uuid4().hex[:12]}@contoso.com"


@dataclass
class Api:
    """Calls one emulator as one caller."""

    base: str
    token: str | None = None
    headers: dict[str, Any] = field(default_factory=dict)
    instance: str = INSTANCE

    def url(self, path: str) -> str:
        return f"{self.base}/instances/{self.instance}/{path}"

    def _headers(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        headers = dict(self.headers)
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return {**headers, **(extra or {})}

    def get(self, path: str, params: dict[str, str] | None = None) -> requests.Response:
        return requests.get(self.url(path), params=params, headers=self._headers(), timeout=10)

    def post(
        self, path: str, body: Any, headers: dict[str, str] | None = None
    ) -> requests.Response:
        return requests.post(self.url(path), json=body, headers=self._headers(headers), timeout=10)

    def post_raw(self, path: str, data: bytes, headers: dict[str, str]) -> requests.Response:
        return requests.post(self.url(path), data=data, headers=self._headers(headers), timeout=10)

    def read(self, scope: str | None = None, agent: str | None = None) -> requests.Response:
        params = {}
        if scope is not None:
            params["scope"] = scope
        if agent is not None:
            params["agentObjectId"] = agent_id(agent)
        return self.get("memory", params)

    def content(self, scope: str, agent: str | None = None) -> str:
        response = self.read(scope, agent)
        assert response.status_code == 200, response.text
        return response.json()["content_markdown"]

    def append(self, scope: str, content: str, agent: str | None = None, **extra: Any):
        body = {"scope": scope, "content_markdown": content, **extra}
        if agent:
            body["agent_object_id"] = agent_id(agent)
        return self.post("memory/append", body)

    def imported(self, scope: str, content: str, agent: str | None = None, **extra: Any):
        body = {"scope": scope, "content_markdown": content, **extra}
        if agent:
            body["agent_object_id"] = agent_id(agent)
        return self.post("memory/import", body)

    def clear(self, scope: str, agent: str | None = None, **extra: Any) -> requests.Response:
        body: dict[str, Any] = {"scope": scope, "confirm": True, **extra}
        if agent:
            body["agent_object_id"] = agent_id(agent)
        return self.post("memory/clear", body)


def start_emulator(
    home: Path, idp_url: str, pki: Pki, faults: Faults | None = None
) -> RunningServer:
    """On a free port; an explicit Faults() so DEVSTACK_COREAPI_FAULT_* cannot leak in."""
    return coreapi.start(home=home, idp_url=idp_url, ca_file=pki.ca_cert, faults=faults or Faults())


def assert_problem(response: requests.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == "application/problem+json"
    body = response.json()
    assert PROBLEM_KEYS <= body.keys()
    assert body["status"] == status
    return body


def assert_validation_problem(response: requests.Response, field_name: str) -> dict[str, Any]:
    body = assert_problem(response, 400)
    assert field_name in body["errors"], body
    assert all(isinstance(m, str) for m in body["errors"][field_name])
    return body


def heading_times(markdown: str, word: str = "Added") -> list[dt.datetime]:
    return [
        dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
        for ts in re.findall(rf"^## {word} {TS}", markdown, flags=re.MULTILINE)
    ]


def now_seconds() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


@pytest.fixture(scope="module")
def pristine(emulators) -> RunningServer:
    """Seeded demo data that no test in this module writes to (`fresh` is another server)."""
    return emulators()


# --- MemoryResponse shape and seeded demo data ----------------------------------------------


def test_memory_response_shape_for_agent_scope(pristine, as_user) -> None:
    response = as_user(pristine, ALICE).read("agent", "benefits-assistant")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    body = response.json()
    assert body.keys() == MEMORY_KEYS
    assert body == {
        "scope": "agent",
        "upn": ALICE,
        "user_name": ALICE,
        "name": "Alice Example",
        "agent_object_id": agent_id("benefits-assistant"),
        "agent_name": "benefits-assistant",
        "content_markdown": ALICE_BENEFITS,
        "created_on": "2026-10-05T09:30:00+00:00",
        "updated_on": "2026-11-12T14:22:41+00:00",
    }


def test_memory_response_shape_for_user_scope(pristine, as_user) -> None:
    body = as_user(pristine, BOB).read("user").json()
    assert body == {
        "scope": "user",
        "upn": BOB,
        "user_name": BOB,
        "name": "Bob Example",
        "agent_object_id": None,
        "agent_name": None,
        "content_markdown": BOB_USER,
        "created_on": "2026-11-28T10:00:00+00:00",
        "updated_on": "2026-11-28T10:00:00+00:00",
    }


def test_seeded_demo_memory_uses_the_append_format(pristine, as_user) -> None:
    alice = as_user(pristine, ALICE).content("user")
    assert alice.startswith(
        "## Added 2026-09-14T08:12:03Z \u2014 User introduced herself\n> session: sess-7f3a\n\n"
    )
    assert (
        "\n\n## Added 2026-10-02T16:40:55Z \u2014 User stated preference\n> operation: op-2291\n\n"
        in alice
    )
    assert alice.endswith("| Fri | 09:00\u201313:00 |\n")
    assert len(heading_times(alice)) == 3


def test_session_coreapi_fixture_serves_the_demo(coreapi, as_user) -> None:
    agents = as_user(coreapi, ALICE).get("completions/agents")
    assert agents.status_code == 200
    assert len(agents.json()) == 3


# --- Endpoint table: GET /memory ------------------------------------------------------------


def test_get_memory_scope_defaults_to_combined(pristine, as_user) -> None:
    alice = as_user(pristine, ALICE)
    default = alice.read(agent="benefits-assistant").json()
    assert default["scope"] == "combined"
    assert default == alice.read("combined", "benefits-assistant").json()


def test_get_memory_combined_joins_user_and_agent(pristine, as_user) -> None:
    alice = as_user(pristine, ALICE)
    user = alice.content("user")
    body = alice.read("combined", "benefits-assistant").json()
    assert body["content_markdown"] == user.rstrip("\n") + "\n\n" + ALICE_BENEFITS
    assert body["agent_object_id"] == agent_id("benefits-assistant")
    assert body["agent_name"] == "benefits-assistant"
    # The span of the parts: user memory started first, it was updated last.
    assert body["created_on"] == "2026-09-14T08:12:03+00:00"
    assert body["updated_on"] == "2026-11-20T11:05:10+00:00"


def test_get_memory_combined_without_agent_is_user_memory(pristine, as_user) -> None:
    alice = as_user(pristine, ALICE)
    body = alice.read("combined").json()
    assert body["content_markdown"] == alice.content("user")
    assert body["agent_object_id"] is None
    assert body["agent_name"] is None


def test_get_memory_user_scope_ignores_agent_object_id(pristine, as_user) -> None:
    bob = as_user(pristine, BOB)
    # bob cannot read travel-planner, but user scope does not look at the agent at all.
    assert bob.read("user", "travel-planner").json()["content_markdown"] == BOB_USER


def test_empty_memory_is_200_with_empty_string(pristine, as_user) -> None:
    nobody = as_user(pristine, ad_hoc_upn())
    for scope in ("user", "combined"):
        body = nobody.read(scope).json()
        assert body["content_markdown"] == ""
        assert body["created_on"] is None
        assert body["updated_on"] is None
    bob = as_user(pristine, BOB)
    agent = bob.read("agent", "it-helpdesk")
    assert agent.status_code == 200
    assert agent.json()["content_markdown"] == ""
    export = nobody.get("memory/export", {"scope": "user"})
    assert export.status_code == 200
    assert export.text == ""


# --- Endpoint table: GET /memory/export -----------------------------------------------------


def test_export_returns_raw_markdown(pristine, as_user) -> None:
    alice = as_user(pristine, ALICE)
    for scope, agent in (("agent", "benefits-assistant"), ("user", None), ("combined", None)):
        params = {"scope": scope}
        if agent:
            params["agentObjectId"] = agent_id(agent)
        response = alice.get("memory/export", params)
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "text/markdown; charset=utf-8"
        assert response.content.decode("utf-8") == alice.content(scope, agent)


def test_export_requires_scope(pristine, as_user) -> None:
    alice = as_user(pristine, ALICE)
    assert_validation_problem(alice.get("memory/export"), "scope")
    assert_validation_problem(alice.get("memory/export", {"scope": ""}), "scope")


# --- Endpoint table: POST /memory/append ----------------------------------------------------


def test_append_user_memory_format_is_byte_exact(fresh, as_user) -> None:
    api = as_user(fresh, ad_hoc_upn())
    before = now_seconds()
    first = api.append(
        "user", "  - first fact  \n\n", reason="User said so", operation_id="op-1", session_id="s-1"
    )
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["scope"] == "user"
    assert re.fullmatch(
        rf"## Added {TS} \u2014 User said so\n> operation: op-1 \u00b7 session: s-1\n\n- first fact\n",
        body["content_markdown"],
    )
    second = api.append("user", "- second\n", session_id="s-2").json()["content_markdown"]
    third = api.append("user", "- third", operation_id="op-3").json()["content_markdown"]
    fourth = api.append("user", "\n- fourth\n\n\n").json()["content_markdown"]
    assert third.startswith(second) and second.startswith(body["content_markdown"])
    assert re.fullmatch(
        rf"## Added {TS} \u2014 User said so\n> operation: op-1 \u00b7 session: s-1\n\n- first fact\n"
        rf"\n## Added {TS}\n> session: s-2\n\n- second\n"
        rf"\n## Added {TS}\n> operation: op-3\n\n- third\n"
        rf"\n## Added {TS}\n\n- fourth\n",
        fourth,
    )
    after = now_seconds()
    assert all(before <= t <= after for t in heading_times(fourth))


def test_append_agent_memory_adds_after_trailing_whitespace(fresh, as_user) -> None:
    alice = as_user(fresh, ALICE)
    assert alice.imported("agent", "# Notes\n\n- one  \n\n\n", "it-helpdesk", mode="replace").ok
    response = alice.append("agent", "- two", "it-helpdesk", reason="Line\nbreak  kept out")
    body = response.json()
    assert response.status_code == 200
    assert body["scope"] == "agent"
    assert body["agent_object_id"] == agent_id("it-helpdesk")
    assert body["agent_name"] == "it-helpdesk"
    assert re.fullmatch(
        rf"# Notes\n\n- one\n\n## Added {TS} \u2014 Line break kept out\n\n- two\n",
        body["content_markdown"],
    )
    assert alice.content("agent", "it-helpdesk") == body["content_markdown"]


def test_append_after_clear_has_no_leading_blank_line(fresh, as_user) -> None:
    bob = as_user(fresh, BOB)
    assert bob.clear("user").ok
    content = bob.append("user", "- only").json()["content_markdown"]
    assert re.fullmatch(rf"## Added {TS}\n\n- only\n", content)


def test_append_agent_name_in_body_is_not_authoritative(fresh, as_user) -> None:
    alice = as_user(fresh, ALICE)
    body = alice.append("agent", "- x", "travel-planner", agent_name="Something Else").json()
    assert body["agent_name"] == "travel-planner"


# --- Endpoint table: POST /memory/clear -----------------------------------------------------


def test_clear_keeps_created_on_and_moves_updated_on(fresh, as_user) -> None:
    alice = as_user(fresh, ALICE)
    before = alice.read("agent", "benefits-assistant").json()
    response = alice.clear("agent", "benefits-assistant")
    assert response.status_code == 200
    after = response.json()
    assert after["content_markdown"] == ""
    assert after["created_on"] == before["created_on"] == "2026-10-05T09:30:00+00:00"
    assert dt.datetime.fromisoformat(after["updated_on"]) > dt.datetime.fromisoformat(
        before["updated_on"]
    )
    assert after["updated_on"].endswith("+00:00")
    assert alice.read("agent", "benefits-assistant").json() == after
    # Other documents are untouched.
    assert alice.content("agent", "travel-planner") != ""
    assert alice.content("user") != ""


def test_clear_user_memory(fresh, as_user) -> None:
    bob = as_user(fresh, BOB)
    assert bob.clear("user").json()["content_markdown"] == ""
    assert bob.content("user") == ""
    assert bob.read("user").json()["created_on"] == "2026-11-28T10:00:00+00:00"


def test_clear_without_a_document_creates_an_empty_one(fresh, as_user) -> None:
    api = as_user(fresh, ad_hoc_upn())
    body = api.clear("user").json()
    assert body["content_markdown"] == ""
    assert body["created_on"] == body["updated_on"] is not None


# --- Endpoint table: POST /memory/import ----------------------------------------------------


def test_import_replace_is_byte_for_byte(fresh, as_user) -> None:
    alice = as_user(fresh, ALICE)
    body = "\n  # Mine\r\n\n- kept   exactly\t\n\n\n"
    response = alice.imported("user", body, mode="replace")
    assert response.status_code == 200
    assert response.json()["content_markdown"] == body
    assert alice.get("memory/export", {"scope": "user"}).content == body.encode()


def test_import_append_mode_uses_imported_heading(fresh, as_user) -> None:
    bob = as_user(fresh, BOB)
    content = bob.imported("user", "\n\n- imported one\n", mode="append").json()["content_markdown"]
    assert re.fullmatch(
        re.escape(BOB_USER) + rf"\n## Imported {TS}\n\n- imported one\n",
        content,
    )


def test_import_mode_defaults_to_append(fresh, as_user) -> None:
    alice = as_user(fresh, ALICE)
    before = alice.content("agent", "travel-planner")
    content = alice.imported("agent", "- default mode", "travel-planner").json()["content_markdown"]
    assert re.fullmatch(
        re.escape(before.rstrip()) + rf"\n\n## Imported {TS}\n\n- default mode\n", content
    )
    assert alice.imported("agent", "- null mode", "travel-planner", mode=None).ok


# --- Combined format ------------------------------------------------------------------------


def test_combined_strips_blank_lines_and_skips_empty_parts(fresh, as_user) -> None:
    alice = as_user(fresh, ALICE)
    alice.imported("user", "\n \n# User\n\n- u\n\n \t\n", mode="replace")
    alice.imported("agent", "\n\n    indented code\n- a  \n\n", "it-helpdesk", mode="replace")
    combined = alice.read("combined", "it-helpdesk").json()["content_markdown"]
    assert combined == "# User\n\n- u\n\n    indented code\n- a  \n"
    alice.clear("user")
    assert alice.content("combined", "it-helpdesk") == "    indented code\n- a  \n"
    alice.clear("agent", "it-helpdesk")
    assert alice.content("combined", "it-helpdesk") == ""


# --- Agents listing and agent access --------------------------------------------------------


@pytest.mark.parametrize(
    ("upn", "expected"),
    [
        (
            ALICE,
            [
                ("benefits-assistant", "Reader"),
                ("it-helpdesk", "Contributor"),
                ("travel-planner", "Owner"),
            ],
        ),
        (BOB, [("it-helpdesk", "Reader")]),
        (CAROL, [("benefits-assistant", "Reader")]),
        ("nobody@contoso.com", []),
    ],
)
def test_agents_listing_per_user(pristine, as_user, upn, expected) -> None:
    response = as_user(pristine, upn).get("completions/agents")
    assert response.status_code == 200
    items = response.json()
    assert [(i["resource"]["name"], i["roles"][0]) for i in items] == expected
    for item in items:
        resource = item["resource"]
        assert resource["type"] == "generic-agent"
        assert resource["object_id"] == agent_id(resource["name"])
        assert re.fullmatch(r"[a-zA-Z]([a-zA-Z0-9_-]?)+", resource["name"])
        assert resource["display_name"] and resource["description"]
        assert item["actions"] == []
        assert item["properties"] == {"enabled": True}


@pytest.mark.parametrize(
    ("upn", "agent"),
    [(BOB, "benefits-assistant"), (BOB, "travel-planner"), (ALICE, "finance-insights")],
)
def test_agent_without_access_is_403(fresh, as_user, upn, agent) -> None:
    api = as_user(fresh, upn)
    for response in (
        api.read("agent", agent),
        api.read("combined", agent),
        api.get("memory/export", {"scope": "agent", "agentObjectId": agent_id(agent)}),
        api.append("agent", "- sneaky", agent),
        api.imported("agent", "- sneaky", agent, mode="replace"),
        api.clear("agent", agent),
    ):
        assert_problem(response, 403)
    stored = coreapi.emulator(fresh).store.read(upn, agent_id(agent))
    assert stored.content_markdown == ""
    assert stored.created_on is None  # not even an empty document was created


def test_unknown_agent_is_404(pristine, as_user) -> None:
    alice = as_user(pristine, ALICE)
    assert_problem(alice.read("agent", "no-such-agent"), 404)
    assert_problem(alice.append("agent", "- x", "no-such-agent"), 404)
    # Names are case-sensitive, like resource names.
    assert_problem(alice.read("agent", "Benefits-Assistant"), 404)


@pytest.mark.parametrize(
    "object_id",
    [
        "benefits-assistant",
        "/instances/00000000-0000-0000-0000-000000000000/providers/FoundationaLLM.Agent/agents/",
        "/instances/00000000-0000-0000-0000-000000000000/providers/FoundationaLLM.Prompt/prompts/x",
        agent_id("benefits-assistant", instance="11111111-1111-1111-1111-111111111111"),
    ],
)
def test_malformed_agent_object_id_is_400(pristine, as_user, object_id) -> None:
    alice = as_user(pristine, ALICE)
    response = alice.get("memory", {"scope": "agent", "agentObjectId": object_id})
    assert_validation_problem(response, "agentObjectId")


def test_ownership_is_case_insensitive_by_upn(fresh, as_user, coreapi_tokens, demo) -> None:
    alice_user = demo.user(ALICE)
    shouting = Api(
        fresh.url,
        coreapi_tokens.delegated(dataclasses.replace(alice_user, upn="ALICE@CONTOSO.COM")),
    )
    alice = as_user(fresh, ALICE)
    body = shouting.read("user").json()
    assert body["upn"] == "ALICE@CONTOSO.COM"  # as the token spells it
    assert body["content_markdown"] == alice.content("user") != ""
    assert len(shouting.get("completions/agents").json()) == 3
    assert shouting.append("agent", "- from upper case", "it-helpdesk").ok
    assert alice.content("agent", "it-helpdesk").endswith("- from upper case\n")


# --- Validation table -----------------------------------------------------------------------


def test_missing_agent_object_id_for_scope_agent_is_400(pristine, as_user) -> None:
    api = as_user(pristine, ALICE)
    assert_validation_problem(api.read("agent"), "agentObjectId")
    assert_validation_problem(api.get("memory/export", {"scope": "agent"}), "agentObjectId")
    assert_validation_problem(
        api.post("memory/append", {"scope": "agent", "content_markdown": "x"}), "agent_object_id"
    )
    assert_validation_problem(
        api.post("memory/clear", {"scope": "agent", "confirm": True}), "agent_object_id"
    )
    assert_validation_problem(
        api.post("memory/import", {"scope": "agent", "content_markdown": "x"}), "agent_object_id"
    )


@pytest.mark.parametrize(
    "body",
    [
        {"scope": "user"},
        {"scope": "user", "confirm": False},
        {"scope": "user", "confirm": None},
        {"scope": "user", "confirm": "true"},
        {"scope": "user", "confirm": 1},
    ],
    ids=["missing", "false", "null", "string-true", "number-1"],
)
def test_clear_without_confirm_true_is_400(pristine, as_user, body) -> None:
    bob = as_user(pristine, BOB)
    assert_validation_problem(bob.post("memory/clear", body), "confirm")
    assert bob.content("user") == BOB_USER


@pytest.mark.parametrize("scope", ["everything", "User", "", "combined "])
def test_invalid_scope_on_read_is_400(pristine, as_user, scope) -> None:
    api = as_user(pristine, ALICE)
    if scope:  # an empty ?scope= means "default" on GET /memory, "missing" on export
        assert_validation_problem(api.get("memory", {"scope": scope}), "scope")
    assert_validation_problem(api.get("memory/export", {"scope": scope}), "scope")


@pytest.mark.parametrize("scope", ["combined", "everything", 7, None, ["user"]])
def test_invalid_scope_on_writes_is_400(pristine, as_user, scope) -> None:
    bob = as_user(pristine, BOB)
    assert_validation_problem(
        bob.post("memory/append", {"scope": scope, "content_markdown": "x"}), "scope"
    )
    assert_validation_problem(bob.post("memory/clear", {"scope": scope, "confirm": True}), "scope")
    assert_validation_problem(
        bob.post("memory/import", {"scope": scope, "content_markdown": "x"}), "scope"
    )
    assert bob.content("user") == BOB_USER


@pytest.mark.parametrize("mode", ["merge", "", "REPLACE", 1, True])
def test_invalid_import_mode_is_400(pristine, as_user, mode) -> None:
    bob = as_user(pristine, BOB)
    body = {"scope": "user", "content_markdown": "x", "mode": mode}
    assert_validation_problem(bob.post("memory/import", body), "mode")
    assert bob.content("user") == BOB_USER


@pytest.mark.parametrize("content", ["", "   ", "\n\t\n", None, 5, ["- x"]])
@pytest.mark.parametrize("endpoint", ["append", "import"])
def test_empty_content_markdown_is_400(pristine, as_user, endpoint, content) -> None:
    bob = as_user(pristine, BOB)
    body: dict[str, Any] = {
        "scope": "user",
        **({"mode": "replace"} if endpoint == "import" else {}),
    }
    if content is not None:
        body["content_markdown"] = content
    assert_validation_problem(bob.post(f"memory/{endpoint}", body), "content_markdown")
    assert bob.content("user") == BOB_USER


def test_validation_reports_every_bad_field(pristine, as_user) -> None:
    body = assert_problem(
        as_user(pristine, BOB).post(
            "memory/append", {"scope": "agent", "content_markdown": " ", "reason": 3}
        ),
        400,
    )
    assert body["errors"].keys() == {"agent_object_id", "content_markdown", "reason"}


def test_unknown_fields_are_ignored(fresh, as_user) -> None:
    api = as_user(fresh, ad_hoc_upn())
    response = api.append("user", "- x", colour="blue", Scope="agent", nested={"a": [1]})
    assert response.status_code == 200
    assert response.json()["scope"] == "user"


# --- Instance id, routing, OpenAPI ----------------------------------------------------------


def test_wrong_instance_id_is_403_plain_text(pristine, as_user, coreapi_tokens) -> None:
    token = coreapi_tokens.delegated(ALICE)
    for path in ("memory?scope=user", "memory/export?scope=user", "completions/agents"):
        response = requests.get(
            f"{pristine.url}/instances/11111111-1111-1111-1111-111111111111/{path}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        assert response.status_code == 403
        assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
        assert response.text == "Access denied. Invalid instance ID."
    wrong = Api(pristine.url, token, instance="not-the-instance")
    assert wrong.append("user", "- x").text == "Access denied. Invalid instance ID."


def test_wrong_instance_id_without_token_is_401_first(pristine) -> None:
    response = Api(pristine.url, instance="not-the-instance").read("user")
    assert_problem(response, 401)


def test_instance_id_matches_case_insensitively(pristine, as_user) -> None:
    api = as_user(pristine, BOB)
    api.instance = INSTANCE.upper()
    assert api.read("user").status_code == 200


def test_unknown_path_is_404_and_wrong_method_is_405(pristine, as_user) -> None:
    api = as_user(pristine, ALICE)
    assert_problem(api.get("memory/everything"), 404)
    assert_problem(requests.get(f"{pristine.url}/nowhere", timeout=10), 404)
    not_allowed = requests.delete(api.url("memory"), timeout=10)
    assert_problem(not_allowed, 405)
    assert "GET" in not_allowed.headers["Allow"]
    assert_problem(api.get("memory/append"), 405)
    assert_problem(api.post("memory/export", {"scope": "user"}), 405)


def test_openapi_document_describes_every_route(pristine) -> None:
    response = requests.get(f"{pristine.url}/openapi.json", timeout=10)  # no token
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.1")
    app = coreapi.emulator(pristine)
    served = {
        re.sub(r"<(\w+)>", lambda m: "{instanceId}" if m[1] == "instance_id" else m[0], r.rule)
        for r in app.url_map.iter_rules()
    }
    assert served == set(document["paths"])
    schemas = document["components"]["schemas"]
    assert set(schemas["MemoryResponse"]["properties"]) == MEMORY_KEYS
    assert document["servers"] == [{"url": pristine.url}]


# --- Persistence ----------------------------------------------------------------------------


def test_memory_persists_across_restart_and_seeds_once(tmp_path, idp, pki, coreapi_tokens) -> None:
    upn = ad_hoc_upn()
    first = start_emulator(tmp_path, idp.url, pki)
    try:
        api = Api(first.url, coreapi_tokens.delegated(upn))
        written = api.append("user", "- survives restarts").json()
        alice_before = Api(first.url, coreapi_tokens.delegated(ALICE)).content("user")
    finally:
        first.stop()
    assert (tmp_path / "coreapi.sqlite3").exists()
    second = start_emulator(tmp_path, idp.url, pki)
    try:
        again = Api(second.url, coreapi_tokens.delegated(upn)).read("user").json()
        assert again == written
        alice_after = Api(second.url, coreapi_tokens.delegated(ALICE)).content("user")
        assert alice_after == alice_before  # the demo was not seeded a second time
        assert len(heading_times(alice_after)) == 3
    finally:
        second.stop()
