"""The migrations keep up with the models, and the audit fields' choices stay out of them:
a new audit action or source must need no migration (memory_ui/models.py says why)."""

import io

import pytest
from django.core.management import call_command
from django.db import models

from memory_ui.models import AuditEvent


def missing_migrations() -> str:
    out = io.StringIO()
    # With check=True a model change that no migration describes raises SystemExit.
    call_command("makemigrations", check=True, dry_run=True, stdout=out)
    return out.getvalue()


def grown(choices: type[models.TextChoices], value: str, label: str) -> type[models.TextChoices]:
    members = [(member.name, (member.value, member.label)) for member in choices]
    return models.TextChoices(choices.__name__, [*members, (value.upper(), (value, label))])


@pytest.mark.django_db
def test_every_model_change_has_its_migration():
    assert missing_migrations() == "No changes detected\n"


@pytest.mark.django_db
def test_a_new_audit_action_or_source_needs_no_migration(monkeypatch):
    monkeypatch.setattr(AuditEvent, "Action", grown(AuditEvent.Action, "rename", "Renamed"))
    monkeypatch.setattr(AuditEvent, "Source", grown(AuditEvent.Source, "workspace", "Workspace"))

    assert ("rename", "Renamed") in AuditEvent._meta.get_field("action").choices
    assert ("workspace", "Workspace") in AuditEvent._meta.get_field("source").choices
    assert AuditEvent(action="rename").get_action_display() == "Renamed"
    assert missing_migrations() == "No changes detected\n"
