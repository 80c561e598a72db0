"""The portal's form renderer (settings.FORM_RENDERER): Django's own widget templates,
and one field template of the portal's (templates/forms/field.html), so a field rendered
with `{{ form.field.as_field_group }}` has the portal's markup everywhere, with its
label, help and error text tied to the input once, here. A form names its ids with
`auto_id` ("request-%s" gives `request-reason`, `request-reason-error`)."""

from __future__ import annotations

from pathlib import Path

from django import forms
from django.conf import settings
from django.forms import BoundField
from django.forms.renderers import DjangoTemplates
from django.template.backends.django import DjangoTemplates as DjangoTemplatesBackend
from django.utils.functional import cached_property


class PortalBoundField(BoundField):
    """The portal's ids for a field's help and error text: `<id>-help` and `<id>-error`
    (the input's aria-describedby names them; field.html writes them)."""

    @property
    def aria_describedby(self) -> str | None:
        if self.field.widget.attrs.get("aria-describedby"):
            return None
        described_by = []
        if self.auto_id and not self.is_hidden:
            if self.help_text:
                described_by.append(f"{self.auto_id}-help")
            if self.errors:
                described_by.append(f"{self.auto_id}-error")
        return " ".join(described_by)


class PortalFormRenderer(DjangoTemplates):
    field_template_name = "forms/field.html"
    bound_field_class = PortalBoundField

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
