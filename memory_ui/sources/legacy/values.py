"""What `legacy_ops` hands the web layer besides a `Store`: a file changed meanwhile, a
str_replace that no longer matches once, a file of "Export everything", the
version a change starts from, and the messages of its failures."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_ui.documents import content_hash
from memory_ui.documents.versions import Version
from memory_ui.sources.legacy import LegacyBadRequest
from memory_ui.sources.legacy.errors import REFUSED_MESSAGE
from memory_ui.sources.protocol import Item

CHANGED_MESSAGE = "The file was changed meanwhile; nothing was saved."
# The sign-in service refused the portal a token for the stores: the same refusal to the
# person as the stores refusing its token (errors.LegacyUnauthorized).
NO_TOKEN = REFUSED_MESSAGE
NOT_EXPORTED = (
    "Their files were not in the request's export, so nothing was erased there: download "
    "the export again, then clear."
)
OID_UNKNOWN = (
    "The legacy stores are keyed by the user's object id, which the portal does not know "
    "for a user looked up by name."
)


class FileChanged(Exception):
    """The file changed since the user began (another update_time or content hash); nothing
    was written. `current` is the file as it is now (None: it was deleted meanwhile)."""

    def __init__(self, current: Item | None) -> None:
        super().__init__(CHANGED_MESSAGE)
        self.current = current


class NotMatchedOnce(LegacyBadRequest):
    """A str_replace whose old text is not in the file exactly once."""

    default_message = (
        "That text is no longer in the file exactly once; reload the file and try again."
    )


@dataclass(frozen=True)
class ExportFile:
    """One file of "Export everything": a name inside the archive and its markdown."""

    name: str
    text: str
    store: str = ""  # the store's full name
    versions: dict[str, str] = field(default_factory=dict)  # path -> `file_version` token


def file_version(item: Item) -> Version:
    """The version a user starts an edit from: update_time and the content hash."""
    stamp = item.updated.isoformat() if item.updated else ""
    return Version(stamp, content_hash(item.text or ""))
