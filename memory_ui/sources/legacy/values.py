"""What the legacy stores' steps hand on: a file of "Export everything", the version of a
file an erasure must still find, and the messages of their failures."""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_ui.documents import content_hash
from memory_ui.documents.versions import Version
from memory_ui.sources.legacy.errors import REFUSED_MESSAGE
from memory_ui.sources.protocol import Item

# The sign-in service refused the portal a token for the stores: the same refusal to the
# person as the stores refusing its token (errors.LegacyUnauthorized).
NO_TOKEN = REFUSED_MESSAGE
NOT_EXPORTED = (
    "Their files were not in the request's export, so nothing was erased there: download "
    "the export again, then clear."
)
# Support acts for a person by UPN; a scope over {oid} needs their object id from Graph.
OID_UNKNOWN = (
    "The legacy stores are keyed by the user's object id, which the portal could not find "
    "for a user looked up by name."
)
GRAPH_OFF = (
    "Microsoft Graph, where the portal looks it up, is not configured (GRAPH_BASE_URL); "
    "ask the portal's operators."
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
