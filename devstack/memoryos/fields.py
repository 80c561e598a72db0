"""Typed reads of a request body's fields; every field's error is reported together as one
422 (docs/memoryos.md, S3): JSON types are not coerced (`"5"` and `true` are not integers),
`null` is the same as leaving a field out, unknown fields are ignored."""

from __future__ import annotations

import datetime as dt
from typing import Any


class Invalid(Exception):
    """422 `validation_error`, with one message per field."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in errors.items()))
        self.errors = errors


class Fields:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.errors: dict[str, str] = {}

    def _get(self, name: str) -> Any:
        return self.data.get(name)

    def string(self, name: str, max_length: int, required: bool = False) -> str | None:
        value = self._get(name)
        if value is None:
            if required:
                self.errors[name] = "is required"
            return None
        if not isinstance(value, str):
            self.errors[name] = "must be a string"
        elif required and not value.strip():
            self.errors[name] = "must not be empty"
        elif len(value) > max_length:
            self.errors[name] = f"must be at most {max_length} characters"
        else:
            return value
        return None

    def integer(self, name: str, default: int | None, low: int, high: int) -> int | None:
        value = self._get(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.errors[name] = "must be an integer"
        elif not low <= value <= high:
            self.errors[name] = f"must be between {low} and {high}"
        else:
            return value
        return default

    def number(self, name: str, low: float, high: float) -> float | None:
        value = self._get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.errors[name] = "must be a number"
        elif not low <= value <= high:
            self.errors[name] = f"must be between {low:g} and {high:g}"
        else:
            return float(value)
        return None

    def choice(self, name: str, allowed: tuple[str, ...], default: str | None = None) -> str:
        value = self._get(name)
        if value is None:
            if default is None:
                self.errors[name] = "is required"
            return default or ""
        if value not in allowed:
            self.errors[name] = f"must be one of {', '.join(allowed)}"
            return default or ""
        return value

    def strings(self, name: str, allowed: tuple[str, ...] | None = None) -> list[str]:
        value = self._get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.errors[name] = "must be an array of strings"
            return []
        unknown = [item for item in value if allowed is not None and item not in allowed]
        if unknown:
            self.errors[name] = f"unknown {', '.join(unknown)}; allowed: {', '.join(allowed or ())}"
            return []
        return value

    def timestamp(self, name: str) -> dt.datetime | None:
        """ISO 8601 with a timezone; the seed asks for one, so a naive time is refused."""
        value = self._get(name)
        if value is None:
            return None
        try:
            moment = dt.datetime.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            moment = None
        if moment is None:
            self.errors[name] = "must be an ISO 8601 timestamp"
        elif moment.tzinfo is None:
            self.errors[name] = "must include a timezone (Z or an offset)"
        else:
            return moment
        return None

    def mapping(self, name: str) -> dict[str, Any] | None:
        value = self._get(name)
        if value is not None and not isinstance(value, dict):
            self.errors[name] = "must be an object"
            return None
        return value

    def check(self) -> None:
        if self.errors:
            raise Invalid(self.errors)
