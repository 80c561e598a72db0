"""Loaded with `-p tests.testenv` before pytest-django reads the settings: the test
environment runs the production settings path (DEBUG off) with a throwaway secret."""

import os

os.environ.setdefault(
    "DJANGO_SECRET_KEY", "test-only-secret-key-0123456789abcdefghijklmnopqrstuvwxyz"
)
os.environ.setdefault("DJANGO_DEBUG", "false")
os.environ.setdefault("PORTAL_HTTPS", "false")
os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
