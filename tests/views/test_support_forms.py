"""The audit trail's filters and the refusal page's "start again" form are Django forms
rendered through the project's form renderer (templates/forms/field.html), as every other
field is: each label tied to its input, the limits and the errors from the form."""

from __future__ import annotations

import re

from django.test import Client

from memory_ui.sources.coreapi import CoreAPIUnavailable
from tests.fake_coreapi import FakeCoreAPI
from tests.views.helpers import body, field_value, page_text
from tests.views.test_support import ALICE, look_up, overview, request_fields, subject_of


def tag(html: str, name: str) -> str:
    """The opening tag of the field called `name`."""
    found = re.search(rf'<(?:input|select)[^>]* name="{name}"[^>]*>', html)
    assert found, name
    return found.group(0)


def test_the_audit_filters_are_labelled_fields_with_the_forms_limits(carol: Client):
    html = body(carol.get("/support/audit"))
    labels = {
        "subject": "Subject UPN",
        "actor": "Actor UPN",
        "ticket": "Ticket",
        "action": "Action",
        "date_from": "From",
        "date_to": "To",
    }
    for name, label in labels.items():
        assert f'<label for="audit-{name}">{label}</label>' in html, name
        assert f'id="audit-{name}"' in tag(html, name)
        assert "aria-invalid" not in tag(html, name)
    assert 'maxlength="254"' in tag(html, "subject") and 'maxlength="254"' in tag(html, "actor")
    assert 'maxlength="100"' in tag(html, "ticket")
    assert 'type="date"' in tag(html, "date_from") and 'type="date"' in tag(html, "date_to")
    assert '<option value="clear">Cleared</option>' in html


def test_a_wrong_audit_filter_says_which_and_why_and_keeps_what_was_typed(carol: Client):
    reversed_dates = {"subject": ALICE, "date_from": "2026-05-02", "date_to": "2026-05-01"}
    response = carol.post("/support/audit", reversed_dates)
    assert response.status_code == 400
    html = body(response)
    assert "Check the dates below." in page_text(response)
    to = tag(html, "date_to")
    assert 'aria-invalid="true"' in to and 'aria-describedby="audit-date_to-error"' in to
    assert (
        '<small id="audit-date_to-error" class="field-error">'
        "The end date is before the start date.</small>"
    ) in html
    assert "aria-invalid" not in tag(html, "date_from")
    assert f'value="{ALICE}"' in tag(html, "subject")
    assert "format=csv" not in html  # no download of events the page does not show

    too_long = carol.post("/support/audit", {"ticket": "T" * 101, "action": "clear"})
    assert too_long.status_code == 400
    assert "Check the filters below." in page_text(too_long)
    assert 'aria-describedby="audit-ticket-error"' in tag(body(too_long), "ticket")
    assert "at most 100 characters" in page_text(too_long)
    assert '<option value="clear" selected>Cleared</option>' in body(too_long)

    typed = carol.get("/support/audit", {"date_from": "yesterday"})
    assert 'aria-describedby="audit-date_from-error"' in tag(body(typed), "date_from")
    assert "Enter a date with the date picker." in page_text(typed)
    assert "format=csv" not in body(typed)
    assert "format=csv" in body(carol.get("/support/audit", {"date_from": "2026-05-01"}))


def test_the_start_again_form_is_the_deletion_request_form(carol: Client, fake: FakeCoreAPI):
    page = look_up(carol)
    fake.fail("list_agents", CoreAPIUnavailable("CoreAPI is unavailable, try again."))
    fields = request_fields(field_value(body(page), "nonce"), scopes=["all", "agent:it-helpdesk"])
    response = carol.post(f"{overview(subject_of(page))}requests", fields)
    assert response.status_code == 503
    html = body(response)
    assert '<label for="request-reason">Reason</label>' in html
    assert '<label for="request-ticket">Ticket reference</label>' in html
    reason, ticket = tag(html, "reason"), tag(html, "ticket")
    assert 'maxlength="500"' in reason and 'minlength="5"' in reason and "required" in reason
    assert 'maxlength="100"' in ticket and "required" in ticket
    assert 'placeholder="e.g. PRIV-1234"' in ticket
    # The memories chosen travel hidden: they could not be listed to tick again.
    hidden = re.findall(r'<input type="hidden" name="scopes" value="([^"]+)"', html)
    assert hidden == ["all", "agent:it-helpdesk"]
    assert 'type="checkbox"' not in html
