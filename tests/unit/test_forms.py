"""The change forms (typed text kept as typed, limits, version tokens, the confirmation
phrase) and the three-way merge behind "Re-apply my changes onto the new version"."""

import pytest

from memory_ui.documents.diffs import merge_changes
from memory_ui.documents.versions import Version
from memory_ui.web.forms import (
    MAX_EDIT_BYTES,
    AppendForm,
    ClearEverythingForm,
    DeleteEntryForm,
    PreviewForm,
)

USER = {"scope": "user"}  # the user's shared memory


def _form(form_class, data):
    return form_class(data)


def test_textarea_line_endings_become_newlines_and_nothing_else_changes():
    form = PreviewForm({"content": "  # Title\r\n\r\n- item\r- other  \r\n"})
    assert form.is_valid()
    assert form.cleaned_data["content"] == "  # Title\n\n- item\n- other  \n"


def test_documents_are_limited_in_bytes_not_characters():
    fits = "é" * (MAX_EDIT_BYTES // 2)
    assert PreviewForm({"content": fits}).is_valid()
    too_big = PreviewForm({"content": fits + "é"})
    assert not too_big.is_valid()
    assert "the limit is 2,097,152 bytes" in too_big.errors["content"][0]


def test_nul_bytes_are_refused():
    assert not PreviewForm({"content": "a\x00b"}).is_valid()


def test_append_needs_text_and_keeps_the_reason_on_one_line():
    form = _form(AppendForm, {**USER, "content": "- Likes tea.", "reason": " Said\nso  twice "})
    assert form.is_valid()
    assert (form.cleaned_data["scope"], form.cleaned_data["agent"]) == ("user", "")
    assert form.cleaned_data["reason"] == "Said so twice"
    empty = _form(AppendForm, {**USER, "content": " \r\n "})
    assert not empty.is_valid() and "content" in empty.errors


def test_version_tokens_are_parsed_or_refused():
    token = Version("2026-12-02T10:00:00+00:00", "a" * 64).token()
    form = _form(DeleteEntryForm, {**USER, "version": token, "index": "2"})
    assert form.is_valid()
    assert form.cleaned_data["version"] == Version("2026-12-02T10:00:00+00:00", "a" * 64)
    for bad in ("", "no-bar", "2026|short"):
        assert "version" in _form(DeleteEntryForm, {**USER, "version": bad, "index": "0"}).errors


@pytest.mark.parametrize("scope", ["combined", "USER", ""])
def test_a_forged_scope_is_a_form_error(scope):
    form = _form(DeleteEntryForm, {"scope": scope, "version": "|" + "a" * 64, "index": "0"})
    assert not form.is_valid()
    assert not form.names_a_memory


@pytest.mark.parametrize("agent", ["../user", "travel planner", "-x", "a" * 101])
def test_a_malformed_agent_name_is_a_form_error(agent):
    form = _form(DeleteEntryForm, {"scope": "agent", "agent": agent, "version": "|" + "a" * 64})
    assert not form.names_a_memory


@pytest.mark.parametrize("typed", ["clear everything", "Clear Everything", "  clear   everything "])
def test_clear_everything_phrase(typed):
    assert ClearEverythingForm({"phrase": typed}).is_valid()


@pytest.mark.parametrize("typed", ["", "clear", "clear everything!", "delete everything"])
def test_clear_everything_refuses_anything_else(typed):
    assert not ClearEverythingForm({"phrase": typed}).is_valid()


# --- re-applying a draft onto a changed document (diffs.merge_changes) -----------------

BASE = "# Notes\n\n- one\n- two\n- three\n"


def test_an_edit_and_an_append_elsewhere_combine():
    theirs = BASE + "\n## Added 2026-12-02T10:00:00Z\n\n- four\n"
    yours = BASE.replace("- two", "- TWO")
    assert merge_changes(BASE, theirs, yours) == theirs.replace("- two", "- TWO")


def test_a_deletion_and_an_edit_elsewhere_combine():
    theirs = BASE.replace("- one\n", "")
    yours = BASE.replace("- three", "- 3")
    assert merge_changes(BASE, theirs, yours) == "# Notes\n\n- two\n- 3\n"


def test_the_same_change_on_both_sides_applies_once():
    both = BASE.replace("- two", "- 2")
    assert merge_changes(BASE, both, both) == both


@pytest.mark.parametrize(
    ("theirs", "yours"),
    [
        (BASE.replace("- two", "- 2"), BASE.replace("- two", "- deux")),  # one line, two ways
        (BASE + "- theirs\n", BASE + "- mine\n"),  # both add at the end
        (BASE.replace("- two\n", ""), BASE.replace("- two", "- 2")),  # deleted vs edited
    ],
)
def test_changes_to_the_same_lines_are_left_to_the_user(theirs, yours):
    assert merge_changes(BASE, theirs, yours) is None


def test_nothing_changed_on_one_side():
    yours = BASE + "- mine\n"
    assert merge_changes(BASE, BASE, yours) == yours
    assert merge_changes(BASE, yours, BASE) == yours


def test_bidi_controls_are_dropped_from_a_note_reason():
    form = _form(
        AppendForm, {**USER, "content": "- x", "reason": "ok \u202edeifirev\u202c \u2067x\u2069"}
    )
    assert form.is_valid()
    assert form.cleaned_data["reason"] == "ok deifirev x"
