"""Create the database cache table, so `migrate` alone prepares a deployment: no separate
`createcachetable` step to forget."""

from django.conf import settings
from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor) -> None:
    # By name, not from CACHES: the table is needed with Redis too (sessions fall back to
    # it, staged restores live in it), and when Redis is dropped later. Existing: skipped.
    call_command(
        "createcachetable",
        settings.DATABASE_CACHE["LOCATION"],
        database=schema_editor.connection.alias,
        verbosity=0,
    )


class Migration(migrations.Migration):
    dependencies = [("memory_ui", "0001_initial")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
