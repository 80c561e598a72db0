"""Create the database cache table where 0002 did not: 0002 used to make only the tables
CACHES named, so a database first migrated with REDIS_URL set had none, and dropping
Redis later gave 500s. Existing tables are skipped, so this is safe to run anywhere."""

from django.conf import settings
from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor) -> None:
    call_command(
        "createcachetable",
        settings.DATABASE_CACHE["LOCATION"],
        database=schema_editor.connection.alias,
        verbosity=0,
    )


class Migration(migrations.Migration):
    dependencies = [("memory_ui", "0002_cache_table")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
