"""The MemoryOS emulator's WSGI app: seed 002's retrieve, clarification answer and
retrieval feedback, plus the devstack's own feedback inspection.

Pipeline (docs/memoryos.md, S2): faults -> routing (404/405) -> API key (401) -> body
(415/413/400, then 422 per field) -> the tenant's records (404) -> their state (409).
Errors: `{"error": {"code", "message"[, "details"]}, "request_id", "timestamp"}` (S1).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any, Unpack

from werkzeug.exceptions import HTTPException, MethodNotAllowed
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from devstack import emulators
from devstack.config import MEMORYOS_HOST, state_dir
from devstack.coreapi.faults import DropConnection, Fault, Faults
from devstack.coreapi.problems import ApiError, json_response
from devstack.coreapi.validation import LimitedRequest, read_json_object
from devstack.memoryos import retrieve
from devstack.memoryos.fields import Fields, Invalid
from devstack.memoryos.store import (
    ANSWERS,
    Conflict,
    Feedback,
    MemoryStore,
    NotFound,
    Tenant,
    tenants,
    wire_time,
)
from devstack.serve import RunningServer, start_in_thread

log = logging.getLogger("devstack.memoryos")

BASE = "/v1/memories"
# Not part of seed 002: how a test (or a developer) reads back what feedback arrived (S16).
INSPECT_FEEDBACK = "/devstack/retrieval-feedback"
OUTCOMES = ("used_successfully", "ignored", "user_corrected", "needed_clarification")  # S15
CORRECTION_MAX = 4000
FREE_TEXT_MAX = 2000
# Status -> error code for errors raised by the shared body parser (S1).
_CODES = {
    400: "invalid_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "rate_limited",
    500: "internal_error",
    503: "service_unavailable",
}


class MemoryOsError(Exception):
    def __init__(self, status: int, message: str, details: list[dict[str, str]] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details


def _envelope(now: dt.datetime) -> dict[str, str]:
    return {"request_id": str(uuid.uuid4()), "timestamp": wire_time(now)}


def error_response(
    status: int,
    message: str,
    details: list[dict[str, str]] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    error: dict[str, Any] = {"code": _CODES.get(status, "internal_error"), "message": message}
    if details is not None:
        error["details"] = details
    body = {"error": error, **_envelope(dt.datetime.now(dt.UTC))}
    return json_response(body, status, headers=headers)


class MemoryOsEmulator:
    def __init__(self, store: MemoryStore, faults: Faults) -> None:
        self.store = store
        self.faults = faults
        self.tenants = {t.api_key: t for t in tenants()}
        self.url_map = Map(
            [
                Rule(f"{BASE}/retrieve", endpoint="retrieve", methods=["POST"]),
                Rule(
                    f"{BASE}/clarifications/<clarification_id>/answer",
                    endpoint="answer",
                    methods=["POST"],
                ),
                Rule(f"{BASE}/retrieval-feedback", endpoint="feedback", methods=["POST"]),
                Rule(INSPECT_FEEDBACK, endpoint="inspect_feedback", methods=["GET"]),
            ],
            strict_slashes=False,
        )
        self._handlers: dict[str, Callable[..., Response]] = {
            "retrieve": self.on_retrieve,
            "answer": self.on_answer,
            "feedback": self.on_feedback,
            "inspect_feedback": self.on_inspect_feedback,
        }

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        started = time.perf_counter()
        request = LimitedRequest(environ)
        try:
            response = self._injected_fault(request, environ) or self.dispatch(request)
        except DropConnection:
            self._log(request, "dropped", started)
            raise
        self._log(request, str(response.status_code), started)
        return response(environ, start_response)

    def _log(self, request: Request, status: str, started: float) -> None:
        # Method, path, status and duration only: bodies hold people's memories.
        elapsed_ms = (time.perf_counter() - started) * 1000
        log.info("%s %s %s %.1fms", request.method, request.path, status, elapsed_ms)

    def _injected_fault(self, request: Request, environ: dict[str, Any]) -> Response | None:
        fault = self.faults.strike(request.full_path.rstrip("?"), environ)
        if fault is Fault.THROTTLE:
            return error_response(
                429,
                "Too many requests (devstack fault injection).",
                headers={"Retry-After": str(self.faults.retry_after_seconds)},
            )
        if fault is Fault.ERROR:
            return error_response(self.faults.error_status, "Injected fault (devstack).")
        return None

    def dispatch(self, request: Request) -> Response:
        try:
            endpoint, values = self.url_map.bind_to_environ(request.environ).match()
            tenant = self._tenant(request.headers.get("Authorization"))
            return self._handlers[endpoint](request, tenant, **values)
        except MemoryOsError as exc:
            return error_response(exc.status, exc.message, exc.details)
        except Invalid as exc:
            details = [{"field": f, "message": m} for f, m in exc.errors.items()]
            return error_response(422, "The request body is not valid.", details)
        except ApiError as exc:
            return error_response(exc.status, exc.detail, headers=exc.headers)
        except MethodNotAllowed as exc:
            return error_response(405, "Method not allowed.", headers=dict(exc.get_headers()))
        except HTTPException as exc:
            return error_response(exc.code or 500, "No such endpoint.")

    def _tenant(self, authorization: str | None) -> Tenant:
        """S2: `ApiKey mem_live_…`, one key per tenant; anything else is 401."""
        scheme, _, key = (authorization or "").partition(" ")
        found = self.tenants.get(key.strip()) if scheme.lower() == "apikey" else None
        if found is None:
            raise MemoryOsError(401, "Send a valid API key: Authorization: ApiKey mem_live_….")
        return found

    # --- retrieve ------------------------------------------------------------------------

    def on_retrieve(self, request: Request, tenant: Tenant) -> Response:
        query = retrieve.parse(read_json_object(request))
        now = dt.datetime.now(dt.UTC)
        body = {
            **retrieve.retrieve(self.store, tenant, query, now),
            **retrieve.quota_flags(tenant),
            **_envelope(now),
        }
        return json_response(body)

    # --- clarifications ------------------------------------------------------------------

    def on_answer(self, request: Request, tenant: Tenant, clarification_id: str) -> Response:
        fields = Fields(read_json_object(request))
        external_user_id = fields.string("external_user_id", retrieve.USER_ID_MAX, True) or ""
        answer = fields.choice("answer", ANSWERS)
        free_text = fields.string("free_text", FREE_TEXT_MAX)
        fields.check()
        now = dt.datetime.now(dt.UTC)
        try:
            found = self.store.resolve(
                tenant.name, external_user_id, clarification_id, answer, free_text, now
            )
        except NotFound as exc:
            # Another user's or tenant's clarification is indistinguishable from none (seed).
            raise MemoryOsError(404, "No such clarification.") from exc
        except Conflict as exc:
            raise MemoryOsError(409, f"The clarification cannot be answered: {exc}.") from exc
        data = {
            "resolved": True,
            "clarification_id": found.id,
            "conflict_id": found.conflict_id,
            "resolution": answer,
        }
        return json_response({"data": data, **_envelope(now)})

    # --- retrieval feedback --------------------------------------------------------------

    def on_feedback(self, request: Request, tenant: Tenant) -> Response:
        fields = Fields(read_json_object(request))
        retrieval_id = fields.string("retrieval_id", 64, required=True) or ""
        outcome = fields.choice("outcome", OUTCOMES)
        used = fields.strings("used_memory_ids")
        correction = fields.string("correction", CORRECTION_MAX)
        confidence = fields.number("agent_confidence", 0.0, 1.0)
        metadata = fields.mapping("metadata")
        # S15: a correction is what user_corrected carries, and only it.
        if outcome == "user_corrected" and not (correction or "").strip():
            fields.errors.setdefault("correction", "is required when outcome is user_corrected")
        elif outcome != "user_corrected" and correction is not None:
            fields.errors.setdefault("correction", "is only taken with outcome user_corrected")
        fields.check()
        found = self.store.retrieval(tenant.name, retrieval_id)
        if found is None:
            raise MemoryOsError(404, "No such retrieval.")
        external_user_id, returned = found
        foreign = [memory_id for memory_id in used if memory_id not in returned]
        if foreign:
            raise Invalid(
                {"used_memory_ids": f"not returned by this retrieval: {', '.join(foreign)}"}
            )
        now = dt.datetime.now(dt.UTC)
        feedback = Feedback(
            id=str(uuid.uuid4()),
            tenant=tenant.name,
            retrieval_id=retrieval_id,
            external_user_id=external_user_id,
            outcome=outcome,
            used_memory_ids=used,
            correction=correction,
            agent_confidence=confidence,
            metadata=metadata,
            correction_job_id=str(uuid.uuid4()) if outcome == "user_corrected" else None,
            received_at=now,
        )
        self.store.record_feedback(feedback)
        data = {
            "feedback_id": feedback.id,
            "retrieval_id": retrieval_id,
            "outcome": outcome,
            "correction_job_id": feedback.correction_job_id,
        }
        return json_response({"data": data, **_envelope(now)})

    def on_inspect_feedback(self, request: Request, tenant: Tenant) -> Response:
        """Devstack only (S16): the caller's tenant's feedback, oldest first, optionally of
        one retrieval or one user."""
        wanted = {
            k: request.args[k] for k in ("retrieval_id", "external_user_id") if k in request.args
        }
        data = [
            {
                "feedback_id": f.id,
                "retrieval_id": f.retrieval_id,
                "external_user_id": f.external_user_id,
                "outcome": f.outcome,
                "used_memory_ids": f.used_memory_ids,
                "correction": f.correction,
                "agent_confidence": f.agent_confidence,
                "metadata": f.metadata,
                "correction_job_id": f.correction_job_id,
                "received_at": wire_time(f.received_at),
            }
            for f in self.store.feedback(tenant.name)
            if all(getattr(f, k) == v for k, v in wanted.items())
        ]
        return json_response({"data": data, **_envelope(dt.datetime.now(dt.UTC))})


def build(**options: Unpack[emulators.Options]) -> MemoryOsEmulator:
    """The app over `{home}/memoryos.sqlite3`, seeded with the demo data on first use.

    API keys, not the devstack IdP's tokens, authenticate callers: `idp_url` and `ca_file`
    are not used. No faults unless given.
    """
    store = MemoryStore(options.get("home") or state_dir())
    store.seed_once()
    return MemoryOsEmulator(store, options.get("faults") or Faults())


def start(
    host: str = MEMORYOS_HOST, port: int = 0, **options: Unpack[emulators.Options]
) -> RunningServer:
    """Start on a free port (port=0) in a thread (tests); the caller stops it."""
    return start_in_thread(build(**options), host, port)


def emulator(running: RunningServer) -> MemoryOsEmulator:
    app = running.server.app
    assert isinstance(app, MemoryOsEmulator)
    return app
