from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from devstack.memory_api.app import EDITIONS
from devstack.runner import run


class Command(BaseCommand):
    help = (
        "Run the development IdP (8443), the CoreAPI (8001), legacy store (8002) and memory-api "
        "(8003) emulators and the portal (8000). Ctrl-C stops all."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--no-portal", action="store_true", help="Start the IdP and the emulator only."
        )
        parser.add_argument(
            "--memory-api-edition",
            choices=EDITIONS,
            default="enterprise",
            help="The memory-api emulator's edition (default: enterprise).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        code = run(
            with_portal=not options["no_portal"],
            out=self.stdout,
            memory_api_edition=options["memory_api_edition"],
        )
        if code:
            raise CommandError("The devstack stopped with an error.", returncode=code)
