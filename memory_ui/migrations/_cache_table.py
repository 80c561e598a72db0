"""What 0002 and 0003 run: one function, so the two cannot drift apart. The leading
underscore keeps Django's migration loader from taking this module for a migration."""

from django.conf import settings
from django.core.management import call_command


def create_cache_table(apps, schema_editor) -> None:
    # By name, not from CACHES: the table is needed with Redis too (sessions fall back to
    # it, staged restores live in it), and when Redis is dropped later. Existing: skipped.
    call_command(
        "createcachetable",
        settings.DATABASE_CACHE["LOCATION"],
        database=schema_editor.connection.alias,
        verbosity=0,
    )
