"""CoreAPI as the portal's agent-memory store (`memory_ui.sources.agent_memory.AgentMemoryStore`):
the steps of `operations` and `exports`, which call CoreAPI and audit every call. The
registry hands this to the memory pages (`registry.memory_store()`); nothing outside this
package calls those modules."""

from __future__ import annotations

from memory_ui.sources.coreapi import exports, operations


class CoreAPIMemories:
    agents = staticmethod(operations.agents_list)
    read = staticmethod(operations.memory_read)
    load = staticmethod(operations.memory_load)
    load_many = staticmethod(operations.memory_load_many)
    reveal = staticmethod(operations.memory_reveal)
    lookup = staticmethod(operations.user_lookup)
    credentials_failed = staticmethod(operations.credentials_failed)
    append = staticmethod(operations.memory_append)
    import_append = staticmethod(operations.memory_import_append)
    rewrite = staticmethod(operations.memory_rewrite)
    replace = staticmethod(operations.memory_replace)
    clear = staticmethod(operations.memory_clear)
    clear_many = staticmethod(operations.memory_clear_many)
    export = staticmethod(exports.memory_export)
    export_many = staticmethod(exports.memory_export_many)
    one_event = staticmethod(operations.one_event)
    fits_one_write = staticmethod(operations.fits_one_write)
