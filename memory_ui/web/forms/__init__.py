"""Every input the portal takes, as Django forms, one module per screen family:
`fields` (what they share: limits, which memory, markdown and versions), `reading`,
`changes`, `transfer` (export and import), `search`, `support` (support staff's input and
the Activity filters) and `confirm` (confirmation mixins).

Forms check what was sent, never CoreAPI: which memory a `scope`/`agent` pair means is
resolved by the view (`access.target_for`), so an agent that isn't the user's is a 404
there and a forged scope is a form error here (400). Views use the forms from here
(`forms.EditForm`); support staff's forms come from `forms.support`. Fields rendered with
`as_field_group` go through the project's form renderer (`renderer.py`,
settings.FORM_RENDERER).
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
    RestoreVersionForm,
    UndoForm,
)
from memory_ui.web.forms.fields import (
    CLEAR_EVERYTHING_PHRASE,
    MAX_EDIT_BYTES,
    TargetForm,
    first_error,
)
from memory_ui.web.forms.reading import AgentListForm, CardsForm, SeenForm, ViewForm
from memory_ui.web.forms.search import QuickSearchForm, SearchForm
from memory_ui.web.forms.transfer import (
    ArchiveUploadForm,
    DownloadForm,
    ImportConfirmForm,
    ImportUploadForm,
    RestoreForm,
)

__all__ = [
    "CLEAR_EVERYTHING_PHRASE",
    "MAX_EDIT_BYTES",
    "AgentListForm",
    "AppendForm",
    "ArchiveUploadForm",
    "CardsForm",
    "ClearEverythingForm",
    "ClearForm",
    "DeleteEntryForm",
    "DeleteLinesForm",
    "DownloadForm",
    "EditForm",
    "EntryEditForm",
    "EntryForm",
    "ImportConfirmForm",
    "ImportUploadForm",
    "PreviewForm",
    "QuickSearchForm",
    "RestoreForm",
    "RestoreVersionForm",
    "SearchForm",
    "SeenForm",
    "TargetForm",
    "UndoForm",
    "ViewForm",
    "first_error",
]
