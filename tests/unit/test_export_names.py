"""A target's key as a file name inside "Export everything"'s zip (`generic.file_name`, used
by the generic steps and the memory-api's): a key a service chose (an agent's name) never
becomes a path out of its system's folder."""

from __future__ import annotations

from memory_ui.sources.generic import file_name


def test_no_key_becomes_a_path() -> None:
    for key in ("../../etc/passwd", "a/b", "a\\b", "/abs", "agent:travel"):
        name = file_name(key)
        assert "/" not in name and "\\" not in name and ":" not in name, key
    assert file_name("benefits-assistant") == "benefits-assistant"
    assert file_name("-") == "-"  # the memory-api's memories without an agent
    assert file_name("") == "memory"


def test_keys_that_read_alike_get_files_of_their_own() -> None:
    from memory_ui.sources.generic import export_name
    from memory_ui.sources.protocol import ExportedFile

    files: list[ExportedFile] = []
    for key in ("travel planner", "travel_planner", "travel/planner"):
        files.append(ExportedFile(export_name(key, files), "", key))

    assert [f.name for f in files] == [
        "travel_planner.md",
        "travel_planner-2.md",
        "travel_planner-3.md",
    ]
