"""Request rules of seed 003 that are pure functions: paths, scopes, paging, the three
PATCH edit forms and keyword search (docs/legacy-stores.md, Choices where the seed is
silent)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

PATH_PREFIX = "/memories/"
MAX_PATH_CHARS = 1024
MAX_SCOPE_CHARS = 1024
MAX_DESCRIPTION_CHARS = 1024
ENTRIES_PAGE_DEFAULT = 100
ENTRIES_PAGE_CAP = 100  # "The server caps the page size": larger requests get this many
STORES_PAGE_DEFAULT = 100  # seed: defaults to 100, max 1000
STORES_PAGE_CAP = 1000
SEARCH_TOP_K_DEFAULT = 10
SEARCH_TOP_K_MAX = 50
EDIT_FORMS = ("replace_all", "str_replace", "insert")


class Invalid(ValueError):
    """A request field breaks a rule: 400 INVALID_PARAMETER_VALUE with this message."""


def check_scope(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise Invalid("scope is required.")
    if len(value) > MAX_SCOPE_CHARS:
        raise Invalid(f"scope is longer than {MAX_SCOPE_CHARS} characters.")
    return value


def check_path(value: Any) -> str:
    """An entry path: /memories/<name>[/<name>...], no empty, '.' or '..' segments."""
    if not isinstance(value, str) or not value:
        raise Invalid("path is required.")
    if not value.startswith(PATH_PREFIX) or value == PATH_PREFIX:
        raise Invalid(f"path must start with {PATH_PREFIX} and name an entry below it.")
    if len(value) > MAX_PATH_CHARS:
        raise Invalid(f"path is longer than {MAX_PATH_CHARS} characters.")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise Invalid("path must not contain control characters.")
    segments = value[len(PATH_PREFIX) :].split("/")
    if any(segment in ("", ".", "..") for segment in segments):
        raise Invalid("path must not contain empty, '.' or '..' segments.")
    return value


def check_text(value: Any, name: str, required: bool = False) -> str | None:
    if value is None:
        if required:
            raise Invalid(f"{name} is required.")
        return None
    if not isinstance(value, str):
        raise Invalid(f"{name} must be a string.")
    return value


def check_description(value: Any) -> str | None:
    text = check_text(value, "description")
    if text is not None and len(text) > MAX_DESCRIPTION_CHARS:
        raise Invalid(f"description is longer than {MAX_DESCRIPTION_CHARS} characters.")
    return text


def page_size(raw: str | None, default: int, cap: int, name: str) -> int:
    """A positive integer; above the cap it is lowered to the cap, as the seed says."""
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise Invalid(f"{name} must be an integer.") from exc
    if value < 1:
        raise Invalid(f"{name} must be at least 1.")
    return min(value, cap)


def encode_token(last: str) -> str:
    return base64.urlsafe_b64encode(last.encode("utf-8")).decode("ascii")


def decode_token(raw: str | None) -> str:
    """The key a page token continues after ('' = from the start)."""
    if not raw:
        return ""
    try:
        # validate=True: the lenient default would skip junk characters and restart paging.
        last = base64.b64decode(raw.encode("ascii"), altchars=b"-_", validate=True).decode()
    except (ValueError, UnicodeError, binascii.Error) as exc:
        raise Invalid("page_token is not valid.") from exc
    if not last:
        raise Invalid("page_token is not valid.")
    return last


def edit_form(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The one edit operation of a PATCH body, with its fields."""
    present = [form for form in EDIT_FORMS if body.get(form) is not None]
    if len(present) != 1:
        raise Invalid("Provide exactly one of replace_all, str_replace or insert.")
    form = present[0]
    fields = body[form]
    if not isinstance(fields, dict):
        raise Invalid(f"{form} must be an object.")
    return form, fields


def apply_edit(contents: str, form: str, fields: dict[str, Any]) -> str:
    if form == "replace_all":
        return check_text(fields.get("contents"), "replace_all.contents", required=True) or ""
    if form == "str_replace":
        return _str_replace(contents, fields)
    return _insert(contents, fields)


def _str_replace(contents: str, fields: dict[str, Any]) -> str:
    old = check_text(fields.get("old_str"), "str_replace.old_str", required=True)
    new = check_text(fields.get("new_str"), "str_replace.new_str")
    if not old:
        raise Invalid("str_replace.old_str must not be empty.")
    count = contents.count(old)
    if count != 1:
        found = "was not found" if count == 0 else f"matches {count} times"
        raise Invalid(f"str_replace.old_str {found}; it must match exactly once.")
    return contents.replace(old, new or "", 1)


def _insert(contents: str, fields: dict[str, Any]) -> str:
    """insert_text as whole lines after line `insert_line` (0 = top; omitted = the end)."""
    text = check_text(fields.get("insert_text"), "insert.insert_text", required=True) or ""
    line = fields.get("insert_line")
    lines = contents.splitlines(keepends=True)
    if line is None:
        at = len(lines)
    elif isinstance(line, bool) or not isinstance(line, int):
        raise Invalid("insert.insert_line must be an integer.")
    elif not 0 <= line <= len(lines):
        raise Invalid(f"insert.insert_line must be between 0 and {len(lines)}.")
    else:
        at = line
    if lines and not lines[-1].endswith("\n") and at == len(lines):
        lines[-1] += "\n"  # appending after an unterminated last line starts a new line
    block = text if text.endswith("\n") or at == len(lines) else text + "\n"
    return "".join(lines[:at]) + block + "".join(lines[at:])


def search_score(query: str, path: str, description: str, contents: str) -> int:
    """How many of the query's words occur (case-insensitively) in path, description
    or contents; 0 means no match."""
    haystack = "\n".join((path, description, contents)).casefold()
    return sum(1 for word in dict.fromkeys(query.casefold().split()) if word in haystack)
