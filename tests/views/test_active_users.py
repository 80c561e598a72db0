"""The signed-in user's row, remembered by the worker (`memory_ui.active_users`): read once,
not on every request, and a user made inactive loses access within
`PORTAL_USER_RECHECK_SECONDS` (at once where the change was saved)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.views.conftest import identity_for


class Clock:
    def __init__(self) -> None:
        self.at = 1000.0

    def monotonic(self) -> float:
        return self.at


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr("memory_ui.active_users.time", clock)
    return clock


def user_queries(queries: CaptureQueriesContext) -> int:
    table = get_user_model()._meta.db_table
    return sum(f'FROM "{table}"' in q["sql"] for q in queries.captured_queries)


def signs_in_again(client: Client) -> bool:
    response = client.get("/memory/user")
    return response.status_code == 302 and "/auth/login" in response["Location"]


def test_the_users_row_is_read_once_not_on_every_request(alice: Client, fake, clock):
    # Issue 31, item 2: Django's auth middleware read it from the database on every request.
    with CaptureQueriesContext(connection) as first:
        assert alice.get("/memory/user").status_code == 200
    with CaptureQueriesContext(connection) as later:
        assert alice.get("/memory/user").status_code == 200
        assert alice.get("/cards/user", headers={"HX-Request": "true"}).status_code == 200
    assert user_queries(first) == 1 and user_queries(later) == 0


def test_a_user_made_inactive_elsewhere_loses_access_within_the_recheck_time(
    alice: Client, fake, clock, settings
):
    settings.PORTAL_USER_RECHECK_SECONDS = 30
    assert alice.get("/memory/user").status_code == 200
    # Another worker or instance (or the database by hand): no signal reaches this one.
    oid = identity_for("alice@contoso.com").oid
    assert get_user_model().objects.filter(username=oid).update(is_active=False) == 1
    clock.at += 29
    assert alice.get("/memory/user").status_code == 200
    clock.at += 1
    assert signs_in_again(alice)


def test_a_user_made_inactive_in_this_process_loses_access_at_once(alice: Client, fake, clock):
    assert alice.get("/memory/user").status_code == 200
    user = get_user_model().objects.get(username=identity_for("alice@contoso.com").oid)
    user.is_active = False
    user.save()
    assert signs_in_again(alice)


def test_a_deleted_user_loses_access_at_once(alice: Client, fake, clock):
    assert alice.get("/memory/user").status_code == 200
    get_user_model().objects.get(username=identity_for("alice@contoso.com").oid).delete()
    assert signs_in_again(alice)
