"""Legacy store emulator (seed 003): memory entries, every refusal the seed names, paging,
the search cap and each PATCH form, over HTTP with the portal's real client token. Tests
that write use an emulator of their own (`fresh_legacy`)."""

from __future__ import annotations

import pytest

from devstack.serve import RunningServer
from tests.conftest import TokenMinter
from tests.devstack.legacy_api import ALICE, BOB, HELPDESK, TRAVEL, Api, assert_error

PREFS = "/memories/preferences.md"


@pytest.fixture
def api(legacy: RunningServer, coreapi_tokens: TokenMinter) -> Api:
    return Api(legacy.url, coreapi_tokens.legacy())


@pytest.fixture
def fresh(fresh_legacy: RunningServer, coreapi_tokens: TokenMinter) -> Api:
    return Api(fresh_legacy.url, coreapi_tokens.legacy())


# --- list --------------------------------------------------------------------------------


def test_list_is_metadata_only_in_path_order_per_scope(api: Api) -> None:
    response = api.entries(TRAVEL, ALICE)

    assert response.status_code == 200
    entries = response.json()["memory_entries"]
    paths = [entry["path"] for entry in entries]
    assert paths == [
        "/memories/preferences.md",
        "/memories/profile.md",
        "/memories/trips/2026-06-berlin.md",
    ]
    assert all("contents" not in entry for entry in entries)
    assert all(entry["has_contents"] is True for entry in entries)
    assert {e["scope"] for e in entries} == {ALICE}
    assert {e["memory_store_name"] for e in entries} == {TRAVEL}
    assert entries[0]["create_time"] == "2026-05-11T09:14:00.000Z"
    assert "next_page_token" not in response.json()


def test_scopes_are_partitions(api: Api) -> None:
    bob = [e["path"] for e in api.entries(HELPDESK, BOB).json()["memory_entries"]]
    alice = [e["path"] for e in api.entries(HELPDESK, ALICE).json()["memory_entries"]]

    assert bob == ["/memories/devices.md", "/memories/tickets/printer.md"]
    assert alice == ["/memories/devices.md"]
    assert api.entries(HELPDESK, "carol@contoso.com").json() == {"memory_entries": []}


def test_path_prefix_filters(api: Api) -> None:
    found = api.entries(TRAVEL, ALICE, path_prefix="/memories/trips/").json()["memory_entries"]

    assert [e["path"] for e in found] == ["/memories/trips/2026-06-berlin.md"]


def test_paging_walks_every_entry_once(api: Api) -> None:
    seen: list[str] = []
    token = None
    for _ in range(10):
        params = {"page_size": 1, **({"page_token": token} if token else {})}
        body = api.entries(TRAVEL, ALICE, **params).json()
        assert len(body["memory_entries"]) <= 1
        seen += [e["path"] for e in body["memory_entries"]]
        token = body.get("next_page_token")
        if token is None:
            break
    assert seen == [e["path"] for e in api.entries(TRAVEL, ALICE).json()["memory_entries"]]


def test_page_size_is_capped_at_100(fresh: Api) -> None:
    for number in range(105):
        assert fresh.create(HELPDESK, "cap@contoso.com", {"path": f"/memories/{number:03}.md"}).ok

    first = fresh.entries(HELPDESK, "cap@contoso.com", page_size=500).json()
    rest = fresh.entries(
        HELPDESK, "cap@contoso.com", page_size=500, page_token=first["next_page_token"]
    ).json()

    assert len(first["memory_entries"]) == 100
    assert [e["path"] for e in rest["memory_entries"]] == [
        f"/memories/{n}.md" for n in range(100, 105)
    ]
    assert "next_page_token" not in rest


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"scope": ""},
        {"scope": ALICE, "page_size": "0"},
        {"scope": ALICE, "page_size": "x"},
        {"scope": ALICE, "page_token": "not base64!"},
    ],
)
def test_list_refusals(api: Api, params) -> None:
    response = api.call("GET", f"/{TRAVEL}/entries", params=params)

    assert_error(response, 400, "INVALID_PARAMETER_VALUE")


# --- get -----------------------------------------------------------------------------------


def test_get_returns_contents(api: Api) -> None:
    entry = api.get(TRAVEL, ALICE, PREFS).json()

    assert entry["path"] == PREFS
    assert entry["contents"].startswith("- Prefers aisle seats")
    assert entry["description"] == "Seat, flight and hotel preferences"


def test_get_refusals(api: Api) -> None:
    assert_error(api.get(TRAVEL, BOB, PREFS), 404, "RESOURCE_DOES_NOT_EXIST")
    assert_error(api.get(TRAVEL, ALICE, "/memories/none.md"), 404, "RESOURCE_DOES_NOT_EXIST")
    assert_error(api.get(TRAVEL, ALICE, "/other/x.md"), 400, "INVALID_PARAMETER_VALUE")
    missing_scope = api.call("GET", f"/{TRAVEL}/entries:get", params={"path": PREFS})
    assert_error(missing_scope, 400, "INVALID_PARAMETER_VALUE")


# --- create --------------------------------------------------------------------------------


def test_create_then_get(fresh: Api) -> None:
    body = {"path": "/memories/new.md", "contents": "hello", "description": "greeting"}
    created = fresh.create(TRAVEL, ALICE, body)

    assert created.status_code == 200
    assert created.json()["contents"] == "hello"
    assert created.json()["create_time"] == created.json()["update_time"]
    assert fresh.get(TRAVEL, ALICE, "/memories/new.md").json()["description"] == "greeting"


def test_create_without_contents_is_an_empty_entry(fresh: Api) -> None:
    created = fresh.create(TRAVEL, ALICE, {"path": "/memories/empty.md"}).json()

    assert (created["contents"], created["description"], created["has_contents"]) == ("", "", False)


def test_create_on_an_existing_path_is_409_and_keeps_the_entry(fresh: Api) -> None:
    before = fresh.get(TRAVEL, ALICE, PREFS).json()

    response = fresh.create(TRAVEL, ALICE, {"path": PREFS, "contents": "overwritten?"})

    assert_error(response, 409, "RESOURCE_ALREADY_EXISTS")
    assert fresh.get(TRAVEL, ALICE, PREFS).json() == before


def test_the_same_path_in_another_scope_is_another_entry(fresh: Api) -> None:
    assert fresh.create(TRAVEL, BOB, {"path": PREFS, "contents": "bob's"}).status_code == 200
    assert fresh.get(TRAVEL, ALICE, PREFS).json()["contents"].startswith("- Prefers aisle")


@pytest.mark.parametrize(
    "path",
    [
        None,
        "",
        "/memories/",
        "memories/x.md",
        "/Memories/x.md",
        "/notes/x.md",
        "/memories//x.md",
        "/memories/../x.md",
        "/memories/./x.md",
        "/memories/x\n.md",
        "/memories/" + "a" * 1100,
        42,
    ],
)
def test_create_refuses_paths_outside_memories(fresh: Api, path) -> None:
    response = fresh.create(TRAVEL, ALICE, {"path": path, "contents": "x"})

    assert_error(response, 400, "INVALID_PARAMETER_VALUE")


def test_create_refusals(fresh: Api) -> None:
    no_scope = fresh.call("POST", f"/{TRAVEL}/entries", json={"path": "/memories/a.md"})
    assert_error(no_scope, 400, "INVALID_PARAMETER_VALUE")
    wrong_type = fresh.create(TRAVEL, ALICE, {"path": "/memories/a.md", "contents": 5})
    assert_error(wrong_type, 400, "INVALID_PARAMETER_VALUE")
    not_json = fresh.call(
        "POST",
        f"/{TRAVEL}/entries",
        params={"scope": ALICE},
        data="{",
        headers={"Content-Type": "application/json"},
    )
    assert_error(not_json, 400, "MALFORMED_REQUEST")
    assert fresh.entries(TRAVEL, ALICE, path_prefix="/memories/a.md").json() == {
        "memory_entries": []
    }


# --- update (PATCH) ------------------------------------------------------------------------


def _patch(api: Api, **edit) -> dict:
    response = api.patch(TRAVEL, {"scope": ALICE, "path": PREFS, **edit})
    assert response.status_code == 200, response.text
    return response.json()


def test_replace_all_overwrites_and_keeps_the_description(fresh: Api) -> None:
    updated = _patch(fresh, replace_all={"contents": "Spanish, casual."})

    assert updated["contents"] == "Spanish, casual."
    assert updated["description"] == "Seat, flight and hotel preferences"
    assert updated["update_time"] > updated["create_time"]
    assert fresh.get(TRAVEL, ALICE, PREFS).json()["contents"] == "Spanish, casual."


def test_description_is_replaced_when_given(fresh: Api) -> None:
    updated = _patch(fresh, replace_all={"contents": "x"}, description="new summary")

    assert updated["description"] == "new summary"


def test_str_replace_replaces_the_single_occurrence(fresh: Api) -> None:
    updated = _patch(fresh, str_replace={"old_str": "aisle", "new_str": "window"})

    assert updated["contents"].startswith("- Prefers window seats and morning flights")


def test_str_replace_must_match_exactly_once(fresh: Api) -> None:
    before = fresh.get(TRAVEL, ALICE, PREFS).json()
    none = fresh.patch(
        TRAVEL, {"scope": ALICE, "path": PREFS, "str_replace": {"old_str": "zzz", "new_str": ""}}
    )
    twice = fresh.patch(
        TRAVEL, {"scope": ALICE, "path": PREFS, "str_replace": {"old_str": "- ", "new_str": "* "}}
    )
    empty = fresh.patch(
        TRAVEL, {"scope": ALICE, "path": PREFS, "str_replace": {"old_str": "", "new_str": "x"}}
    )

    assert "not found" in assert_error(none, 400, "INVALID_PARAMETER_VALUE")["message"]
    assert "2 times" in assert_error(twice, 400, "INVALID_PARAMETER_VALUE")["message"]
    assert_error(empty, 400, "INVALID_PARAMETER_VALUE")
    assert fresh.get(TRAVEL, ALICE, PREFS).json() == before


def test_insert_at_the_top_after_a_line_and_at_the_end(fresh: Api) -> None:
    fresh.create(TRAVEL, ALICE, {"path": "/memories/lines.md", "contents": "one\ntwo\n"})

    def insert(**fields) -> str:
        body = {"scope": ALICE, "path": "/memories/lines.md", "insert": fields}
        return fresh.patch(TRAVEL, body).json()["contents"]

    assert insert(insert_line=0, insert_text="zero") == "zero\none\ntwo\n"
    assert insert(insert_line=2, insert_text="one and a half") == (
        "zero\none\none and a half\ntwo\n"
    )
    assert insert(insert_text="three\n") == "zero\none\none and a half\ntwo\nthree\n"


def test_insert_refusals(fresh: Api) -> None:
    for fields in (
        {"insert_line": 99, "insert_text": "x"},
        {"insert_line": -1, "insert_text": "x"},
        {"insert_line": "1", "insert_text": "x"},
        {"insert_line": 0},
    ):
        response = fresh.patch(TRAVEL, {"scope": ALICE, "path": PREFS, "insert": fields})
        assert_error(response, 400, "INVALID_PARAMETER_VALUE")


@pytest.mark.parametrize(
    "edits",
    [
        {},
        {"description": "only a description"},
        {"replace_all": {"contents": "a"}, "insert": {"insert_text": "b"}},
        {"replace_all": {"contents": "a"}, "str_replace": {"old_str": "x", "new_str": "y"}},
        {"replace_all": "not an object"},
        {"replace_all": {}},
    ],
)
def test_patch_needs_exactly_one_well_formed_edit(fresh: Api, edits) -> None:
    before = fresh.get(TRAVEL, ALICE, PREFS).json()

    response = fresh.patch(TRAVEL, {"scope": ALICE, "path": PREFS, **edits})

    assert_error(response, 400, "INVALID_PARAMETER_VALUE")
    assert fresh.get(TRAVEL, ALICE, PREFS).json() == before


def test_patch_refusals(fresh: Api) -> None:
    edit = {"replace_all": {"contents": "x"}}
    missing = fresh.patch(TRAVEL, {"scope": ALICE, "path": "/memories/none.md", **edit})
    no_scope = fresh.patch(TRAVEL, {"path": PREFS, **edit})
    bad_path = fresh.patch(TRAVEL, {"scope": ALICE, "path": "/elsewhere.md", **edit})

    assert_error(missing, 404, "RESOURCE_DOES_NOT_EXIST")
    assert_error(no_scope, 400, "INVALID_PARAMETER_VALUE")
    assert_error(bad_path, 400, "INVALID_PARAMETER_VALUE")


def test_paths_are_immutable(fresh: Api) -> None:
    """The seed has no rename: PATCH finds the entry by path and a new path is not a field,
    so only create + delete moves an entry."""
    _patch(fresh, replace_all={"contents": "kept here"}, new_path="/memories/moved.md")

    assert fresh.get(TRAVEL, ALICE, PREFS).json()["contents"] == "kept here"
    assert_error(fresh.get(TRAVEL, ALICE, "/memories/moved.md"), 404, "RESOURCE_DOES_NOT_EXIST")


# --- delete --------------------------------------------------------------------------------


def test_delete_then_gone_then_404(fresh: Api) -> None:
    response = fresh.delete(TRAVEL, ALICE, PREFS)

    assert response.status_code == 200
    assert response.json() == {}
    assert_error(fresh.get(TRAVEL, ALICE, PREFS), 404, "RESOURCE_DOES_NOT_EXIST")
    assert_error(fresh.delete(TRAVEL, ALICE, PREFS), 404, "RESOURCE_DOES_NOT_EXIST")
    # Undo is a re-create of the same path.
    assert fresh.create(TRAVEL, ALICE, {"path": PREFS, "contents": "back"}).status_code == 200


def test_delete_refusals(fresh: Api) -> None:
    no_scope = fresh.call("DELETE", f"/{TRAVEL}/entries", params={"path": PREFS})
    bad_path = fresh.delete(TRAVEL, ALICE, "/tmp/x")

    assert_error(no_scope, 400, "INVALID_PARAMETER_VALUE")
    assert_error(bad_path, 400, "INVALID_PARAMETER_VALUE")
    assert fresh.get(TRAVEL, ALICE, PREFS).status_code == 200


# --- search --------------------------------------------------------------------------------


def test_search_matches_path_description_and_contents(api: Api) -> None:
    def paths(query: str, **extra) -> list[str]:
        body = {"scope": ALICE, "query": query, **extra}
        return [e["path"] for e in api.search(TRAVEL, body).json()["memory_entries"]]

    assert paths("aisle") == [PREFS]  # contents
    assert paths("traveller") == ["/memories/profile.md"]  # description
    assert paths("berlin") == ["/memories/trips/2026-06-berlin.md"]  # path, case-insensitive
    assert paths("aisle hotel")[0] == PREFS  # more words matched ranks first
    assert paths("hotel", path_prefix="/memories/trips/") == ["/memories/trips/2026-06-berlin.md"]
    assert paths("nothing-like-this") == []


def test_search_results_carry_contents(api: Api) -> None:
    found = api.search(TRAVEL, {"scope": ALICE, "query": "aisle"}).json()["memory_entries"]

    assert found[0]["contents"].startswith("- Prefers aisle seats")
    assert found[0]["score"] == 1


def test_search_is_per_scope(api: Api) -> None:
    found = api.search(HELPDESK, {"scope": BOB, "query": "ThinkPad"}).json()

    assert found == {"memory_entries": []}  # alice's laptop, not bob's


def test_search_top_k_defaults_to_10_and_caps_at_50(fresh: Api) -> None:
    for number in range(60):
        body = {"path": f"/memories/{number:02}.md", "contents": "needle"}
        assert fresh.create(HELPDESK, "many@contoso.com", body).ok

    def count(**extra) -> int:
        body = {"scope": "many@contoso.com", "query": "needle", **extra}
        return len(fresh.search(HELPDESK, body).json()["memory_entries"])

    assert count() == 10
    assert count(top_k=50) == 50
    too_many = fresh.search(HELPDESK, {"scope": "many@contoso.com", "query": "x", "top_k": 51})
    assert_error(too_many, 400, "INVALID_PARAMETER_VALUE")


@pytest.mark.parametrize(
    "body",
    [
        {"query": "aisle"},
        {"scope": ALICE},
        {"scope": ALICE, "query": "   "},
        {"scope": ALICE, "query": "aisle", "top_k": 0},
        {"scope": ALICE, "query": "aisle", "top_k": "5"},
        {"scope": ALICE, "query": 7},
    ],
)
def test_search_refusals(api: Api, body) -> None:
    assert_error(api.search(TRAVEL, body), 400, "INVALID_PARAMETER_VALUE")
