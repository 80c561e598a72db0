"""What operators rely on: probes, request ids in logs and towards CoreAPI, metrics."""

from __future__ import annotations

import io
import json
import logging

import pytest
import requests
from django.test import Client

from memory_ui import calls
from memory_ui.identity import CallerAuth
from memory_ui.sources.coreapi.client import CoreAPIClient
from portal import probes
from portal.metrics import JOB_PEOPLE, serve_command_metrics

pytestmark = pytest.mark.django_db


@pytest.fixture
def not_draining(monkeypatch: pytest.MonkeyPatch, static_from_finders) -> None:
    """A process not shutting down, pages rendered with static files from the finders."""
    monkeypatch.setattr(probes, "_draining", False)
    monkeypatch.delenv("PORTAL_DRAIN_FILE", raising=False)


def lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


# --- probes -----------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["10.244.1.17", "10.244.1.17:8000", "unknown.example", ""])
def test_probes_answer_whatever_the_host_header(not_draining, host: str):
    client = Client(HTTP_HOST=host) if host else Client(HTTP_HOST="")
    live = client.get("/livez")
    ready = client.get("/readyz")
    assert (live.status_code, live.json()) == (200, {"status": "ok"})
    assert ready.status_code == 200
    assert ready.json() == {"status": "ok"}
    # An ordinary page at that Host is refused as before.
    assert client.get("/auth/signed-out").status_code == 400


def test_readyz_is_503_once_draining_but_livez_stays_up(not_draining, tmp_path, monkeypatch):
    drain_file = tmp_path / "draining"
    monkeypatch.setenv("PORTAL_DRAIN_FILE", str(drain_file))
    client = Client()
    assert client.get("/readyz").status_code == 200
    probes.start_draining()  # what gunicorn's SIGTERM handler does, through the file
    assert drain_file.exists()
    ready = client.get("/readyz")
    assert (ready.status_code, ready.json()) == (503, {"status": "draining"})
    assert client.get("/healthz").status_code == 503
    assert client.get("/livez").status_code == 200


def test_another_process_draining_through_the_file_is_seen(not_draining, tmp_path, monkeypatch):
    drain_file = tmp_path / "draining"
    monkeypatch.setenv("PORTAL_DRAIN_FILE", str(drain_file))
    drain_file.touch()  # as the gunicorn master does for all its workers
    assert Client().get("/readyz").status_code == 503


def test_readyz_reflects_the_instance_not_shared_dependencies(not_draining, monkeypatch, json_log):
    """Issue 19: a cache (or database) outage must not take every instance out of rotation
    at once; it shows in the dependency gauge and the log instead."""
    from django.db import OperationalError

    from portal import health

    def broken(*args, **kwargs):
        raise OperationalError("the database is restarting")

    monkeypatch.setattr("django.core.cache.cache.set", broken)
    monkeypatch.setattr("django.core.cache.cache.get", broken)
    ready = Client().get("/readyz")
    assert (ready.status_code, ready.json()) == (200, {"status": "ok"})

    monkeypatch.setattr(health, "_state", {})
    monkeypatch.setattr(health, "_database_ok", lambda: False)
    health.record(health.checks())
    health.record(health.checks())  # still down: no second line
    monkeypatch.setattr(health, "_database_ok", lambda: True)
    health.record(health.checks())
    down = [e for e in lines(json_log) if e["logger"] == "portal.health"]
    assert [(e["level"], e["message"]) for e in down] == [
        ("ERROR", "Dependency unavailable: database"),
        ("WARNING", "Dependency available again: database"),
    ]


def test_dependency_health_is_a_gauge_in_metrics(not_draining, settings, monkeypatch):
    from portal import health

    settings.PORTAL_METRICS_TOKEN = "scrape-me"
    monkeypatch.setattr(health, "_state", {})
    health.record({"database": False})
    scrape = Client(HTTP_HOST="10.0.0.5").get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me")
    assert 'portal_dependency_up{dependency="database"} 0.0' in scrape.content.decode()
    health.record(health.checks())  # the real test database answers
    scrape = Client(HTTP_HOST="10.0.0.5").get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me")
    assert 'portal_dependency_up{dependency="database"} 1.0' in scrape.content.decode()


# --- request ids and JSON logs ------------------------------------------------------------


def test_request_id_is_kept_from_the_proxy_or_made(not_draining):
    given = Client().get("/auth/signed-out", HTTP_X_REQUEST_ID="edge-7f3a.1")
    assert given["X-Request-ID"] == "edge-7f3a.1"
    made = Client().get("/auth/signed-out", HTTP_X_REQUEST_ID="not valid\x7f" + "x" * 200)
    assert made["X-Request-ID"] != given["X-Request-ID"]
    assert len(made["X-Request-ID"]) == 32


def test_log_lines_are_one_json_object_with_the_request_id(not_draining, json_log):
    # A sign-in callback with a code and client_info but no flow: 400, and Django logs it.
    response = Client().get(
        "/auth/callback?code=SECRET-CODE&client_info=SECRET-INFO&state=s",
        HTTP_X_REQUEST_ID="req-42",
    )
    assert response.status_code == 400
    output = json_log.getvalue()
    assert "SECRET" not in output
    entries = lines(json_log)
    assert entries, "nothing was logged"
    bad_request = [e for e in entries if e["logger"] == "django.request"]
    assert bad_request and all(e["request_id"] == "req-42" for e in bad_request)
    assert bad_request[0]["request"] == "GET /auth/callback"


def test_a_traceback_stays_on_one_line(json_log):
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("memory_ui").exception("It failed")
    (entry,) = [e for e in lines(json_log) if e["message"] == "It failed"]
    assert "RuntimeError: boom" in entry["exc_info"]
    assert len(json_log.getvalue().strip().splitlines()) == len(lines(json_log))


def test_coreapi_calls_carry_the_request_id(monkeypatch):
    sent: list[dict[str, str]] = []

    class Recorder:
        def request(self, method, url, **kwargs):
            sent.append(kwargs["headers"])
            raise ConnectionRefusedError  # nothing listening; only the headers matter

        def close(self) -> None:
            pass

    client = CoreAPIClient("http://127.0.0.1:9", "instance", get_retries=0, session=Recorder())
    token = calls.correlation_id.set("req-77")
    try:
        with pytest.raises(Exception):  # noqa: B017, PT011 (any failure; headers matter)
            client.list_agents(CallerAuth(access_token="t"))
    finally:
        calls.correlation_id.reset(token)
    assert sent[0]["X-Correlation-ID"] == "req-77"


# --- metrics ------------------------------------------------------------------------------


def test_metrics_are_off_without_a_token_and_need_it_when_on(not_draining, settings):
    settings.PORTAL_METRICS_TOKEN = ""
    assert Client().get("/metrics").status_code == 404
    settings.PORTAL_METRICS_TOKEN = "scrape-me"
    assert Client().get("/metrics").status_code == 401
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    Client().get("/auth/signed-out")
    Client().get("/memory/agents/alices-secret-agent")  # to sign-in: 302
    scrape = Client(HTTP_HOST="10.0.0.5").get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me")
    assert scrape.status_code == 200
    text = scrape.content.decode()
    assert 'portal_requests_total{method="GET",route="signed_out",status="200"}' in text
    assert 'route="memory_agent",status="302"' in text
    assert "alices-secret-agent" not in text  # routes, never paths


def test_a_job_shard_serves_its_counts_behind_the_same_token(settings):
    """`move_legacy_memory --metrics-port`: a pod of the Indexed Job has no portal to ask."""
    JOB_PEOPLE.labels("move_legacy_memory", "2/4", "done").inc(3)
    server = serve_command_metrics(0, host="127.0.0.1")
    url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
    try:
        settings.PORTAL_METRICS_TOKEN = ""
        assert requests.get(url, timeout=5).status_code == 404
        settings.PORTAL_METRICS_TOKEN = "scrape-me"
        assert requests.get(url, timeout=5).status_code == 401
        wrong = {"Authorization": "Bearer wrong"}
        assert requests.get(url, headers=wrong, timeout=5).status_code == 401
        scrape = requests.get(url, headers={"Authorization": "Bearer scrape-me"}, timeout=5)
    finally:
        server.shutdown()
    assert scrape.status_code == 200
    assert (
        'portal_job_people_total{job="move_legacy_memory",shard="2/4",state="done"}' in scrape.text
    )
