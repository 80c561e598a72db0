"""Create the database cache table, so `migrate` alone prepares a deployment: no separate
`createcachetable` step to forget."""

from django.db import migrations

from memory_ui.migrations._cache_table import create_cache_table


class Migration(migrations.Migration):
    dependencies = [("memory_ui", "0001_initial")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
