"""Fault injection: latency, 5xx, 429 and dropped connections, optionally for some paths only.

Settings come from the constructor, from `DEVSTACK_COREAPI_FAULT_*` environment variables
(`Faults.from_env`) or from `python -m devstack.coreapi --fault-*` flags. The app keeps
them in a mutable `Faults` (`app.faults`) so in-process tests can switch them at runtime.
"""

from __future__ import annotations

import contextlib
import enum
import os
import random
import re
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

ENV_PREFIX = "DEVSTACK_COREAPI_FAULT_"


class DropConnection(ConnectionAbortedError):
    """Werkzeug treats ConnectionError from the app as a dropped client and writes nothing."""


class Fault(enum.Enum):
    DROP = "drop"  # close the socket without any response
    THROTTLE = "throttle"  # 429 with quota JSON and Retry-After
    ERROR = "error"  # 500 or 503 ProblemDetails


@dataclass
class Faults:
    latency_ms: int = 0  # added before every matching request
    error_rate: float = 0.0  # share of matching requests answered with `error_status`
    error_status: int = 500  # 500 or 503
    throttle_rate: float = 0.0  # share answered 429
    retry_after_seconds: int = 5  # Retry-After and time_until_retry_seconds of the 429
    drop_rate: float = 0.0  # share whose connection is closed without a response
    path_regex: str | None = None  # re.search against "path?query" (query percent-decoded)
    # Injectable so tests (and --fault-seed) get repeatable draws; rates 0 and 1 never depend on it.
    rng: random.Random = field(default_factory=random.Random, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        rates = {
            "error_rate": self.error_rate,
            "throttle_rate": self.throttle_rate,
            "drop_rate": self.drop_rate,
        }
        for name, rate in rates.items():
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, got {rate}")
        if sum(rates.values()) > 1.0:
            raise ValueError("error_rate + throttle_rate + drop_rate must not exceed 1")
        if self.error_status not in (500, 503):
            raise ValueError(f"error_status must be 500 or 503, got {self.error_status}")
        if self.latency_ms < 0 or self.retry_after_seconds < 0:
            raise ValueError("latency_ms and retry_after_seconds must not be negative")
        if self.path_regex:
            try:
                re.compile(self.path_regex)
            except re.error as exc:  # not a ValueError: callers catch ValueError only
                raise ValueError(f"path_regex is not a valid regular expression: {exc}") from exc

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Faults:
        def get(name: str) -> str | None:
            return environ.get(ENV_PREFIX + name) or None

        seed = get("SEED")
        return cls(
            latency_ms=int(get("LATENCY_MS") or 0),
            error_rate=float(get("ERROR_RATE") or 0),
            error_status=int(get("ERROR_STATUS") or 500),
            throttle_rate=float(get("THROTTLE_RATE") or 0),
            retry_after_seconds=int(get("RETRY_AFTER") or 5),
            drop_rate=float(get("DROP_RATE") or 0),
            path_regex=get("PATH_REGEX"),
            rng=random.Random(int(seed)) if seed is not None else random.Random(),
        )

    def applies_to(self, target: str) -> bool:
        return not self.path_regex or re.search(self.path_regex, target) is not None

    def strike(self, target: str, environ: dict[str, Any]) -> Fault | None:
        """The fault for one request to `target` ("path?query"), after the injected latency.

        A DROP is carried out here (DropConnection); THROTTLE and ERROR are returned for the
        emulator to answer in its own error format.
        """
        if not self.applies_to(target):
            return None
        if self.latency_ms:
            time.sleep(self.latency_ms / 1000)
        fault = self.draw()
        if fault is Fault.DROP:
            _drop(environ)
        return fault

    def draw(self) -> Fault | None:
        """One uniform draw split into consecutive bands, so each rate is its own share."""
        if not (self.drop_rate or self.throttle_rate or self.error_rate):
            return None
        roll = self.rng.random()  # in [0, 1): rate 1.0 always hits, rate 0.0 never does
        for fault, rate in (
            (Fault.DROP, self.drop_rate),
            (Fault.THROTTLE, self.throttle_rate),
            (Fault.ERROR, self.error_rate),
        ):
            if roll < rate:
                return fault
            roll -= rate
        return None


def _drop(environ: dict[str, Any]) -> NoReturn:
    """Close the connection with no response at all (the client sees RemoteDisconnected).

    Shutting the socket down matters: werkzeug speaks HTTP/1.1, and with nothing written
    it would otherwise wait on the same connection for a next request while the client
    waits for this response.
    """
    sock = environ.get("werkzeug.socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
    raise DropConnection("fault injection: connection dropped")
