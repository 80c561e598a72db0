"""alice imports markdown with a preview and downloads exports, in Chromium.

Refusals (400, 409) are covered by tests/integration/test_transfer.py: Chromium logs every
4xx answer to an htmx request as a console error, which the page fixture counts as a failure.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import check_accessibility, expect_changed, sign_in_as
from tests.transfers import today

pytestmark = [pytest.mark.browser, pytest.mark.changes_memory]


def test_paste_preview_and_append(page: Page):
    sign_in_as(page, "Alice Example", "/memory/user")
    page.get_by_role("button", name="Import…").click()
    expect(page.get_by_role("heading", name="Import into your shared memory")).to_be_visible()
    page.get_by_label("Paste markdown").fill("# From Chromium\n\n- Likes **green** tea")
    page.get_by_role("button", name="Preview import").click()

    expect(page.get_by_role("heading", name="Check before importing")).to_be_visible()
    expect(page.locator(".import-rendered strong")).to_have_text("green")
    expect(page.locator(".diff-added").first).to_be_visible()
    expect(page.get_by_role("radio", name="Append")).to_be_checked()
    check_accessibility(page, "import preview")
    page.get_by_role("button", name="Import", exact=True).click()

    content = expect_changed(page, "/memory/user", "Imported pasted text into your shared memory")
    expect(content).to_contain_text("Likes green tea")
    expect(content).to_contain_text("Prefers concise answers")


def test_upload_a_file_and_replace_after_confirming(page: Page):
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner/import")
    page.get_by_label("A markdown file").set_input_files(
        {
            "name": "travel.md",
            "mimeType": "text/markdown",
            "buffer": "# Travel\r\n\r\n- Window seats now ✈️\r\n".encode(),
        }
    )
    page.get_by_role("button", name="Preview import").click()
    expect(page.locator(".import-rendered")).to_contain_text("Window seats now ✈️")
    expect(page.get_by_role("link", name="download a backup first")).to_have_attribute(
        "href", "/memory/agents/travel-planner/export"
    )
    page.get_by_role("radio", name="Replace").check()
    page.get_by_label("I understand that replacing removes everything").check()
    page.get_by_role("button", name="Import", exact=True).click()
    content = expect_changed(
        page, "/memory/agents/travel-planner", "Imported travel.md into Travel Planner"
    )
    expect(content).to_contain_text("Window seats now")
    expect(content).not_to_contain_text("aisle seats")


def test_download_one_memory_as_markdown(page: Page):
    sign_in_as(page, "Alice Example", "/memory/agents/travel-planner")
    link = page.get_by_role("button", name="Download (.md)")
    with page.expect_download() as info:
        link.click()
    download = info.value
    assert download.suggested_filename == f"memory-agent-travel-planner-{today()}.md"
    assert "aisle seats" in Path(download.path()).read_text(encoding="utf-8")
    expect(link).to_have_text("Download (.md)")  # back from "Preparing your download…"
    expect(link).not_to_have_attribute("aria-busy", "true")


def test_export_everything_downloads_a_zip(page: Page):
    sign_in_as(page, "Alice Example")
    button = page.get_by_role("button", name="Export everything (.zip)")
    with page.expect_download() as info:
        button.click()
    download = info.value
    assert download.suggested_filename == f"memory-export-{today()}.zip"
    with zipfile.ZipFile(io.BytesIO(Path(download.path()).read_bytes())) as archive:
        assert set(archive.namelist()) == {
            "user.md",
            "agent-benefits-assistant.md",
            "agent-it-helpdesk.md",
            "agent-travel-planner.md",
            "manifest.json",
        }
    expect(button).to_have_text("Export everything (.zip)")


def test_restore_an_export_from_the_dashboard(page: Page):
    sign_in_as(page, "Alice Example")
    with page.expect_download() as info:
        page.get_by_role("button", name="Export everything (.zip)").click()
    exported = Path(info.value.path()).read_bytes()

    page.get_by_role("button", name="Import…").click()
    page.get_by_label("The .zip file").set_input_files(
        {"name": "export.zip", "mimeType": "application/zip", "buffer": exported}
    )
    page.get_by_role("button", name="Check the archive").click()
    expect(page.get_by_role("heading", name="Restore from an export")).to_be_visible()
    expect(page.get_by_role("checkbox", name="Import Travel Planner")).to_be_checked()
    expect(page.get_by_role("radio", name="Replace")).to_be_checked()
    check_accessibility(page, "restore preview")
    for name in ("Shared with every agent", "Benefits Assistant", "IT Helpdesk"):
        page.get_by_role("checkbox", name=f"Import {name}").uncheck()
    page.get_by_label("I understand that replacing overwrites").check()
    page.get_by_role("button", name="Import the chosen ones").click()

    expect(page.locator(".import-results")).to_contain_text("Travel Planner: done. Replaced")
    expect(page.locator("#toasts")).to_contain_text("Imported 1 from export.zip")
    expect(page.get_by_role("button", name="Back to your memory")).to_be_visible()
    check_accessibility(page, "restore results")
