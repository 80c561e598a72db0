"""The signed-in user's row, remembered in the worker process for a bounded time instead of
read from the database on every request (Django's auth middleware asks the backend for it
on each one: docs/performance.md).

A user made inactive or deleted loses access within `PORTAL_USER_RECHECK_SECONDS` on every
worker and instance (docs/operations.md), and at once in the process that saved the change
(unless a read of the old row was under way then: still within that bound).
Only the row's values are kept; each request gets its own instance built from them, so no
request sees another's changes to it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models.signals import post_delete, post_save


class ActiveUsers:
    """Active users' rows by primary key, each until `PORTAL_USER_RECHECK_SECONDS` after it
    was read; a bounded number, all forgotten when full (a miss costs one query)."""

    def __init__(self, limit: int = 4096) -> None:
        self._rows: dict[Any, tuple[str, tuple[Any, ...], float]] = {}
        self._limit = limit
        self._lock = threading.Lock()

    def get(self, user_id: Any) -> AbstractBaseUser | None:
        model = get_user_model()
        fields = [field.attname for field in model._meta.concrete_fields]
        found = self._rows.get(user_id)
        if found is not None and found[2] > time.monotonic():
            return model.from_db(found[0], fields, found[1])
        user = model.objects.filter(pk=user_id, is_active=True).first()
        if user is None:
            self.forget(user_id)
            return None
        with self._lock:
            if len(self._rows) >= self._limit:
                self._rows.clear()
            values = tuple(getattr(user, name) for name in fields)
            until = time.monotonic() + settings.PORTAL_USER_RECHECK_SECONDS
            self._rows[user_id] = (user._state.db, values, until)
        return user

    def forget(self, user_id: Any) -> None:
        with self._lock:
            self._rows.pop(user_id, None)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()


active_users = ActiveUsers()


def _changed(sender: type, instance: AbstractBaseUser, **kwargs: object) -> None:
    active_users.forget(instance.pk)


post_save.connect(_changed, sender=settings.AUTH_USER_MODEL, dispatch_uid="active_users_saved")
post_delete.connect(_changed, sender=settings.AUTH_USER_MODEL, dispatch_uid="active_users_gone")
