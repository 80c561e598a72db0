"""gunicorn settings for Memory Portal: `gunicorn -c deploy/gunicorn.conf.py`.

Every number can be changed from the environment (README.md, Running in production):

- threads: a page's cards arrive as parallel requests, each waiting on CoreAPI, so a
  worker serves many at once (gthread). At most COREAPI_MAX_CONCURRENT (8) of them wait on
  CoreAPI at a time (others wait COREAPI_QUEUE_TIMEOUT at most, then are refused), so with
  24 threads a slow CoreAPI leaves threads for /readyz and pages that need no CoreAPI;
- graceful timeout (45 s) well above the longest request: every CoreAPI call of a request
  ends within PORTAL_REQUEST_DEADLINE_SECONDS (12 s), so a rolling restart lets started
  requests finish;
- SIGTERM first turns /readyz to 503 for PORTAL_DRAIN_SECONDS while everything keeps being
  served, so load balancers and Kubernetes stop routing here before the workers stop
  taking connections (no 502s in a rolling restart), then stops gracefully;
- max_requests (with jitter) replaces each worker now and then, bounding slow leaks. A new
  worker costs about a second of CPU (importing Django and the portal, then cold template,
  URL and parsed-memory caches): at 1,000 requests that was about 1 ms a request, a tenth
  of a memory page's CPU (docs/performance.md), so every 10,000;
- no control socket: gunicorn 27's default path (~/.gunicorn/gunicorn.ctl) collides
  between two instances on one host and cannot be created on a read-only filesystem;
- one JSON line per log record and per request (portal/logs.py): method, path (the query
  string too, except under /auth/: the callback's code and client_info are credentials,
  and sign-in's `next` may hold a search; and on /search, whose words may quote memory),
  status, bytes, time, the request id the portal sent back, and the client's IP as the
  proxy reported it in X-Forwarded-For.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from gunicorn import glogging

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # portal.*, before gunicorn loads the app from chdir

from django.core.exceptions import ImproperlyConfigured  # noqa: E402

from portal.environment import env_int  # noqa: E402
from portal.logs import JsonFormatter, refuse  # noqa: E402


def _settings_or_refuse() -> None:
    """The portal's settings load here, in the master, before any worker forks: a refused
    configuration stops gunicorn with one clear line instead of every worker printing a
    traceback and being restarted in a loop."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    try:
        importlib.import_module(os.environ["DJANGO_SETTINGS_MODULE"])
    except ImproperlyConfigured as refused:
        refuse(refused)


_settings_or_refuse()


def _int(name: str, default: int) -> int:
    """Parsed as the portal's settings are; a bad number stops gunicorn the same way."""
    try:
        return env_int(name, default)
    except ImproperlyConfigured as refused:
        refuse(refused)


wsgi_app = "portal.wsgi:application"
chdir = str(ROOT)
bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000").split(",")
worker_class = "gthread"
workers = _int("GUNICORN_WORKERS", 2)
threads = _int("GUNICORN_THREADS", 24)
# gthread: a worker whose heartbeat stops this long is restarted (requests are not capped).
timeout = _int("GUNICORN_TIMEOUT", 60)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 45)
keepalive = _int("GUNICORN_KEEPALIVE", 5)
max_requests = _int("GUNICORN_MAX_REQUESTS", 10000)
max_requests_jitter = _int("GUNICORN_MAX_REQUESTS_JITTER", 1000)
control_socket_disable = True
# Workers' heartbeat files go to TMPDIR (writable under a read-only root: an emptyDir).
# The proxies whose X-Forwarded-Proto/-For gunicorn believes; Django has its own setting.
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("PORTAL_LOG_LEVEL", "info").lower()

DRAIN_SECONDS = _int("PORTAL_DRAIN_SECONDS", 10)

# One folder per gunicorn master (two instances on a host never share one), in TMPDIR
# (an emptyDir under a read-only root): the drain marker that every worker's /readyz
# reads, and Prometheus' per-worker files. Made here, before the workers fork, so they
# inherit both variables.
RUNTIME = Path(tempfile.mkdtemp(prefix="memory-portal-"))
os.environ.setdefault("PORTAL_DRAIN_FILE", str(RUNTIME / "draining"))
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    (RUNTIME / "metrics").mkdir()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(RUNTIME / "metrics")


class JsonLogger(glogging.Logger):
    """gunicorn's logs as JSON lines, the access log with the fields above."""

    def setup(self, cfg) -> None:
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.setFormatter(JsonFormatter())

    def access(self, resp, req, environ, request_time) -> None:
        if not self.access_log_enabled:
            return
        path = environ.get("PATH_INFO", "")
        query = environ.get("QUERY_STRING", "")
        if query and not path.startswith(_UNLOGGED_QUERIES):
            path = f"{path}?{query}"
        headers = resp.headers.items() if hasattr(resp.headers, "items") else resp.headers
        request_id = next((v for k, v in headers if k.lower() == "x-request-id"), "")
        forwarded = environ.get("HTTP_X_FORWARDED_FOR", "")
        status = str(resp.status).split(None, 1)[0]
        self.access_log.info(
            "%s %s %s",
            environ.get("REQUEST_METHOD", "-"),
            path,
            status,
            extra={
                "request_id": request_id,
                "method": environ.get("REQUEST_METHOD", "-"),
                "path": path,
                "status": int(status) if status.isdigit() else status,
                "bytes": getattr(resp, "sent", None) or 0,
                "duration_ms": round(request_time.total_seconds() * 1000, 1),
                # The first address is the client as the first proxy saw it.
                "client_ip": forwarded.split(",")[0].strip() or environ.get("REMOTE_ADDR", ""),
                "peer": environ.get("REMOTE_ADDR", ""),
                "user_agent": environ.get("HTTP_USER_AGENT", ""),
            },
        )


logger_class = JsonLogger


# Query strings not logged: the sign-in callback's code and client_info are credentials,
# and a search's words may quote someone's memory, also when a signed-out search is sent
# to sign in first (/auth/login?next=/search?q=...): nothing under /auth/ keeps its query.
_UNLOGGED_QUERIES = ("/auth/", "/search")


def _return_freed_memory() -> None:
    """glibc keeps memory a thread freed in that thread's arena, and raises the size above
    which it maps big blocks (strings of a posted document) on its own after each one is
    freed; then a worker that once parsed a few large requests at a time keeps that memory.
    A fixed threshold returns every big block to the system when freed, and two arenas keep
    small ones from spreading over one arena per thread. Set here, in the master, before the
    workers fork; nothing happens on another C library."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    m_arena_max, m_mmap_threshold = -8, -3  # from glibc's malloc.h
    libc.mallopt(m_mmap_threshold, 128 * 1024)
    libc.mallopt(m_arena_max, 2)


_return_freed_memory()


def on_starting(server) -> None:
    """SIGTERM: mark the drain, keep serving for DRAIN_SECONDS, then stop gracefully."""
    stop = server.handle_term

    def drain_then_stop() -> None:
        server.log.info("SIGTERM: /readyz answers 503; stopping in %d s", DRAIN_SECONDS)
        Path(os.environ["PORTAL_DRAIN_FILE"]).touch()
        time.sleep(DRAIN_SECONDS)
        stop()

    server.handle_term = drain_then_stop


def child_exit(server, worker) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server) -> None:
    shutil.rmtree(RUNTIME, ignore_errors=True)
