"""One JSON object per log line, each with the id of the request it belongs to.

Used by Django's LOGGING (portal/settings.py) and by gunicorn's own and access logs
(deploy/gunicorn.conf.py), so a log pipeline parses one format. A traceback stays inside
its line (in "exc_info"), never spread over many. Nothing here adds tokens or memory
content: the portal never logs them, and the access log drops the query string of the
sign-in callback (its authorization code and client_info).
"""

from __future__ import annotations

import json
import logging
import logging.config
import os
import sys
import threading
from datetime import UTC, datetime
from typing import NoReturn

from memory_ui import calls

# LogRecord attributes that are the record's own machinery, not extra fields.
_STANDARD = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys() | {"message", "asctime"}
)


def _request_id(record: logging.LogRecord) -> str:
    """The id of the request a record belongs to: the one being served, or, for Django's
    own "Bad Request"/"Server Error" lines written after the middleware returned, the one
    on the request they carry (portal/requestid.py puts it there)."""
    return (
        getattr(record, "request_id", None)
        or calls.correlation_id.get()
        or getattr(getattr(record, "request", None), "request_id", "")
    )


def _describe(value: object) -> object:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    # Django passes the request itself; its repr holds the query string, which on the
    # sign-in callback is a credential. Method and path only.
    if hasattr(value, "method") and hasattr(value, "path"):
        return f"{value.method} {value.path}"
    return str(value)


class RequestIdFilter(logging.Filter):
    """Puts the request's id on every record as `request_id` (empty outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _request_id(record)
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if request_id := _request_id(record):
            entry["request_id"] = request_id
        for name, value in vars(record).items():
            if name not in _STANDARD and name not in entry and not name.startswith("_"):
                entry[name] = _describe(value)
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure(config: dict[str, object]) -> None:
    """Django's LOGGING_CONFIG: the dictionary, and whatever else would write bare text on
    stderr as log records, so the stream stays one JSON object per line: Python's
    warnings, exceptions that end a thread (the telemetry exporter's, say), and records
    that reach no handler (logging's "last resort")."""
    logging.config.dictConfig(config)
    logging.captureWarnings(True)
    threading.excepthook = _log_thread_exception
    sys.unraisablehook = _write_unraisable
    console = next(iter(logging.getLogger().handlers), None)
    if console is not None:
        logging.lastResort = console


def json_everywhere() -> None:
    """Libraries that bring their own stderr handler (OpenTelemetry's logging
    instrumentation does, for its own warnings) write JSON lines too. Called after they
    are set up (portal/telemetry.py); nothing changes with the plain format."""
    root = logging.getLogger()
    console = next(iter(root.handlers), None)
    if console is None or not isinstance(console.formatter, JsonFormatter):
        return
    for logger in list(logging.root.manager.loggerDict.values()):
        for handler in getattr(logger, "handlers", ()):
            if isinstance(handler, logging.StreamHandler) and not isinstance(
                handler.formatter, JsonFormatter
            ):
                handler.setFormatter(console.formatter)


def _write_unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    """An exception Python cannot raise (in an atexit callback, a finaliser: say the
    telemetry exporter's last flush at shutdown) as one JSON line, written directly: at
    shutdown logging's handlers may be gone."""
    record = logging.LogRecord(
        "portal.unraisable",
        logging.ERROR,
        "",
        0,
        unraisable.err_msg or "Exception ignored",
        None,
        (unraisable.exc_type, unraisable.exc_value, unraisable.exc_traceback),
    )
    sys.stderr.write(JsonFormatter().format(record) + "\n")
    sys.stderr.flush()


def _log_thread_exception(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread else "unknown"
    logging.getLogger("portal.threads").error(
        "A background thread (%s) failed",
        name,
        exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
    )


def refuse(reason: Exception | str) -> NoReturn:
    """Stops a process whose configuration is refused (ImproperlyConfigured) with one line
    on stderr saying why, a JSON record unless the plain format is asked for, and no
    traceback: the reason is the operator's to fix, not a bug."""
    message = str(reason)
    plain = os.environ.get("PORTAL_LOG_FORMAT", "").strip().lower() == "plain"
    if plain:
        sys.stderr.write(f"Memory Portal cannot start: {message}\n")
    else:
        record = logging.LogRecord("portal", logging.CRITICAL, "", 0, message, None, None)
        sys.stderr.write(JsonFormatter().format(record) + "\n")
    sys.stderr.flush()
    raise SystemExit(2)
