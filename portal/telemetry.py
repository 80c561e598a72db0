"""OpenTelemetry to Azure Monitor (Application Insights), when
APPLICATIONINSIGHTS_CONNECTION_STRING is set: traces of every request and of every
CoreAPI, Entra and database call (with W3C `traceparent` sent on to CoreAPI, which
FoundationaLLM traces in Application Insights too), exceptions and log records (at
PORTAL_LOG_LEVEL and above), and the request metrics Application Insights charts. Nothing is sent otherwise.

Called from portal/wsgi.py after django.setup() (whose LOGGING would otherwise drop the
exporter's handler from the root logger) and before Django builds its middleware, which
the Django instrumentation wraps. Each gunicorn worker calls it after the fork, so its
export threads live in the process that uses them.
"""

from __future__ import annotations

import logging
import os

from portal.logs import json_everywhere

logger = logging.getLogger("portal.telemetry")


def configure() -> bool:
    """Whether telemetry was switched on."""
    from django.conf import settings

    connection_string = settings.APPLICATIONINSIGHTS_CONNECTION_STRING
    if not connection_string:
        return False
    from azure.monitor.opentelemetry import configure_azure_monitor

    os.environ.setdefault("OTEL_SERVICE_NAME", "memory-portal")
    # The Django instrumentation's middleware reads the Host header (request.get_host())
    # on every request, which answers 400 to a Host outside ALLOWED_HOSTS: by default it
    # goes first, and then kubelet's probes by pod IP fail and the pod restarts forever.
    # After the probes and /metrics, which answer any Host, it traces everything else.
    middleware = list(settings.MIDDLEWARE)
    os.environ["OTEL_PYTHON_DJANGO_MIDDLEWARE_POSITION"] = str(
        middleware.index("portal.metrics.metrics") + 1
    )
    configure_azure_monitor(
        connection_string=connection_string,
        # Every record the root logger passes (PORTAL_LOG_LEVEL and above), exceptions too.
        logger_name="",
        instrumentation_options={
            # Libraries the portal does not use.
            "flask": {"enabled": False},
            "fastapi": {"enabled": False},
            "psycopg2": {"enabled": False},
        },
        enable_live_metrics=False,
    )
    # Its logging instrumentation writes its own warnings with a plain handler.
    json_everywhere()
    logger.info("Telemetry goes to Azure Monitor")
    return True
