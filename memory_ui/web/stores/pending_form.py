"""A form whose sign-in had expired, kept in the session."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.sessions.backends.base import SessionBase

# --- A form whose sign-in had expired: what was typed waits in the session until the
# person is back on the page the form came from (the same user: signing in as someone
# else flushes the session).

PENDING_FORM = "pending_form"
PENDING_FORM_MAX_BYTES = 4 * 1024 * 1024
NOT_KEPT = frozenset({"csrfmiddlewaretoken"})
# Fields people type, shown to them again; the rest (which memory, versions) stay hidden.
TYPED_FIELDS = {
    "content": "What you wrote",
    "pasted": "What you pasted",
    "text": "What you were importing",
    "reason": "Reason",
    "ticket": "Ticket reference",
    "confirm_upn": "The user's UPN, typed to confirm",
    "phrase": "Confirmation",
    "upn": "User principal name",
}


@dataclass(frozen=True)
class PendingForm:
    action: str  # where the form posted
    origin: str  # the page it came from (path and query)
    fields: list[tuple[str, str]]
    had_files: bool

    @property
    def rows(self) -> list[tuple[str, str, str]]:
        """(name, value, label) for the form that sends it again; the label is empty for
        fields people did not type (which memory, versions), which stay hidden."""
        return [(name, value, TYPED_FIELDS.get(name, "")) for name, value in self.fields]


def pending_form_keep(session: SessionBase, pending: PendingForm) -> bool:
    """Keep what was typed; False when it is too large to keep."""
    size = sum(len(name) + len(value.encode()) for name, value in pending.fields)
    if size > PENDING_FORM_MAX_BYTES:
        return False
    session[PENDING_FORM] = {
        "action": pending.action,
        "origin": pending.origin,
        "fields": [list(pair) for pair in pending.fields],
        "had_files": pending.had_files,
    }
    return True


def pending_form_take(session: SessionBase, path: str) -> PendingForm | None:
    """The kept form, once, when `path` is the page it came from."""
    raw = session.get(PENDING_FORM)
    if not raw or raw["origin"].split("?", 1)[0] != path:
        return None
    del session[PENDING_FORM]
    fields = [(name, value) for name, value in raw["fields"]]
    return PendingForm(raw["action"], raw["origin"], fields, raw["had_files"])
