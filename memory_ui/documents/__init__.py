"""Memory documents: render untrusted markdown safely, split it into entries, edit by line range.

Agents write memory from prompts, so every document is untrusted input.

- render.py: markdown-it (raw HTML off) followed by one nh3 allow-list; `render_markdown`
  is the only place in the project that marks HTML safe.
- outline.py: `outline`, one linear pass finding where entries, list items and blocks
  start (the CommonMark rules it follows are tabled there).
- parse.py: `parse_document` (entries, their heading, reason and provenance) and the list
  items of a document without entries.
- entries.py: the block format CoreAPI appends in, and edits of one entry or line range.

Line numbers are 0-based and half-open over the document's lines, where a line ends at
"\\n", "\\r\\n" or "\\r" (what markdown-it counts; `str.splitlines` also breaks at form
feeds and U+2028, which would shift every line number after one of them).
"""

from memory_ui.documents.entries import (
    EntryEditError,
    appended,
    content_hash,
    entry_heading,
    entry_label,
    neutralise_entry_headings,
    neutralise_provenance,
    remove_entry,
    remove_lines,
    replace_entry,
)
from memory_ui.documents.outline import Outline, outline
from memory_ui.documents.parse import (
    Document,
    Entry,
    ListItem,
    OutOfRangeError,
    count_entries,
    list_items_between,
    moved_file_reason,
    parse_document,
)
from memory_ui.documents.render import render_markdown

# Re-exported for web/forms.py, which imported it from here before it moved to memory_ui/text.py.
from memory_ui.text import without_bidi_controls

__all__ = [
    "Document",
    "Entry",
    "EntryEditError",
    "ListItem",
    "OutOfRangeError",
    "Outline",
    "appended",
    "content_hash",
    "count_entries",
    "entry_heading",
    "entry_label",
    "list_items_between",
    "moved_file_reason",
    "neutralise_entry_headings",
    "neutralise_provenance",
    "outline",
    "parse_document",
    "remove_entry",
    "remove_lines",
    "render_markdown",
    "replace_entry",
    "without_bidi_controls",
]
