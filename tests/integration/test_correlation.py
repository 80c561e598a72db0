"""The portal's request id reaches the real CoreAPI emulator as X-Correlation-ID, for
every call a request makes, including those fanned out to other threads."""

from __future__ import annotations

import logging

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def emulator_correlations(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage().rsplit("correlation=", 1)[1]
        for record in caplog.records
        if record.name == "devstack.coreapi" and "correlation=" in record.getMessage()
    ]


def test_the_emulator_sees_the_request_id(alice: Client, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO, logger="devstack.coreapi")
    caplog.clear()
    page = alice.get("/", HTTP_X_REQUEST_ID="it-dashboard-1")
    assert page.status_code == 200
    assert page["X-Request-ID"] == "it-dashboard-1"
    assert emulator_correlations(caplog) and set(emulator_correlations(caplog)) == {
        "it-dashboard-1"
    }


def test_fanned_out_calls_carry_it_too(alice: Client, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO, logger="devstack.coreapi")
    caplog.clear()
    archive = alice.get("/export/everything", HTTP_X_REQUEST_ID="it-export-1")
    assert archive.status_code == 200
    body = b"".join(archive.streaming_content) if archive.streaming else archive.content
    assert body.startswith(b"PK")  # a zip
    seen = emulator_correlations(caplog)
    assert len(seen) > 4  # the agents, then reads and exports of every memory
    assert set(seen) == {"it-export-1"}
