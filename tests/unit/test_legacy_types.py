"""memory_ui.sources.legacy's pure parts: the scope template, the agent -> store configuration,
strict response parsing and the error hierarchy over whatever body came back."""

from __future__ import annotations

import pytest
from requests.structures import CaseInsensitiveDict

from memory_ui.sources.coreapi import CoreAPIError
from memory_ui.sources.legacy import (
    LegacyBadRequest,
    LegacyConflict,
    LegacyForbidden,
    LegacyNotFound,
    LegacyOutcomeUnknown,
    LegacyRateLimited,
    LegacyUnauthorized,
    LegacyUnavailable,
    LegacyUnexpectedResponse,
    MemoryEntry,
    parse_store_agents,
    scope_for,
)
from memory_ui.sources.legacy.errors import parse_error
from memory_ui.sources.protocol import SourceError

ENTRY = {
    "path": "/memories/a.md",
    "description": "d",
    "scope": "alice@contoso.com",
    "memory_store_name": "main.agents.s",
    "has_contents": True,
    "create_time": "2026-05-11T09:14:00.000Z",
    "update_time": "2026-05-11T09:14:00.000Z",
}


def test_scope_template_uses_the_verified_identity() -> None:
    assert scope_for("{upn}", upn="alice@contoso.com", oid="o-1") == "alice@contoso.com"
    assert scope_for("user-{oid}", upn="alice@contoso.com", oid="o-1") == "user-o-1"


@pytest.mark.parametrize("template", ["{name}", "{0}", "{upn", ""])
def test_scope_template_refuses_anything_else(template: str) -> None:
    with pytest.raises(ValueError, match="scope"):
        scope_for(template, upn="alice@contoso.com", oid="o-1")


def test_store_agents_configuration() -> None:
    raw = '{"travel-planner": "main.agents.travel_planner_memory"}'

    assert parse_store_agents(raw) == {"travel-planner": "main.agents.travel_planner_memory"}
    assert parse_store_agents("") == {}


@pytest.mark.parametrize(
    "raw", ["[1]", "{", '{"a": 1}', '{"a": "main.agents"}', '{"a": "main.agents.s/x"}']
)
def test_store_agents_configuration_refuses_bad_values(raw: str) -> None:
    with pytest.raises(ValueError, match=r"JSON|catalog\.schema\.store"):
        parse_store_agents(raw)


def test_entry_parsing_is_strict() -> None:
    entry = MemoryEntry.from_json({**ENTRY, "contents": "x", "score": 2})
    assert (entry.contents, entry.score, entry.create_time.year) == ("x", 2, 2026)
    assert MemoryEntry.from_json(ENTRY).contents is None

    for broken in (
        {**ENTRY, "path": 5},
        {**ENTRY, "has_contents": "yes"},
        {**ENTRY, "update_time": "2026-05-11T09:14:00"},  # no zone
        {**ENTRY, "score": True},
        {k: v for k, v in ENTRY.items() if k != "scope"},
    ):
        with pytest.raises(ValueError, match=r" is not | has no "):
            MemoryEntry.from_json(broken)


@pytest.mark.parametrize(
    ("status", "kind", "portal_status"),
    [
        (400, LegacyBadRequest, 400),
        (401, LegacyUnauthorized, 502),
        (403, LegacyForbidden, 403),
        (404, LegacyNotFound, 404),
        (409, LegacyConflict, 409),
        (429, LegacyRateLimited, 503),
        (500, LegacyUnavailable, 503),
        (503, LegacyUnavailable, 503),
        (418, LegacyUnexpectedResponse, 502),
    ],
)
def test_status_picks_the_class(status: int, kind: type, portal_status: int) -> None:
    body = b'{"error_code": "SOME_CODE", "message": "secret path /memories/x"}'
    error = parse_error(status, body, CaseInsensitiveDict())

    assert type(error) is kind
    assert error.portal_status == portal_status
    assert (error.error_code, error.detail) == ("SOME_CODE", "secret path /memories/x")
    assert "/memories/x" not in error.message  # the store's text is for logs, not users


@pytest.mark.parametrize(
    "body", [b"", b"<html>Bad gateway</html>", b"\xff\xfe", b"[1]", b'{"error_code": 5}']
)
def test_any_body_shape_is_survived(body: bytes) -> None:
    error = parse_error(502, body, CaseInsensitiveDict())

    assert isinstance(error, LegacyUnavailable)
    assert error.error_code is None
    assert error.message


def test_retry_after_is_kept_for_429_only_when_sane() -> None:
    ok = parse_error(429, b"", CaseInsensitiveDict({"Retry-After": "5"}))
    silly = parse_error(429, b"", CaseInsensitiveDict({"Retry-After": "soon"}))

    assert ok.retry_after == 5.0
    assert silly.retry_after is None


def test_legacy_errors_have_the_face_of_coreapi_errors() -> None:
    for name in ("message", "portal_status", "status", "outcome_unknown", "correlation_id"):
        assert hasattr(LegacyUnavailable(), name) and hasattr(CoreAPIError("x"), name)
    assert LegacyOutcomeUnknown().outcome_unknown and not LegacyUnavailable().outcome_unknown
    assert isinstance(LegacyUnavailable(), SourceError) and isinstance(
        CoreAPIError("x"), SourceError
    )
