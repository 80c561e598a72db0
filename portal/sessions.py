"""Sessions in the database, as Django's `db` backend keeps them (SESSION_ENGINE), read
with one raw query."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.sessions.backends import db
from django.db import connections, router
from django.utils import timezone

if TYPE_CHECKING:
    from django.contrib.sessions.models import Session


class SessionStore(db.SessionStore):
    """Every signed-in request reads its session. Django's backend built and compiled the
    same SELECT as a QuerySet each time, about ten times the cost of running it (0.2-0.3
    ms a request, docs/performance.md). The same row, under the same condition (the key,
    not expired), read as a raw query; everything else is Django's."""

    def _get_session_from_db(self) -> Session | None:
        model = self.model
        database = router.db_for_read(model)
        expire_date = model._meta.get_field("expire_date")
        now = expire_date.get_db_prep_value(timezone.now(), connections[database])
        table = connections[database].ops.quote_name(model._meta.db_table)
        query = f"SELECT * FROM {table} WHERE session_key = %s AND expire_date > %s"  # noqa: S608
        found = next(iter(model.objects.raw(query, [self.session_key, now])), None)
        if found is None:
            self._session_key = None  # as Django's: no such session, or it expired
        return found
