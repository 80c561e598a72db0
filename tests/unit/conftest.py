"""Fixtures shared by the unit tests."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from portal.logs import JsonFormatter, RequestIdFilter


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """Every log line, formatted as in production (one JSON object a line)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    yield stream
    root.removeHandler(handler)
