"""Dependency outages as users and operators see them: a 503 page while the database does
not answer, one log line per failed request, and Redis replaced by the database cache."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user
from django.core.cache import caches
from django.db import OperationalError
from django.http import HttpRequest
from django.test import Client
from django.urls import path
from django.utils.functional import SimpleLazyObject

from memory_ui.web.stores.claims import submission_claim
from portal import urls as portal_urls
from portal.caches import RedisWithDatabaseFallback

pytestmark = pytest.mark.django_db


def database_down(request: HttpRequest):
    raise OperationalError("connection to server failed: Connection refused")


def bug(request: HttpRequest):
    raise RuntimeError("a bug")


class UnreachableSession:
    """A session whose database is gone: every look raises, as often as it is asked."""

    def __init__(self, error: type[Exception]) -> None:
        self.error = error

    def __getattr__(self, name: str):
        raise self.error("the session's database is gone")

    def __getitem__(self, key: str):
        raise self.error("the session's database is gone")


def fails_twice(request: HttpRequest, error: type[Exception]):
    """The view fails on the session, and the response's way out asks for the user (the
    privacy middleware), which fails again: two exceptions in one request, as when the
    database is gone."""
    request.session = UnreachableSession(error)
    request.user = SimpleLazyObject(lambda: get_user(request))
    return request.user.is_authenticated


# This module is the URLconf of the tests below (with the portal's 500 handler).
urlpatterns = [
    path("database-down", database_down),
    path("bug", bug),
    path("twice/<str:kind>", lambda request, kind: fails_twice(request, ERRORS[kind])),
    *portal_urls.urlpatterns,
]
ERRORS = {"database": OperationalError, "bug": RuntimeError}
handler500 = "portal.outages.server_error"


@pytest.fixture
def urls(settings, static_from_finders) -> None:
    settings.ROOT_URLCONF = __name__


def entries(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_database_outage_is_a_styled_503_with_retry_after(urls, settings, json_log):
    settings.PORTAL_RETRY_AFTER_SECONDS = 45
    response = Client(raise_request_exception=False).get("/database-down")
    assert response.status_code == 503
    assert response["Retry-After"] == "45"
    page = response.content.decode()
    assert "temporarily unavailable" in page and "portal.css" in page
    assert "Connection refused" not in page and "Traceback" not in page
    # One line, a warning without the traceback: an outage, not a bug.
    (line,) = [e for e in entries(json_log) if e["level"] in ("WARNING", "ERROR")]
    assert line["logger"] == "portal.outages" and "exc_info" not in line
    assert "OperationalError" in line["message"]


def test_a_500_is_logged_once_with_its_traceback(urls, json_log):
    response = Client(raise_request_exception=False).get("/bug")
    assert response.status_code == 500
    assert "Something went wrong" in response.content.decode()
    (line,) = [e for e in entries(json_log) if e["level"] == "ERROR"]
    assert "RuntimeError: a bug" in line["exc_info"]


@pytest.mark.parametrize(
    ("kind", "status", "level"), [("database", 503, "WARNING"), ("bug", 500, "ERROR")]
)
def test_a_request_that_fails_twice_is_logged_once(urls, json_log, kind, status, level):
    """Issue 19: each 500 was logged twice (the view, then the session's save)."""
    response = Client(raise_request_exception=False).get(f"/twice/{kind}")
    assert response.status_code == status
    failures = [e for e in entries(json_log) if e["level"] in ("WARNING", "ERROR")]
    assert [e["level"] for e in failures] == [level]


def test_fragments_and_error_pages_carry_the_content_security_policy(urls):
    """Issue 19: htmx fragments answered without a CSP. An htmx page, and a 503 made for a
    failure outside the CSP middleware's old place (the user, on the way out)."""
    htmx = {"HTTP_HX_REQUEST": "true"}
    fragment = Client().get("/auth/signed-out", **htmx)
    assert "default-src 'self'" in fragment["Content-Security-Policy"]
    failed = Client(raise_request_exception=False).get("/twice/database", **htmx)
    assert failed.status_code == 503
    assert "default-src 'self'" in failed["Content-Security-Policy"]


def test_redis_unreachable_falls_back_to_the_database_cache(settings):
    settings.PORTAL_REDIS_RETRY_SECONDS = 60
    # Nothing listens on port 9: every Redis call fails at once.
    redis = RedisWithDatabaseFallback("redis://127.0.0.1:9/0", {})
    assert redis.redis_ok() is False
    redis.set("fallback-key", "kept", 60)
    assert caches["durable"].get("fallback-key") == "kept"
    assert redis.get("fallback-key") == "kept"
    # Single-use keys stay single-use meanwhile.
    assert redis.add("single-use", 1, 60) is True
    assert redis.add("single-use", 1, 60) is False
    redis.delete("fallback-key")
    assert redis.get("fallback-key") is None


def test_a_submission_key_claimed_before_a_redis_outage_stays_claimed(settings):
    settings.PORTAL_REDIS_RETRY_SECONDS = 60
    # Redis answering is stood in for by process memory (no Redis server in unit tests).
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "durable": settings.DATABASE_CACHE,
    }
    token = "k" * 22
    assert submission_claim("alice-oid", token) is True
    # Then Redis goes away (nothing listens on port 9): the database cache stands in.
    settings.CACHES = {
        "default": {
            "BACKEND": "portal.caches.RedisWithDatabaseFallback",
            "LOCATION": "redis://127.0.0.1:9/0",
        },
        "durable": settings.DATABASE_CACHE,
    }
    assert caches["default"].redis_ok() is False
    # The form confirmed again in that window adds nothing a second time.
    assert submission_claim("alice-oid", token) is False
    # Another person's form with the same key is theirs to claim.
    assert submission_claim("bob-oid", token) is True
