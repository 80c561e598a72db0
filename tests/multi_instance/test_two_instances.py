"""Two portal instances behind an imaginary load balancer without sticky sessions.

Each instance is its own gunicorn process on its own port, as in production; they share
one database (SQLite file by default, a fresh PostgreSQL database when DATABASE_URL points
at PostgreSQL, as in `./dev test`'s PostgreSQL pass), which holds the sessions, the msal
token caches and the cache table (staged restores) and the single-use submission keys. A
requests-based browser signs in on A and goes on wherever its requests land, including
on B after B was restarted.
"""

from __future__ import annotations

import io
import os
import uuid
import zipfile
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest
import requests

from memory_ui.sources.coreapi import CallerAuth
from memory_ui.sources.coreapi.client import CoreAPIClient
from tests.conftest import TokenMinter
from tests.integration.test_transfer import AGENTS, Api, hidden_import, page_text
from tests.pages import Form, batched_cards, forms
from tests.stack import Devstack, Instances, Portal, sign_in, start_instances

HTMX = {"HX-Request": "true"}
TIMEOUT = 30


@pytest.fixture(scope="module")
def shared_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The DATABASE_URL both instances use: a database of their own on the PostgreSQL
    server the suite runs against, or an SQLite file."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        yield f"sqlite:///{tmp_path_factory.mktemp('instances') / 'shared.sqlite3'}"
        return
    import psycopg
    from psycopg import sql

    name = f"portal_instances_{uuid.uuid4().hex[:12]}"
    server = urlsplit(url)
    maintenance = urlunsplit(server._replace(path="/postgres"))
    with psycopg.connect(maintenance, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield urlunsplit(server._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(maintenance, autocommit=True) as connection:
            connection.execute(
                sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture(scope="module")
def instances(stack: Devstack, shared_database: str) -> Iterator[Instances]:
    both = start_instances(stack, shared_database)
    yield both
    both.stop()


@pytest.fixture
def api(stack: Devstack, coreapi_tokens: TokenMinter) -> Iterator[Api]:
    """Alice's memory read straight from the emulator, to check what the portals did."""
    demo = stack.fixtures
    client = CoreAPIClient(stack.coreapi.url, demo.instance_id)
    yield Api(client, CallerAuth(coreapi_tokens.delegated("alice@contoso.com")), demo.instance_id)
    client.close()


def on(portal: Portal, url: str) -> str:
    """The same path and query on another instance (what a load balancer does)."""
    parts = urlsplit(url)
    return urlunsplit(urlsplit(portal.url)._replace(path=parts.path, query=parts.query))


def form_to(response: requests.Response, action_suffix: str) -> Form:
    return next(f for f in forms(response.text, response.url) if f.action.endswith(action_suffix))


def get(browser: requests.Session, url: str, **kwargs) -> requests.Response:
    """A page as a signed-in browser gets it: never sent to sign in again."""
    response = browser.get(url, allow_redirects=False, timeout=TIMEOUT, **kwargs)
    assert response.status_code == 200, (response.status_code, response.headers, url)
    assert "HX-Redirect" not in response.headers
    return response


def post(
    browser: requests.Session, url: str, data: dict, files: dict | None = None
) -> requests.Response:
    response = browser.post(url, data=data, files=files, allow_redirects=False, timeout=TIMEOUT)
    assert response.status_code in (200, 302), (response.status_code, response.text[:2000])
    assert "/auth/login" not in response.headers.get("Location", "")
    return response


def preview_import(browser: requests.Session, portal: Portal, text: str) -> requests.Response:
    page = get(browser, f"{portal.url}/memory/user/import")
    form = form_to(page, "/memory/user/import/preview")
    # multipart/form-data, as the form says (its file field left empty)
    empty_file = {"file": ("", b"", "application/octet-stream")}
    preview = post(browser, form.action, {**form.fields, "pasted": text}, empty_file)
    assert preview.status_code == 200
    return preview


def confirm_import(
    browser: requests.Session, portal: Portal, preview: requests.Response
) -> requests.Response:
    form = form_to(preview, "/memory/user/import/confirm")
    fields = {**form.fields, **hidden_import(preview), "mode": "append"}
    return post(browser, on(portal, form.action), fields)


def test_a_session_started_on_one_instance_continues_on_the_other(instances: Instances, stack):
    browser = sign_in(instances.a.url, stack.ca)
    dashboard = get(browser, f"{instances.b.url}/")
    assert "Alice Example" in dashboard.text and "alice@contoso.com" in dashboard.text
    assert "travel-planner" in [name for batch in batched_cards(dashboard.text) for name in batch]
    # A card calls CoreAPI with alice's token: B found her msal token cache in the session.
    card = get(browser, f"{instances.b.url}/cards/agents/travel-planner", headers=HTMX)
    assert 'id="card-agent-travel-planner"' in card.text
    assert "Travel Planner" in get(browser, f"{instances.a.url}/").text


def test_an_import_previewed_on_one_instance_is_confirmed_on_the_other_once(
    instances: Instances, stack, api: Api
):
    browser = sign_in(instances.a.url, stack.ca)
    before = api.doc()
    text = f"- Previewed on A, confirmed on B {uuid.uuid4().hex}\n"
    preview = preview_import(browser, instances.a, text)
    assert api.doc() == before  # a preview changes nothing

    done = confirm_import(browser, instances.b, preview)
    assert urlsplit(done.headers["Location"]).path == "/memory/user"
    # The same confirmation sent again, to the other instance (a retry through the load
    # balancer): the submission key claimed on B is in the shared database, so A adds nothing.
    again = confirm_import(browser, instances.a, preview)
    assert urlsplit(again.headers["Location"]).path == "/memory/user"

    after = api.doc()
    assert after.count(text.strip()) == 1
    assert after.startswith(before.rstrip() + "\n\n## Imported ")
    assert after.endswith("\n\n" + text)
    assert "it was imported once" in page_text(get(browser, f"{instances.a.url}/memory/user"))


def test_a_restore_staged_on_one_instance_is_applied_on_the_other(
    instances: Instances, stack, api: Api
):
    browser = sign_in(instances.a.url, stack.ca)
    archive = get(browser, f"{instances.a.url}/export/everything").content
    assert "manifest.json" in zipfile.ZipFile(io.BytesIO(archive)).namelist()
    before = api.everything()
    for agent in (None, *AGENTS):
        api.clear(agent)

    page = get(browser, f"{instances.a.url}/import")
    form = form_to(page, "/import/archive")
    staged = post(
        browser, form.action, form.fields, {"archive": ("export.zip", archive, "application/zip")}
    )
    assert staged.status_code == 302, staged.text[:2000]
    # The staged archive waits in the shared cache: B shows its plan and applies it.
    plan = get(browser, on(instances.b, staged.headers["Location"]))
    apply = form_to(plan, "/apply")
    versions = {k: v for k, v in apply.fields.items() if k.startswith("version-")}
    assert {k.removeprefix("version-") for k in versions} == {
        "user",
        *(f"agent:{agent}" for agent in AGENTS),
    }
    applied = post(
        browser,
        on(instances.b, apply.action),
        {
            **apply.fields,
            "mode": "replace",
            "confirm_replace": "yes",
            "scopes": [k.removeprefix("version-") for k in versions],
        },
    )
    assert applied.status_code == 302
    assert api.everything() == before
    # What happened is in the shared cache too: A shows B's outcome.
    result = page_text(get(browser, on(instances.a, applied.headers["Location"])))
    assert "What happened" in result and result.count(": done.") == 1 + len(AGENTS)


def test_an_instance_restarted_mid_session_continues_without_signing_in_again(
    instances: Instances, stack, api: Api
):
    browser = sign_in(instances.a.url, stack.ca)
    session = browser.cookies["memory_portal_session"]
    text = f"- Previewed before B restarted {uuid.uuid4().hex}\n"
    preview = preview_import(browser, instances.b, text)
    port = urlsplit(instances.b.url).port

    instances.b.restart()

    assert urlsplit(instances.b.url).port == port
    done = confirm_import(browser, instances.b, preview)
    assert urlsplit(done.headers["Location"]).path == "/memory/user"
    assert api.doc().count(text.strip()) == 1
    assert text.strip().removeprefix("- ") in page_text(
        get(browser, f"{instances.b.url}/memory/user")
    )
    card = get(browser, f"{instances.b.url}/cards/user", headers=HTMX)
    assert 'class="card-stats"' in card.text and "alert-error" not in card.text
    assert browser.cookies["memory_portal_session"] == session  # the same session throughout
