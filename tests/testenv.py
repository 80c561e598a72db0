"""Loaded with `-p tests.testenv` before pytest-django reads the settings: the test
environment runs the production settings path (DEBUG off) with a throwaway secret, and
asks for the devstack's defaults (fixtures point the portal at the servers they start)."""

import os
import tempfile

os.environ.setdefault(
    "DJANGO_SECRET_KEY", "test-only-secret-key-0123456789abcdefghijklmnopqrstuvwxyz"
)
os.environ.setdefault("DJANGO_DEBUG", "false")
os.environ.setdefault("PORTAL_DEVSTACK", "true")
os.environ.setdefault("PORTAL_HTTPS", "false")
os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
# Never serve a developer's collectstatic output (staticfiles/) in tests: it may be stale.
os.environ.setdefault(
    "DJANGO_STATIC_ROOT", os.path.join(tempfile.gettempdir(), "memory-portal-tests-no-static")
)
# The memory-api is on only where a test starts its emulator (and points the settings at
# it), never at a developer's running devstack.
os.environ.setdefault("MEMORY_API_BASE_URL", "")
