"""Workspace memory-api emulator (seed 001; http://127.0.0.1:8003), dev and test only.

REST under /api/v1 and the /admin routes at the root, as routes.py lists them; the contract
it enforces is served at /api/v1/openapi.yaml. docs/memory-api.md has the contract, the
errors and every choice made where the seed is silent (M1...).

Callers present a ServiceAccount token signed by the devstack's key (identity.py stands in
for Kubernetes and TokenReview); `manage.py devstack_token --memory-api` prints one.
Storage is `{home}/memory-api.sqlite3`, seeded once from devstack/memory_api/fixtures.toml.

    start(host="127.0.0.1", port=0, *, home=, edition="enterprise", internal_auth=True,
          workspace_resolved=True) -> RunningServer
    python -m devstack.memory_api [--host 127.0.0.1] [--port 8003] [--home DIR]
                                  [--edition core|enterprise]
"""

from devstack.memory_api.app import MemoryApiEmulator, build, emulator, start

__all__ = ["MemoryApiEmulator", "build", "emulator", "start"]
