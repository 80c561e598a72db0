"""The session store: Django's database sessions, read with one raw query."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.utils import timezone

from portal.sessions import SessionStore

pytestmark = pytest.mark.django_db


def test_a_saved_session_reads_back() -> None:
    saved = SessionStore()
    saved["who"] = "alice"
    saved.save()

    read = SessionStore(saved.session_key)
    assert read["who"] == "alice"
    assert read.session_key == saved.session_key


def test_an_expired_session_reads_as_none_and_loses_its_key() -> None:
    saved = SessionStore()
    saved["who"] = "alice"
    saved.save()
    Session.objects.filter(session_key=saved.session_key).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )

    read = SessionStore(saved.session_key)
    assert read.get("who") is None
    assert read.session_key is None  # a new one is made if anything is saved


def test_an_unknown_key_reads_as_empty() -> None:
    read = SessionStore("no-such-session-key-0123456789")
    assert dict(read.items()) == {}
    assert read.session_key is None
