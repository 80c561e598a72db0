"""Create the database cache table where 0002 did not: 0002 used to make only the tables
CACHES named, so a database first migrated with REDIS_URL set had none, and dropping
Redis later gave 500s. It runs what 0002 runs now (_cache_table.py); existing tables are
skipped, so this is safe to run anywhere."""

from django.db import migrations

from memory_ui.migrations._cache_table import create_cache_table


class Migration(migrations.Migration):
    dependencies = [("memory_ui", "0002_cache_table")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
