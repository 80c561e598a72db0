"""The portal's form renderer (settings.FORM_RENDERER): Django's own widget templates,
and one field template of the portal's (templates/forms/field.html), so a field rendered
with `{{ form.field.as_field_group }}` has the portal's markup everywhere, with its
label, help and error text tied to the input once, here."""

from __future__ import annotations

from pathlib import Path

from django import forms
from django.conf import settings
from django.forms.renderers import DjangoTemplates
from django.template.backends.django import DjangoTemplates as DjangoTemplatesBackend
from django.utils.functional import cached_property


class PortalFormRenderer(DjangoTemplates):
    field_template_name = "forms/field.html"

    @cached_property
    def engine(self) -> DjangoTemplatesBackend:
        # Django's widget templates first, then the project's templates directory (where
        # the field template lives): the same engine Django's renderer builds, plus that.
        widgets = Path(forms.__file__).parent / "templates"
        return self.backend(
            {
                "APP_DIRS": True,
                "DIRS": [widgets, Path(settings.BASE_DIR) / "templates"],
                "NAME": "portalforms",
                "OPTIONS": {},
            }
        )
