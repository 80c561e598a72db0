"""MemoryOS emulator (seed 002; http://127.0.0.1:8004), dev and test only.

Serves the hosted memory service agents call once per turn (docs/memoryos.md has the
contract and every choice made where the seed is silent, S1, S2, …):

    POST /v1/memories/retrieve                                   ranked memories + context
    POST /v1/memories/clarifications/{clarification_id}/answer   A, B, both or neither
    POST /v1/memories/retrieval-feedback                         used_successfully, user_corrected, …
    GET  /devstack/retrieval-feedback[?retrieval_id=&external_user_id=]   devstack only (S16)

Callers send `Authorization: ApiKey mem_live_…`, one key per tenant (fixtures.toml).
Storage is `{home}/memoryos.sqlite3`, seeded once from devstack/memoryos/fixtures.toml.

    start(host="127.0.0.1", port=0, *, home=, faults=) -> RunningServer
    python -m devstack.memoryos [--host 127.0.0.1] [--port 8004] [--home DIR]
"""

from devstack.memoryos.app import MemoryOsEmulator, build, emulator, start

__all__ = ["MemoryOsEmulator", "build", "emulator", "start"]
