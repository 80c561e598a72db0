"""`manage.py verify_receipt FILE`: whether an erasure receipt (the JSON the portal hands
out) is signed by one of this portal's keys and unchanged since, and which key signed it.
Exits non-zero when it is not; names no one but the receipt's subject."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory_ui.signatures import BadSignature, signing_key_id, verified


class Command(BaseCommand):
    help = "Check an erasure receipt's signature and say which key signed it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="the receipt as downloaded (.json)")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        try:
            document, key = verified(path.read_bytes())
        except OSError as exc:
            raise CommandError(f"{path}: cannot be read ({exc.strerror}).") from exc
        except BadSignature as exc:
            raise CommandError(f"{path}: NOT VALID. {exc}") from exc
        which = "the current signing key" if key == signing_key_id() else "an earlier key"
        self.stdout.write(
            f"{path}: valid, signed by {key} ({which}). Receipt {document.get('id')} for "
            f"{document.get('subject')}, {document.get('kind')}: {document.get('outcome')}."
        )
