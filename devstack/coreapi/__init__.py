"""FoundationaLLM CoreAPI memory emulator (http://127.0.0.1:8001), dev and test only.

Serves the CoreAPI memory contract plus the agents listing (docs/architecture.md, The
CoreAPI memory contract; What the real CoreAPI does beyond the contract):

    GET  /instances/{instanceId}/memory?scope=&agentObjectId=   scope defaults to combined
    POST /instances/{instanceId}/memory/append                  AppendMemoryRequest
    POST /instances/{instanceId}/memory/clear                   ClearMemoryRequest (confirm: true)
    GET  /instances/{instanceId}/memory/export?scope=&agentObjectId=   text/markdown; scope required
    POST /instances/{instanceId}/memory/import                  ImportMemoryRequest (mode append|replace)
    GET  /instances/{instanceId}/completions/agents             agents the caller may read
    GET  /openapi.json                                          OpenAPI 3.1, no auth

One Memory Portal extension, not in the CoreAPI contract: conditional writes
(docs/conditional-writes.md; `conditional.py`). GET /memory for scope user or agent, and
every successful append, clear and import, carries `ETag: "<sha256 hex of content_markdown>"`;
clear and import honour `If-Match` (`*` or quoted ETags; none matching: 412 ProblemDetails,
nothing written, checked under the same write lock as the write; malformed: 400). Without
If-Match every endpoint behaves as the contract says.

Storage is `{home}/coreapi.sqlite3` (home: `devstack.config.state_dir()` unless given);
fixtures.toml `[[memory]]` is appended once, when the database is first created.

Starting it:

    start(host="127.0.0.1", port=0, *, home=, idp_url=, ca_file=, faults=, fixtures_=)
        -> RunningServer        # tests; keywords optional (devstack.emulators.Options, plus
                                # fixtures_); emulator(server) gives the app
    python -m devstack.coreapi [--host 127.0.0.1] [--port 8001] [--home DIR]
        [--idp-url https://127.0.0.1:8443] [--ca-file DIR/ca.pem] [--fault-... flags]

Fault injection (constructor `Faults(...)`, environment, or flags; flags beat environment):

    field                env DEVSTACK_COREAPI_FAULT_*   flag                    meaning
    latency_ms           LATENCY_MS                     --fault-latency-ms      delay before answering
    error_rate           ERROR_RATE                     --fault-error-rate      share answered 500/503
    error_status         ERROR_STATUS                   --fault-error-status    500 (default) or 503
    throttle_rate        THROTTLE_RATE                  --fault-throttle-rate   share answered 429
    retry_after_seconds  RETRY_AFTER                    --fault-retry-after     Retry-After of the 429 (5)
    drop_rate            DROP_RATE                      --fault-drop-rate       share closed without reply
    path_regex           PATH_REGEX                     --fault-path-regex      re.search on "path?query"
    rng                  SEED                           --fault-seed            repeatable random draws

Rates are shares in [0, 1] (their sum at most 1); one draw per request picks drop, 429 or
5xx. `app.faults` is a mutable dataclass, so tests switch faults on a running server.
Faults apply before routing and authentication, like a gateway in front of CoreAPI.

Decisions where the contract is open:

- Order of checks: routing (404/405), then the bearer token (401; 503 if the IdP's keys
  cannot be fetched), then the instance id in the path (403 text/plain
  `Access denied. Invalid instance ID.`, compared case-insensitively), then the
  effective user, then the request itself. So an unauthenticated caller never learns
  whether an instance id is right.
- Delegated tokens without `Data.Read` in `scp`: 403 ProblemDetails with
  `WWW-Authenticate: Bearer error="insufficient_scope"`.
- X-USER-IDENTITY: only app-only tokens (no `scp`) whose `oid` is the substitution
  principal, with a header `upn` matching the pattern by `re.fullmatch`. Other app
  principals, a missing header or a non-matching upn: 403. Malformed header (not UTF-8
  JSON, not an object, missing/empty `upn`, wrong types, over 16 KiB or a field over
  1024 characters): 400 ValidationProblemDetails. Ignored for delegated tokens.
- Agents: an agentObjectId that is not `/instances/{id}/providers/FoundationaLLM.Agent/
  agents/{name}` for this instance is 400; an unknown agent name is 404; an agent the
  user cannot read is 403. Agent names match case-sensitively. For scope=user the
  agent id is ignored; for combined it is optional.
- Ownership: documents are keyed by the casefolded UPN; responses carry the UPN as the
  token or identity header spelled it.
- Bodies: unknown fields are ignored; wrong JSON types are 400 (no coercion); null equals
  absent for optional fields; `?scope=` equals absent; over 2 MiB is 413; a content type
  other than JSON (or a charset other than UTF-8) is 415; bad UTF-8 or JSON is 400.
- Clear is a write: on a user with no document it creates an empty one.
- combined: created_on/updated_on are the earliest/latest of the parts (null if none);
  the text ends with one newline when not empty.
- Conditional writes: validation, agent access (400/403/404) come before the If-Match
  check (412). A missing document has the ETag of `""`, and `*` always matches (every
  user or agent document reads as something). Weak tags (`W/"..."`) are malformed. Append
  ignores If-Match; export and combined reads carry no ETag; a 412 carries none either.
- Timestamps: `created_on`/`updated_on` in ISO 8601 with `+00:00` (microseconds when
  non-zero); headings use whole seconds with `Z`.
"""

from devstack.coreapi.app import CoreApiEmulator, build, emulator, start
from devstack.coreapi.faults import Faults

__all__ = ["CoreApiEmulator", "Faults", "build", "emulator", "start"]
