"""The delegated token msal gave for a session's cache is reused without msal until shortly
before msal would refresh it (memory_ui.silent_tokens), against the real IdP."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from memory_ui import auth
from memory_ui.silent_tokens import SilentTokens

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _msal_calls(monkeypatch) -> list[int]:
    calls: list[int] = []
    build = auth._msal_app

    def counted(*args, **kwargs):
        calls.append(1)
        return build(*args, **kwargs)

    monkeypatch.setattr(auth, "_msal_app", counted)
    return calls


def test_a_second_request_reuses_the_token_without_msal(alice: Client, monkeypatch):
    calls = _msal_calls(monkeypatch)
    assert alice.get("/cards/user", **HTMX).status_code == 200
    first = len(calls)
    assert alice.get("/cards/user", **HTMX).status_code == 200
    assert alice.get("/memory/user").status_code == 200
    assert first == 1 and len(calls) == first


def test_a_changed_token_cache_asks_msal_again(alice: Client, monkeypatch):
    assert alice.get("/cards/user", **HTMX).status_code == 200
    calls = _msal_calls(monkeypatch)
    session = alice.session
    cache = json.loads(session[auth.SESSION_CACHE])
    (token,) = cache["AccessToken"].values()
    token["expires_on"] = token["extended_expires_on"] = "1000"  # expired: msal refreshes
    session[auth.SESSION_CACHE] = json.dumps(cache)
    session.save()
    assert alice.get("/cards/user", **HTMX).status_code == 200
    assert len(calls) == 1


def test_a_token_close_to_expiry_is_not_remembered():
    tokens = SilentTokens()
    tokens.put(b"soon", {"access_token": "a", "expires_in": 299})
    tokens.put(b"later", {"access_token": "b", "expires_in": 3600})
    tokens.put(b"refresh", {"access_token": "c", "expires_in": 3600, "refresh_on": 1})
    assert tokens.get(b"soon") is None
    assert tokens.get(b"later") == "b"
    assert tokens.get(b"refresh") is None  # msal refreshes early: ask it


def test_the_remembered_tokens_are_bounded():
    tokens = SilentTokens(limit=2)
    for n in range(3):
        tokens.put(bytes([n]), {"access_token": str(n), "expires_in": 3600})
    assert tokens.get(bytes([2])) == "2"
    assert tokens.get(bytes([0])) is None
