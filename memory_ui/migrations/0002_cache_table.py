"""Create the database cache table (when the cache is the database), so `migrate` alone
prepares a deployment: no separate `createcachetable` step to forget."""

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor) -> None:
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("memory_ui", "0001_initial")]

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
