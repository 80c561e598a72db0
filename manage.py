#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    # The devstack commands exist for development only: they ask for the devstack's
    # defaults (and its commands), and run with DEBUG on (and so a development secret key)
    # unless the environment says otherwise.
    if len(sys.argv) > 1 and sys.argv[1] in ("devstack", "devstack_token"):
        os.environ.setdefault("PORTAL_DEVSTACK", "true")
        os.environ.setdefault("DJANGO_DEBUG", "true")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as refused:
        from portal.logs import refuse

        refuse(refused)


if __name__ == "__main__":
    main()
