"""Prometheus metrics: portal requests, CoreAPI calls and their latency, errors.

Labels are bounded and say nothing about people: the route's name (never the path, which
holds agent names and UPNs), the method, the status or its failure's exception name, and
CoreAPI's endpoint below the instance. Exposed at /metrics, any Host, only with
`Authorization: Bearer $PORTAL_METRICS_TOKEN`; without that variable /metrics is 404.
Under gunicorn, PROMETHEUS_MULTIPROC_DIR (deploy/gunicorn.conf.py sets it) lets every
worker's numbers add up in one scrape. A command that runs on its own (a shard of a
tenant-wide job, `manage.py move_legacy_memory --metrics-port`) serves the same exposition,
behind the same token, from a thread of its own (`serve_command_metrics`).
"""

from __future__ import annotations

import hmac
import os
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client import REGISTRY as PROCESS_REGISTRY

from memory_ui import calls

REQUESTS = Counter(
    "portal_requests_total",
    "Requests answered, by route, method and status.",
    ["route", "method", "status"],
)
REQUEST_SECONDS = Histogram(
    "portal_request_duration_seconds",
    "Time to answer a request, by route and method.",
    ["route", "method"],
    buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
REQUEST_ERRORS = Counter(
    "portal_request_errors_total", "Requests that raised (answered 500), by route.", ["route"]
)
COREAPI_SECONDS = Histogram(
    "portal_coreapi_call_duration_seconds",
    "CoreAPI HTTP exchanges (each retry counts), by endpoint, method and outcome.",
    ["endpoint", "method", "outcome"],
    buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
# Labels: the job's command, its shard ("I/N": at most N values) and the person's outcome.
JOB_PEOPLE = Counter(
    "portal_job_people_total",
    "People a tenant-wide job's shard finished, by job, shard and state (done: moved and "
    "verified; skipped: nothing to move, or done by an earlier run; failed: retried next run).",
    ["job", "shard", "state"],
)

# CoreAPI's endpoints below /instances/{id}; anything else is counted as "other".
COREAPI_ENDPOINTS = frozenset(
    {
        "/completions/agents",
        "/memory",
        "/memory/append",
        "/memory/clear",
        "/memory/export",
        "/memory/import",
    }
)
METRICS_PATH = "/metrics"
# Methods clients may send are unbounded; labels must not be.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def observe_coreapi_call(method: str, path: str, outcome: str, seconds: float) -> None:
    endpoint = path if path in COREAPI_ENDPOINTS else "other"
    COREAPI_SECONDS.labels(endpoint, method, outcome).observe(seconds)


if observe_coreapi_call not in calls.call_observers:
    calls.call_observers.append(observe_coreapi_call)


def _route(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    return (match.url_name or "unnamed") if match else "unmatched"


def exposition() -> bytes:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)
    return generate_latest(PROCESS_REGISTRY)


def _token_allowed(authorization: str) -> bool | None:
    """None: metrics are off; otherwise whether the Authorization header carries the token."""
    token = settings.PORTAL_METRICS_TOKEN
    if not token:
        return None
    offered = authorization.removeprefix("Bearer ").strip()
    return hmac.compare_digest(offered.encode(), token.encode())


def _scrape_allowed(request: HttpRequest) -> bool | None:
    return _token_allowed(request.headers.get("Authorization", ""))


class _CommandMetrics(BaseHTTPRequestHandler):
    """/metrics of a command, answered as the portal's middleware answers it."""

    def do_GET(self) -> None:
        allowed = _token_allowed(self.headers.get("Authorization", ""))
        if self.path != METRICS_PATH or allowed is None:
            self.send_response(404)
            self.end_headers()
            return
        if not allowed:
            self.send_response(401)
            self.send_header("WWW-Authenticate", "Bearer")
            self.end_headers()
            return
        body = exposition()
        self.send_response(200)
        self.send_header("Content-Type", CONTENT_TYPE_LATEST)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """No access line per scrape on the command's log."""


def serve_command_metrics(port: int, host: str = "0.0.0.0") -> ThreadingHTTPServer:  # noqa: S104
    """/metrics on `port` for as long as the command runs (a daemon thread), for a
    Prometheus that scrapes the job's pods (docs/operations.md, Moving a whole tenant)."""
    server = ThreadingHTTPServer((host, port), _CommandMetrics)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server


def metrics(get_response: Callable[[HttpRequest], HttpResponse]) -> Callable:
    """Middleware: answers /metrics itself (before the Host check, like the probes) and
    counts and times every other request."""

    def middleware(request: HttpRequest) -> HttpResponse:
        if request.path == METRICS_PATH:
            allowed = _scrape_allowed(request)
            if allowed is None:
                return HttpResponse(status=404)
            if not allowed:
                response = HttpResponse(status=401)
                response["WWW-Authenticate"] = "Bearer"
                return response
            return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
        started = time.monotonic()
        try:
            response = get_response(request)
        except Exception:
            REQUEST_ERRORS.labels(_route(request)).inc()
            raise
        route = _route(request)
        method = request.method if request.method in METHODS else "other"
        REQUESTS.labels(route, method, str(response.status_code)).inc()
        REQUEST_SECONDS.labels(route, method).observe(time.monotonic() - started)
        if response.status_code >= 500:
            REQUEST_ERRORS.labels(route).inc()
        return response

    return middleware
