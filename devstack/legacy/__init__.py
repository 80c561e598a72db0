"""Legacy memory store emulator (seed 003; http://127.0.0.1:8002), dev and test only.

Serves the memory store, memory entry and conversation endpoints of the legacy managed memory
(docs/legacy-stores.md has the endpoints, status codes and every choice made where the
seed is silent):

    GET    /api/2.1/unity-catalog/memory-stores?catalog_name=&schema_name=   readable stores
    GET    /api/2.1/unity-catalog/memory-stores/{full_name}
    GET    /api/2.1/unity-catalog/memory-stores/{full_name}/entries?scope=   metadata, paged
    GET    /api/2.1/unity-catalog/memory-stores/{full_name}/entries:get?scope=&path=
    POST   /api/2.1/unity-catalog/memory-stores/{full_name}/entries:search
    POST   /api/2.1/unity-catalog/memory-stores/{full_name}/entries?scope=
    PATCH  /api/2.1/unity-catalog/memory-stores/{full_name}/entries
    DELETE /api/2.1/unity-catalog/memory-stores/{full_name}/entries?scope=&path=
    /api/2.1/unity-catalog/conversations[/{id}[/items[/{item_id}]]]  (conversations.py)

Bearer tokens are validated against the devstack IdP exactly like the CoreAPI emulator's
(devstack.coreapi.auth.TokenValidator) with the audience of devstack/legacy/fixtures.toml.
Storage is `{home}/legacy.sqlite3`, seeded once from devstack/legacy/fixtures.toml.

    start(host="127.0.0.1", port=0, *, home=, idp_url=, ca_file=, faults=)
        -> RunningServer        # keywords optional (devstack.emulators.Options)
    python -m devstack.legacy [--host 127.0.0.1] [--port 8002] [--home DIR] [--idp-url URL]
"""

from devstack.legacy.app import LegacyEmulator, build, emulator, start

__all__ = ["LegacyEmulator", "build", "emulator", "start"]
