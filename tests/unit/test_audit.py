"""What the audit keeps: sizes and hashes, never content; reasons as typed, minus controls
that would reorder how they read."""

import pytest

from memory_ui.audit import Action, audit_record
from memory_ui.identity import Identity

CAROL = Identity("oid-carol", "tid", "carol@contoso.com", "Carol", ("Memory.Support",), "x")


@pytest.mark.django_db
def test_reasons_and_tickets_lose_bidi_controls_and_content_is_only_hashed():
    event = audit_record(
        CAROL,
        Action.CLEAR,
        subject_upn="alice@contoso.com",
        before="- secret\n",
        after="",
        reason="Privacy request \u202edeifirev\u202c",
        ticket="PRIV-\u20661\u2069",
    )
    event.refresh_from_db()
    assert (event.reason, event.ticket) == ("Privacy request deifirev", "PRIV-1")
    assert (event.bytes_before, event.bytes_after, event.actor_is_support) == (9, 0, True)
    assert "secret" not in " ".join(str(v) for v in vars(event).values())
