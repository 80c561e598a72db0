"""WSGI entry point (gunicorn -c deploy/gunicorn.conf.py, which names portal.wsgi)."""

import os

import django
from django.core.handlers.wsgi import WSGIHandler

from portal import health, telemetry

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

# What get_wsgi_application() does, with telemetry between: after the logging set-up,
# before the middleware is built (OpenTelemetry wraps it).
django.setup(set_prefix=False)
telemetry.configure()
application = WSGIHandler()
# In each gunicorn worker (the module is imported after the fork): database and Redis
# health for /metrics and the log (portal/health.py).
health.start_watching()
