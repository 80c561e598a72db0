"""The production static files storage: each URL worked out once per process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from portal.staticfiles import StaticFilesStorage


@pytest.fixture
def storage(tmp_path: Path, settings) -> StaticFilesStorage:
    settings.DEBUG = False  # the hashed names, as in production
    manifest = {"version": "1.1", "paths": {"css/portal.css": "css/portal.0123abcd.css"}}
    (tmp_path / "staticfiles.json").write_text(json.dumps(manifest))
    return StaticFilesStorage(location=str(tmp_path), base_url="/static/")


def test_a_url_is_looked_up_in_the_manifest_once(storage: StaticFilesStorage) -> None:
    assert storage.url("css/portal.css") == "/static/css/portal.0123abcd.css"
    # Without the manifest's entry a second lookup would raise: the first answer is kept.
    storage.hashed_files.clear()
    assert storage.url("css/portal.css") == "/static/css/portal.0123abcd.css"


def test_a_name_missing_from_the_manifest_still_raises_every_time(
    storage: StaticFilesStorage,
) -> None:
    for _ in range(2):
        with pytest.raises(ValueError, match="Missing staticfiles manifest entry"):
            storage.url("js/nowhere.js")
