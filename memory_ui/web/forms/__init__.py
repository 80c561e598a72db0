"""Every input the portal takes, as Django forms, one module per screen family:
`fields` (what they share: limits, which memory, markdown and versions), `reading`,
`changes`, `transfer` (export and import), `search`, `support` (support staff's input and
the Activity filters) and `confirm` (confirmation mixins).

Forms check what was sent, never CoreAPI: which memory a `scope`/`agent` pair means is
resolved by the view (`access.target_for`), so an agent that isn't the user's is a 404
there and a forged scope is a form error here (400). Every field is rendered through the
project's form renderer (`memory_ui.web.forms.renderer`, settings.FORM_RENDERER).
"""

from memory_ui.web.forms.changes import (
    AppendForm,
    ClearEverythingForm,
    ClearForm,
    DeleteEntryForm,
    DeleteLinesForm,
    EditForm,
    EntryEditForm,
    EntryForm,
    PreviewForm,
    SubmissionMixin,
    UndoForm,
)
from memory_ui.web.forms.confirm import (
    CheckboxConfirmation,
    NonceConfirmation,
    PhraseConfirmation,
    UPNConfirmation,
)
from memory_ui.web.forms.fields import (
    CLEAR_EVERYTHING_PHRASE,
    IMPORT_MODES,
    MAX_DOCUMENT_BYTES,
    MAX_EDIT_BYTES,
    MAX_NOTE_BYTES,
    MAX_REASON_CHARS,
    MarkdownField,
    TargetForm,
    VersionField,
    first_error,
)
from memory_ui.web.forms.reading import AgentListForm, CardsForm, ViewForm
from memory_ui.web.forms.search import SearchForm
from memory_ui.web.forms.support import (
    EVERY_MEMORY,
    UPN_PATTERN,
    ActivityFilterForm,
    AuditFilterForm,
    ClearRequestForm,
    DeletionRequestForm,
    LookupForm,
    RevealForm,
    valid_upn,
)
from memory_ui.web.forms.transfer import (
    ArchiveUploadForm,
    DownloadForm,
    ImportConfirmForm,
    ImportUploadForm,
    RefusableForm,
    RestoreForm,
)

__all__ = [
    "CLEAR_EVERYTHING_PHRASE",
    "EVERY_MEMORY",
    "IMPORT_MODES",
    "MAX_DOCUMENT_BYTES",
    "MAX_EDIT_BYTES",
    "MAX_NOTE_BYTES",
    "MAX_REASON_CHARS",
    "UPN_PATTERN",
    "ActivityFilterForm",
    "AgentListForm",
    "AppendForm",
    "ArchiveUploadForm",
    "AuditFilterForm",
    "CardsForm",
    "CheckboxConfirmation",
    "ClearEverythingForm",
    "ClearForm",
    "ClearRequestForm",
    "DeleteEntryForm",
    "DeleteLinesForm",
    "DeletionRequestForm",
    "DownloadForm",
    "EditForm",
    "EntryEditForm",
    "EntryForm",
    "ImportConfirmForm",
    "ImportUploadForm",
    "LookupForm",
    "MarkdownField",
    "NonceConfirmation",
    "PhraseConfirmation",
    "PreviewForm",
    "RefusableForm",
    "RestoreForm",
    "RevealForm",
    "SearchForm",
    "SubmissionMixin",
    "TargetForm",
    "UPNConfirmation",
    "UndoForm",
    "VersionField",
    "ViewForm",
    "first_error",
    "valid_upn",
]
