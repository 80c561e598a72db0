"""Conditional writes, the emulator's Memory Portal extension (docs/conditional-writes.md):
ETag on reads and writes, If-Match on import and clear, 412 on a stale version.

Real HTTP against an emulator; each test gets its own freshly seeded store (`fresh`) or an
ad-hoc user, so tests never see each other's writes.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests

from devstack import coreapi
from devstack.coreapi.store import USER_SCOPE_KEY, MemoryStore, PreconditionFailed
from tests.devstack.test_coreapi import (
    ALICE,
    BOB,
    BOB_USER,
    Api,
    ad_hoc_upn,
    agent_id,
    assert_problem,
    assert_validation_problem,
)

ETAG_SHAPE = re.compile(r'"[0-9a-f]{64}"')
EMPTY_ETAG = '"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"'
STALE = '"' + "0" * 64 + '"'
DETAIL = "The memory changed since the version in If-Match."


def sha256_etag(content: str) -> str:
    return f'"{hashlib.sha256(content.encode("utf-8")).hexdigest()}"'


def body_for(scope: str, agent: str | None, **fields: Any) -> dict[str, Any]:
    body = {"scope": scope, **fields}
    if agent:
        body["agent_object_id"] = agent_id(agent)
    return body


def import_if(
    api: Api,
    if_match: str | None,
    content: str,
    scope: str = "user",
    agent: str | None = None,
    mode: str = "replace",
) -> requests.Response:
    headers = {"If-Match": if_match} if if_match is not None else None
    body = body_for(scope, agent, content_markdown=content, mode=mode)
    return api.post("memory/import", body, headers)


def clear_if(
    api: Api, if_match: str | None, scope: str = "user", agent: str | None = None
) -> requests.Response:
    headers = {"If-Match": if_match} if if_match is not None else None
    return api.post("memory/clear", body_for(scope, agent, confirm=True), headers)


def etag_of(api: Api, scope: str = "user", agent: str | None = None) -> str:
    response = api.read(scope, agent)
    assert response.status_code == 200, response.text
    return response.headers["ETag"]


def assert_written(response: requests.Response) -> dict[str, Any]:
    """200, and the ETag names exactly the content written."""
    assert response.status_code == 200, response.text
    body = response.json()
    assert response.headers["ETag"] == sha256_etag(body["content_markdown"])
    return body


def assert_precondition_failed(response: requests.Response) -> None:
    body = assert_problem(response, 412)
    assert body["type"] == "https://tools.ietf.org/html/rfc9110#section-15.5.13"
    assert body["title"] == "Precondition Failed"
    assert body["detail"] == DETAIL
    assert body.keys() == {"type", "title", "status", "detail", "traceId"}
    assert "ETag" not in response.headers


# --- ETag on reads --------------------------------------------------------------------------


def test_get_user_and_agent_carry_the_sha256_of_the_content(fresh, as_user) -> None:
    alice = as_user(fresh, ALICE)
    for scope, agent in (("user", None), ("agent", "benefits-assistant")):
        response = alice.read(scope, agent)
        content = response.json()["content_markdown"]
        assert content  # seeded
        etag = response.headers["ETag"]
        assert ETAG_SHAPE.fullmatch(etag)  # strong, lower-case hex, quoted
        assert etag == sha256_etag(content)
    assert etag_of(alice, "user") != etag_of(alice, "agent", "benefits-assistant")


def test_get_combined_carries_no_etag(fresh, as_user) -> None:
    alice = as_user(fresh, ALICE)
    for agent in (None, "benefits-assistant"):
        response = alice.read("combined", agent)
        assert response.status_code == 200
        assert "ETag" not in response.headers
    assert "ETag" not in alice.read().headers  # scope defaults to combined


def test_missing_memory_has_the_etag_of_the_empty_string(fresh, as_user) -> None:
    nobody = as_user(fresh, ad_hoc_upn())
    assert etag_of(nobody, "user") == EMPTY_ETAG == sha256_etag("")
    assert etag_of(as_user(fresh, BOB), "agent", "it-helpdesk") == EMPTY_ETAG


def test_etag_hashes_utf8(fresh, as_user) -> None:
    api = as_user(fresh, ad_hoc_upn())
    text = "- Zoë prefers \u201cquotes\u201d \U0001f600\n"
    assert import_if(api, None, text).ok
    assert etag_of(api) == f'"{hashlib.sha256(text.encode("utf-8")).hexdigest()}"'


# --- ETag on writes -------------------------------------------------------------------------


def test_successful_writes_answer_with_the_new_etag(fresh, as_user) -> None:
    alice = as_user(fresh, ALICE)
    writes = [
        lambda: alice.append("user", "- appended"),
        lambda: alice.imported("user", "- imported"),
        lambda: alice.imported("agent", "# Replaced\n", "it-helpdesk", mode="replace"),
        lambda: alice.append("agent", "- appended", "it-helpdesk"),
        lambda: alice.clear("agent", "it-helpdesk"),
    ]
    for write in writes:
        response = write()
        body = assert_written(response)
        agent = "it-helpdesk" if body["scope"] == "agent" else None
        assert etag_of(alice, body["scope"], agent) == response.headers["ETag"]
    assert response.headers["ETag"] == EMPTY_ETAG


# --- If-Match on import and clear -----------------------------------------------------------


def test_import_with_the_current_etag_succeeds(fresh, as_user) -> None:
    alice = as_user(fresh, ALICE)
    before = etag_of(alice, "agent", "travel-planner")
    replaced = assert_written(import_if(alice, before, "# Mine\n", "agent", "travel-planner"))
    assert replaced["content_markdown"] == "# Mine\n"
    after = etag_of(alice, "agent", "travel-planner")
    assert after == sha256_etag("# Mine\n") != before
    appended = import_if(alice, after, "- more", "agent", "travel-planner", mode="append")
    assert assert_written(appended)["content_markdown"].startswith("# Mine\n\n## Imported ")
    assert appended.headers["ETag"] == etag_of(alice, "agent", "travel-planner")


def test_clear_with_the_current_etag_succeeds(fresh, as_user) -> None:
    bob = as_user(fresh, BOB)
    response = clear_if(bob, etag_of(bob), "user")
    assert assert_written(response)["content_markdown"] == ""
    assert response.headers["ETag"] == EMPTY_ETAG == etag_of(bob)


@pytest.mark.parametrize(
    "write",
    [
        lambda api, tag: import_if(api, tag, "- overwrite"),
        lambda api, tag: import_if(api, tag, "- more", mode="append"),
        lambda api, tag: clear_if(api, tag),
    ],
    ids=["import-replace", "import-append", "clear"],
)
def test_stale_etag_is_412_and_changes_nothing(fresh, as_user, write) -> None:
    bob = as_user(fresh, BOB)
    stale = etag_of(bob)
    assert bob.append("user", "- changed meanwhile").ok
    before = bob.read("user").json()
    for tag in (stale, STALE):
        assert_precondition_failed(write(bob, tag))
    assert bob.read("user").json() == before  # content, created_on and updated_on
    assert before["content_markdown"].startswith(BOB_USER)


def test_stale_etag_on_a_missing_document_creates_nothing(fresh, as_user) -> None:
    upn = ad_hoc_upn()
    api = as_user(fresh, upn)
    assert_precondition_failed(clear_if(api, STALE))
    assert_precondition_failed(import_if(api, STALE, "- x"))
    stored = coreapi.emulator(fresh).store.read(upn, USER_SCOPE_KEY)
    assert stored.created_on is None  # not even an empty document


def test_if_match_is_checked_per_document(fresh, as_user) -> None:
    alice = as_user(fresh, ALICE)
    user_tag = etag_of(alice, "user")
    assert_precondition_failed(clear_if(alice, user_tag, "agent", "benefits-assistant"))
    assert alice.content("agent", "benefits-assistant") != ""


def test_star_matches_any_version(fresh, as_user) -> None:
    alice = as_user(fresh, ALICE)
    assert assert_written(import_if(alice, "*", "- star"))["content_markdown"] == "- star"
    assert assert_written(clear_if(alice, "*", "agent", "benefits-assistant"))
    # Missing memory reads as "", so it too is "a current version".
    api = as_user(fresh, ad_hoc_upn())
    assert assert_written(import_if(api, "*", "- first"))["content_markdown"] == "- first"


def test_etag_of_the_empty_string_matches_a_missing_document(fresh, as_user) -> None:
    api = as_user(fresh, ad_hoc_upn())
    assert assert_written(clear_if(api, EMPTY_ETAG))["created_on"] is not None


def test_a_list_with_one_matching_etag_matches(fresh, as_user) -> None:
    bob = as_user(fresh, BOB)
    current = etag_of(bob)
    assert_precondition_failed(import_if(bob, f'{STALE}, "not-a-hash"', "- x"))
    response = import_if(bob, f'{STALE}, "not-a-hash",{current}', "- listed")
    assert assert_written(response)["content_markdown"] == "- listed"
    assert_written(clear_if(bob, f"{STALE},{sha256_etag('- listed')}"))


def test_comparison_is_strong_and_exact(fresh, as_user) -> None:
    bob = as_user(fresh, BOB)
    current = etag_of(bob)
    # Opaque tags compare character for character: upper-case hex is another tag.
    assert_precondition_failed(import_if(bob, current.upper(), "- x"))
    assert_precondition_failed(import_if(bob, current[:-2] + '"', "- x"))
    assert_validation_problem(import_if(bob, current.strip('"'), "- x"), "If-Match")
    assert bob.content("user") == BOB_USER


def test_absent_if_match_is_unconditional_as_in_the_contract(fresh, as_user) -> None:
    bob = as_user(fresh, BOB)
    read = bob.read("user").json()
    assert bob.append("user", "- lands in between").ok
    # The contract's replace has no precondition: the append is overwritten.
    replaced = import_if(bob, None, read["content_markdown"] + "- edited\n")
    assert assert_written(replaced)["content_markdown"] == BOB_USER + "- edited\n"
    assert "lands in between" not in bob.content("user")
    assert assert_written(clear_if(bob, None))["content_markdown"] == ""


def test_append_ignores_if_match(fresh, as_user) -> None:
    bob = as_user(fresh, BOB)
    response = bob.post(
        "memory/append", body_for("user", None, content_markdown="- x"), {"If-Match": STALE}
    )
    assert assert_written(response)["content_markdown"].endswith("- x\n")


@pytest.mark.parametrize(
    "value",
    [
        "",
        "abc",
        "0" * 64,
        'W/"abc"',
        '*, "abc"',
        "**",
        '"abc" "def"',
        '"abc',
        '"abc"def',
        '"a"b"',
        ",",
        "'abc'",
    ],
)
@pytest.mark.parametrize("endpoint", ["import", "clear"])
def test_malformed_if_match_is_400(fresh, as_user, endpoint, value) -> None:
    bob = as_user(fresh, BOB)
    if endpoint == "import":
        response = import_if(bob, value, "- x")
    else:
        response = clear_if(bob, value)
    body = assert_validation_problem(response, "If-Match")
    assert body["title"] == "One or more validation errors occurred."
    assert bob.content("user") == BOB_USER


def test_malformed_if_match_is_reported_with_the_body_errors(fresh, as_user) -> None:
    bob = as_user(fresh, BOB)
    response = bob.post(
        "memory/import", {"scope": "user", "content_markdown": " ", "mode": "x"}, {"If-Match": "x"}
    )
    assert assert_problem(response, 400)["errors"].keys() == {
        "content_markdown",
        "mode",
        "If-Match",
    }


def test_validation_and_access_come_before_the_precondition(fresh, as_user) -> None:
    bob = as_user(fresh, BOB)
    assert_validation_problem(
        bob.post("memory/clear", {"scope": "user"}, {"If-Match": STALE}), "confirm"
    )
    assert_problem(clear_if(bob, STALE, "agent", "travel-planner"), 403)
    assert_problem(clear_if(bob, STALE, "agent", "no-such-agent"), 404)


# --- The race the extension exists for ------------------------------------------------------


def test_append_between_read_and_conditional_import_is_412_and_survives(fresh, as_user) -> None:
    alice = as_user(fresh, ALICE)
    # The portal reads the document the user starts editing ...
    read = alice.read("agent", "travel-planner")
    edited = read.json()["content_markdown"].replace("aisle", "window")
    assert "window" in edited
    # ... an agent appends a fact meanwhile ...
    assert alice.append("agent", "- Lands in between.", "travel-planner", reason="agent").ok
    # ... and the portal's replace, conditional on what it read, is refused.
    refused = import_if(alice, read.headers["ETag"], edited, "agent", "travel-planner")
    assert_precondition_failed(refused)
    assert alice.content("agent", "travel-planner").endswith("- Lands in between.\n")
    # Re-read, reapply, retry: now the edit and the append both survive.
    again = alice.read("agent", "travel-planner")
    merged = again.json()["content_markdown"].replace("aisle", "window")
    done = assert_written(
        import_if(alice, again.headers["ETag"], merged, "agent", "travel-planner")
    )
    assert done["content_markdown"].endswith("- Lands in between.\n")
    assert "window seats" in done["content_markdown"]


def test_concurrent_conditional_replaces_and_appends_lose_nothing(server, as_user) -> None:
    """Optimistic read-modify-write loops racing each other and plain appends: if the check
    and the write were not atomic, two writers holding the same ETag could both succeed and
    one's line (or an append) would vanish."""
    api = as_user(server, ad_hoc_upn())
    writers, lines_each, appends = 8, 4, 16
    attempts = {"412": 0}
    lock = threading.Lock()

    def conditional_writer(n: int) -> None:
        for i in range(lines_each):
            for _ in range(500):
                read = api.read("user")
                content = read.json()["content_markdown"]
                line = f"- writer {n} line {i}\n"
                response = import_if(api, read.headers["ETag"], content.rstrip("\n") + "\n" + line)
                if response.status_code == 200:
                    break
                assert_precondition_failed(response)
                with lock:
                    attempts["412"] += 1
            else:
                pytest.fail("a conditional writer never got through")

    def appender(n: int) -> None:
        assert api.append("user", f"- appended {n}").status_code == 200

    with ThreadPoolExecutor(max_workers=writers + appends) as pool:
        futures = [pool.submit(conditional_writer, n) for n in range(writers)]
        futures += [pool.submit(appender, n) for n in range(appends)]
        for future in futures:
            future.result()
    content = api.content("user")
    for n in range(writers):
        for i in range(lines_each):
            assert f"- writer {n} line {i}\n" in content
    for n in range(appends):
        assert f"- appended {n}\n" in content
    assert attempts["412"] > 0  # the writers really did collide


def test_store_checks_the_precondition_under_the_write_lock(tmp_path) -> None:
    """White-box: while the precondition runs, no other connection can start a write."""
    store = MemoryStore(tmp_path)
    seen: list[str] = []

    def precondition(current: str) -> bool:
        other = sqlite3.connect(store.path, timeout=0, isolation_level=None)
        try:
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
        finally:
            other.close()
        seen.append(current)
        return current == ""

    at = coreapi.app.utcnow()
    doc = store.update("u", USER_SCOPE_KEY, lambda _: "- one", at, precondition)
    assert doc.content_markdown == "- one"
    with pytest.raises(PreconditionFailed):
        store.update("u", USER_SCOPE_KEY, lambda _: "- two", at, precondition)
    assert seen == ["", "- one"]
    assert store.read("u", USER_SCOPE_KEY).content_markdown == "- one"


# --- OpenAPI --------------------------------------------------------------------------------


def test_openapi_documents_the_extension(server) -> None:
    document = requests.get(f"{server.url}/openapi.json", timeout=10).json()
    paths = document["paths"]
    memory = "/instances/{instanceId}/memory"
    extension = "x-memory-portal-extension"
    for path, method in (
        (memory, "get"),
        (f"{memory}/append", "post"),
        (f"{memory}/clear", "post"),
        (f"{memory}/import", "post"),
    ):
        etag = paths[path][method]["responses"]["200"]["headers"]["ETag"]
        assert etag[extension] is True
        assert "conditional-writes.md" in etag["description"]
    for path in (f"{memory}/clear", f"{memory}/import"):
        operation = paths[path]["post"]
        (if_match,) = [p for p in operation["parameters"] if p["name"] == "If-Match"]
        assert if_match["in"] == "header"
        assert if_match["required"] is False
        assert if_match[extension] is True
        assert operation["responses"]["412"][extension] is True
        assert "application/problem+json" in operation["responses"]["412"]["content"]
    append = paths[f"{memory}/append"]["post"]
    assert "If-Match" not in [p["name"] for p in append["parameters"]]
    assert "412" not in append["responses"]
