"""alice changes her memory in Chromium: edit with a live preview, delete and Undo, add a
note, clear with confirmation. Each test has an emulator of its own (`fresh_coreapi`)."""

import re
from datetime import timedelta

import pytest
from django.db.models import F
from playwright.sync_api import Locator, Page, expect

from memory_ui.models import MemoryVisit
from tests.browser.conftest import (
    check_accessibility,
    entry_action,
    expect_changed,
    expect_clean_console,
    expect_statuses,
    sign_in_as,
)
from tests.integration.test_changes import agent  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.changes_memory]


def test_edit_with_live_preview(page: Page):
    sign_in_as(page, "Alice Example", "/memory/user")
    page.get_by_role("button", name="Advanced: edit as markdown").click()
    expect(page.get_by_role("heading", name="Edit your shared memory")).to_be_visible()
    expect(page.locator("#edit-preview")).to_contain_text("Prefers concise answers")

    page.get_by_label("Markdown").fill("# Fresh start\n\n- **Bold** claim <b>not html</b>")

    # The preview follows the typing (debounced), rendered by the portal's sanitizer.
    expect(page.locator("#edit-preview strong")).to_have_text("Bold")
    expect(page.locator("#edit-preview")).to_contain_text("<b>not html</b>")
    expect(page.locator("#edit-preview b")).to_have_count(0)
    check_accessibility(page, "editing with a preview")
    page.get_by_role("button", name="Save").click()

    content = expect_changed(page, "/memory/user", "Saved your shared memory.")
    expect(content).to_contain_text("Bold claim")
    expect(content).not_to_contain_text("Prefers concise answers")


def test_delete_one_entry_and_undo(page: Page):
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner")
    entries = page.locator("#memory-content .entry")
    expect(entries).to_have_count(2)

    entry_action(page, "Delete", "entry 2: Upcoming trip").click()

    expect(entries).to_have_count(1)
    expect(page.locator("#memory-content")).not_to_contain_text("Trip to London")
    # One notice, the one with Undo (no toast saying it again).
    expect(page.locator(".change-notice")).to_be_focused()
    expect(page.locator(".change-notice")).to_have_count(1)
    expect(page.locator(".change-notice")).to_contain_text("Deleted “Upcoming trip”.")
    expect(page.locator("#toasts .toast")).to_have_count(0)
    page.get_by_role("button", name="Undo").click()

    expect(entries).to_have_count(2)
    expect(page.locator("#memory-content")).to_contain_text("Trip to London")
    expect(page.locator("#toasts")).to_contain_text("Restored what you deleted.")
    page.reload()
    expect(entries).to_have_count(2)


def test_add_a_note_in_place(page: Page):
    sign_in_as(page, "Alice Example", "/memory/agents/it-helpdesk")
    page.get_by_role("button", name="Add a note").click()
    note = page.get_by_role("textbox", name="Note")
    expect(note).to_be_focused()
    note.fill("- Prefers *remote* sessions.")
    page.get_by_role("textbox", name="Why").fill("Said so in chat")
    page.get_by_role("button", name="Add note").click()

    expect(page.locator("#memory-content .entry")).to_have_count(2)
    expect(page.locator("#memory-content")).to_contain_text("Said so in chat")
    expect(page.locator("#memory-content em")).to_have_text("remote")
    check_accessibility(page, "a note added")
    expect(page.locator("#change-panel")).to_be_empty()


def test_opening_the_note_again_keeps_what_was_typed(page: Page):
    # A second press of "Add a note" (a double click, or Space landing after the panel
    # opened) used to fetch the panel again; its answer replaced the note being typed with an
    # empty one, and "Add note" then sent nothing.
    sign_in_as(page, "Alice Example", "/memory/agents/it-helpdesk")
    opened: list[str] = []
    page.on(
        "request",
        lambda request: (
            opened.append(request.url)
            if request.method == "GET" and "/memory/append" in request.url
            else None
        ),
    )
    add = page.get_by_role("button", name="Add a note")
    add.click()
    note = page.get_by_role("textbox", name="Note")
    expect(note).to_be_focused()
    page.keyboard.type("- Half a thought")

    add.focus()
    page.keyboard.press("Space")
    expect(note).to_be_focused()
    expect(note).to_have_value("- Half a thought")
    assert len(opened) == 1
    page.get_by_role("button", name="Add note").click()
    expect(page.locator("#memory-content")).to_contain_text("Half a thought")


def test_clear_with_confirmation(page: Page):
    sign_in_as(page, "Alice Example", "/memory/agents/benefits-assistant")
    page.evaluate(
        "window.cleared = [];"
        "document.body.addEventListener('memoryCleared', e => window.cleared.push(e.detail))"
    )
    page.get_by_role("button", name="Clear…", exact=True).click()

    panel = page.locator("#change-panel")
    expect(page.get_by_role("heading", name="Clear Benefits Assistant's memory?")).to_be_focused()
    expect(panel).to_contain_text("Entries2")
    expect(page.locator("#memory-content")).to_contain_text("PPO Plus")  # nothing gone yet
    panel.get_by_role("button", name="Clear Benefits Assistant's memory").click()

    expect(page.locator("#memory-content")).to_contain_text(
        "This agent remembers nothing about you yet."
    )
    expect(panel).to_be_empty()
    page.wait_for_function("window.cleared.length === 1")
    assert page.evaluate("window.cleared[0].agent") == "benefits-assistant"
    page.reload()
    expect(page.locator("#memory-content")).to_contain_text("remembers nothing")


def test_edit_one_entry_in_place_by_keyboard(page: Page):
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner")
    actions = page.get_by_role("button", name="Actions for entry 2: Upcoming trip")
    edit = page.get_by_role("menuitem", name="Edit entry 2: Upcoming trip")
    text = page.get_by_role("textbox", name="Text")

    # The editor opens in place (from the entry's Actions menu) with focus in its text
    # field; Escape puts the entry back and focus on its Actions button, the menu closed.
    actions.click()
    edit.click()
    expect(text).to_be_focused()
    check_accessibility(page, "an entry's editor in place")
    page.keyboard.press("Escape")
    expect(text).to_have_count(0)
    expect(actions).to_be_focused()
    expect(actions).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_role("menu")).to_have_count(0)
    expect(page.locator("#entry-1")).to_contain_text("Trip to London")

    # The entry put back opens its editor again. Something typed is not dropped unasked:
    # declining keeps the editor, agreeing (here through Cancel) closes it, nothing saved.
    actions.press("Enter")
    expect(edit).to_be_focused()
    edit.press("Enter")
    expect(text).to_be_focused()
    text.press("End")
    page.keyboard.type(" Moved to March.")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.keyboard.press("Escape")
    expect(text).to_have_value(re.compile(r"Moved to March\.$"))
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Cancel").click()
    expect(actions).to_be_focused()
    expect(page).to_have_url(re.compile(r"/memory/agents/travel-planner$"))
    expect(page.locator("#memory-content")).not_to_contain_text("Moved to March")
    page.reload()
    expect(page.locator("#entry-1")).not_to_contain_text("Moved to March")

    # Typing refreshes the preview (the text field's own request, which must not look for
    # the editor's buttons inside the field: htmx would log a console error); Save puts the
    # entry back in place, changed.
    actions.click()
    edit.click()
    text.press("End")
    page.keyboard.type(" Moved to March.")
    expect(page.locator("#edit-preview")).to_contain_text("Moved to March.")
    # The Preview button sends the editor and gets it back, the text now its default:
    # Escape still asks before dropping it.
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("li.entry-editing[data-given-back]")).to_have_count(1)
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    text.press("Escape")
    expect(text).to_have_value(re.compile(r"Moved to March\.$"))
    assert asked == ["Discard your changes to this entry?"]
    # Saved, the entry is back in its place, changed, and has the focus (not the page).
    page.get_by_role("button", name="Save").press("Enter")
    expect(page.locator("#entry-1")).to_contain_text("Moved to March.")
    expect(text).to_have_count(0)
    expect(page.locator("#entry-1")).to_be_focused()
    expect(page.locator("#toasts")).to_contain_text("Saved the entry.")
    check_accessibility(page, "an entry saved in place")
    page.keyboard.press("Tab")  # on through the saved entry's own controls
    expect(page.locator("#entry-1").locator(":focus")).to_have_count(1)
    page.reload()
    expect(page.locator("#entry-1")).to_contain_text("Moved to March.")


def test_a_resized_editor_previews_without_a_csp_error(page: Page):
    # Dragging a text field's corner gives it an inline style; htmx used to copy that onto
    # the editor's next version in the swap (its settle), which the CSP refused: "Applying
    # inline style violates … style-src 'self'" after Enter on Preview.
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner")
    entry_action(page, "Edit", "entry 2: Upcoming trip").click()
    text = page.get_by_role("textbox", name="Text")
    expect(text).to_be_focused()
    box = text.bounding_box()
    corner = (box["x"] + box["width"] - 3, box["y"] + box["height"] - 3)
    page.mouse.move(*corner)
    page.mouse.down()
    page.mouse.move(corner[0], corner[1] + 120, steps=5)
    page.mouse.up()
    assert text.get_attribute("style"), "the drag did not resize the field"

    text.press("End")
    page.keyboard.type(" Moved to March.")
    page.get_by_role("button", name="Preview").press("Enter")
    expect(page.locator("li.entry-editing[data-given-back]")).to_have_count(1)
    expect(page.locator("#edit-preview")).to_contain_text("Moved to March.")
    expect_clean_console(page)


def scripted_dialogs(page: Page) -> tuple[list[str], list[bool]]:
    """Every dialog is recorded in `asked` (so an unexpected one fails the count checks) and
    answered from `answers` in order; with none left it is dismissed."""
    asked: list[str] = []
    answers: list[bool] = []

    def answer(dialog) -> None:
        asked.append(dialog.message)
        dialog.accept() if answers and answers.pop(0) else dialog.dismiss()

    page.on("dialog", answer)
    return asked, answers


def asks_before_leaving(page: Page, link: Locator) -> None:
    """Following `link` brings up the browser's own leave-page prompt (`scripted_dialogs`
    answers it)."""
    with page.expect_event("dialog") as dialog:
        link.click()
    assert dialog.value.type == "beforeunload"


def test_a_typed_note_is_not_dropped_unasked(page: Page):
    sign_in_as(page, "Alice Example", "/memory/agents/it-helpdesk")
    asked, answers = scripted_dialogs(page)
    add = page.get_by_role("button", name="Add a note")
    note = page.get_by_role("textbox", name="Note")
    panel = page.locator("#change-panel")

    # Empty, the panel closes at once, as before.
    add.press("Enter")
    expect(note).to_be_focused()
    page.keyboard.press("Escape")
    expect(panel).to_be_empty()
    assert asked == []

    # Typed: Escape asks; keeping it leaves the text and the panel as they were.
    add.press("Enter")
    expect(note).to_be_focused()
    page.keyboard.type("- Half a thought")
    answers.append(False)
    page.keyboard.press("Escape")
    assert asked == ["Discard the note you typed?"]
    expect(note).to_have_value("- Half a thought")

    # Clear… opened over it asks too; keeping it stays on the note, nothing fetched.
    answers.append(False)
    page.get_by_role("button", name="Clear…", exact=True).click()
    assert asked == ["Discard the note you typed?"] * 2
    expect(note).to_be_focused()
    expect(note).to_have_value("- Half a thought")
    expect(page.get_by_role("heading", name="Add a note to")).to_be_visible()

    # Cancel asks as well; kept, the link back is not followed.
    answers.append(False)
    page.get_by_role("button", name="Cancel").press("Enter")
    assert len(asked) == 3
    expect(note).to_have_value("- Half a thought")

    # Escape again, discarding this time: the panel closes and focus goes back to the button.
    answers.append(True)
    note.focus()
    page.keyboard.press("Escape")
    assert len(asked) == 4
    expect(panel).to_be_empty()
    expect(add).to_be_focused()

    # Clear… over a typed reason, agreed to: the Clear panel replaces the note.
    add.press("Enter")
    expect(note).to_be_focused()
    page.get_by_role("textbox", name="Why").fill("Said so in chat")
    answers.append(True)
    page.get_by_role("button", name="Clear…", exact=True).click()
    assert len(asked) == 5
    expect(page.get_by_role("heading", name="Clear IT Helpdesk's memory?")).to_be_focused()
    expect(note).to_have_count(0)
    expect(page.locator("#memory-content")).not_to_contain_text("Half a thought")


def test_leaving_the_page_asks_before_dropping_a_typed_note(page: Page, agent):  # noqa: F811
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner")
    # An entry arrives while she is away (as in test_news), so "Mark as seen" is offered.
    assert MemoryVisit.objects.update(seen_at=F("seen_at") - timedelta(minutes=5)) == 1
    agent.append("- Booked the Eurostar.", "travel-planner", "Train booked")
    page.reload()
    asked, answers = scripted_dialogs(page)
    entries = page.locator("#memory-content .entry")
    note = page.get_by_role("textbox", name="Note")
    expect(entries).to_have_count(3)
    expect(page.locator(".entry-new")).to_have_count(1)
    page.get_by_role("button", name="Add a note").click()
    expect(note).to_be_focused()
    page.keyboard.type("- Window seat")

    # Requests that swap #memory-content (the panel is outside it) neither ask nor drop it.
    page.get_by_role("button", name="Markdown", exact=True).click()
    expect(page.locator("#memory-content .raw-markdown")).to_be_visible()
    page.get_by_role("button", name="Formatted").click()
    entry_action(page, "Delete", re.compile(r"entry \d+: Upcoming trip")).click()
    expect(entries).to_have_count(2)
    page.get_by_role("button", name="Undo").click()
    expect(entries).to_have_count(3)
    assert asked == []
    expect(note).to_have_value("- Window seat")

    # "Mark as seen" loads a new page: asked; kept, the note stays and nothing is marked.
    seen = page.get_by_role("button", name="Mark as seen")
    answers.append(False)
    seen.click()
    assert asked == ["Discard the note you typed?"]
    expect(note).to_be_focused()
    expect(note).to_have_value("- Window seat")
    expect(page.locator(".entry-new")).to_have_count(1)

    # Discarded: it goes ahead.
    answers.append(True)
    seen.click()
    expect(page.locator("#toasts")).to_contain_text("Marked as seen.")
    assert len(asked) == 2
    expect(page.locator(".entry-new")).to_have_count(0)
    expect(note).to_have_count(0)


def test_following_a_link_away_asks_the_browser_before_dropping_what_is_typed(page: Page):
    # A followed link (breadcrumb, header) leaves before the page could ask itself: the
    # browser's own leave-page prompt asks, which Playwright sees as a "beforeunload" dialog.
    here = "/memory/agents/it-helpdesk"
    sign_in_as(page, "Alice Example", here)
    asked, answers = scripted_dialogs(page)
    crumb = page.get_by_role("navigation", name="breadcrumb").get_by_role(
        "link", name="Your memory"
    )
    add = page.get_by_role("button", name="Add a note")
    note = page.get_by_role("textbox", name="Note")
    dashboard = re.compile(r"^https?://[^/]+/$")

    # An empty note: the link is followed at once.
    add.click()
    expect(note).to_be_focused()
    crumb.click()
    expect(page).to_have_url(dashboard)
    assert asked == []

    page.goto(here)
    add.click()
    expect(note).to_be_focused()
    page.keyboard.type("- Half a thought")

    # A download stays on the page: not asked, the note kept.
    with page.expect_download():
        page.get_by_role("button", name="Download (.md)", exact=True).click()
    assert asked == []
    expect(note).to_have_value("- Half a thought")

    # Typed: the browser asks; staying keeps the page and the note as they were.
    asks_before_leaving(page, crumb)
    expect(page).to_have_url(re.compile(f"{here}$"))
    expect(note).to_have_value("- Half a thought")

    # Leaving: the next page.
    answers.append(True)
    asks_before_leaving(page, crumb)
    expect(page).to_have_url(dashboard)
    assert len(asked) == 2

    # An entry's editor with a changed text: the same.
    page.goto(here)
    entry_action(page, "Edit", re.compile(r"entry 1\b")).click()
    text = page.get_by_role("textbox", name="Text")
    expect(text).to_be_focused()
    page.keyboard.type(" Changed.")
    answers.append(True)
    asks_before_leaving(page, crumb)
    expect(page).to_have_url(dashboard)
    assert len(asked) == 3


def test_sending_the_note_or_the_entry_asks_nothing_but_a_draft_given_back_is_kept(
    page: Page,
    agent,  # noqa: F811
):
    here = "/memory/agents/travel-planner"
    sign_in_as(page, "Alice Example", "/memory/append?scope=agent&agent=travel-planner")
    asked, _ = scripted_dialogs(page)

    # The note's own page (a plain form): sending it loads the memory page, unasked.
    page.get_by_role("textbox", name="Note").fill("- Window seat")
    page.get_by_role("button", name="Add note").click()
    expect_changed(page, here, "Added")
    assert asked == []

    # An entry's editor the portal gives back (an agent changed the entry meanwhile: refused,
    # the draft kept as the editor's text): leaving it asks.
    entry_action(page, "Edit", "entry 2: Upcoming trip").click()
    text = page.get_by_role("textbox", name="Text")
    expect(text).to_be_focused()
    text.press("End")
    page.keyboard.type(" Moved to March.")
    agent.replace(agent.text("travel-planner").replace("London", "Paris"), "travel-planner")
    expect_statuses(page, 409)
    page.get_by_role("button", name="Save").click()
    expect(
        page.get_by_role("heading", name="This memory changed while you were editing")
    ).to_be_visible()
    expect(text).to_have_value(re.compile(r"Moved to March\.$"))
    assert asked == []
    crumb = page.get_by_role("navigation", name="breadcrumb").get_by_role(
        "link", name="Your memory"
    )
    asks_before_leaving(page, crumb)
    expect(page).to_have_url(re.compile(f"{here}$"))
    expect(text).to_have_value(re.compile(r"Moved to March\.$"))
