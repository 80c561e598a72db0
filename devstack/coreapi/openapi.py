"""OpenAPI 3.1 description of what the emulator serves (GET /openapi.json, no auth).

Conditional writes (ETag, If-Match, 412) are not in the real CoreAPI contract: each such
element carries `x-memory-portal-extension: true` and points to docs/conditional-writes.md.
"""

from __future__ import annotations

from typing import Any

_PROBLEM = {"$ref": "#/components/schemas/ProblemDetails"}
_VALIDATION = {"$ref": "#/components/schemas/ValidationProblemDetails"}
_NULLABLE_STRING = {"type": ["string", "null"]}
_NULLABLE_DATETIME = {"type": ["string", "null"], "format": "date-time"}


def _problem(description: str, schema: dict[str, Any] = _PROBLEM) -> dict[str, Any]:
    return {"description": description, "content": {"application/problem+json": {"schema": schema}}}


def _json(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_COMMON_ERRORS: dict[str, Any] = {
    "401": _problem("Missing or invalid bearer token (WWW-Authenticate: Bearer error=...)."),
    "403": {
        "description": "Wrong instance id (text/plain `Access denied. Invalid instance ID.`), "
        "missing Data.Read scope, refused identity substitution, or no access to the agent.",
        "content": {
            "text/plain": {"schema": {"type": "string"}},
            "application/problem+json": {"schema": _PROBLEM},
        },
    },
    "429": _json(
        "Throttled (fault injection); see Retry-After.", {"$ref": "#/components/schemas/Quota"}
    ),
    "500": _problem("Internal error (fault injection)."),
    "503": _problem("Identity provider unreachable, storage busy, or fault injection."),
}


def _errors(*extra: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {**_COMMON_ERRORS, **dict(extra)}


_SCOPES = ["user", "agent", "combined"]
_SCOPE_QUERY = {
    "name": "scope",
    "in": "query",
    "schema": {"type": "string", "enum": _SCOPES, "default": "combined"},
}
_AGENT_QUERY = {
    "name": "agentObjectId",
    "in": "query",
    "required": False,
    "description": "Required for scope=agent; optional agent part of scope=combined.",
    "schema": {"type": "string"},
}
_INSTANCE = {"name": "instanceId", "in": "path", "required": True, "schema": {"type": "string"}}
_IDENTITY_HEADER = {
    "name": "X-USER-IDENTITY",
    "in": "header",
    "required": False,
    "description": "UnifiedUserIdentity JSON; honoured only for app-only tokens of the "
    "substitution principal, ignored for delegated tokens.",
    "schema": {"type": "string"},
}
_BAD_REQUEST = ("400", _problem("Validation error.", _VALIDATION))
_AGENT_UNKNOWN = ("404", _problem("The agent does not exist."))

# --- Memory Portal extension: conditional writes (docs/conditional-writes.md) --------------
EXTENSION = "x-memory-portal-extension"
_SEE = "Memory Portal extension, not in the CoreAPI contract (docs/conditional-writes.md)."
_ETAG_HEADER = {
    "description": "The stored document's version: \"<sha256 hex of content_markdown as "
    'UTF-8>", a strong entity tag. Its presence advertises If-Match support on import and '
    f"clear. {_SEE}",
    "schema": {"type": "string", "pattern": '^"[0-9a-f]{64}"$'},
    EXTENSION: True,
}
_IF_MATCH = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "description": "Write only if the stored document is still at one of these versions: "
    "* (any) or a comma-separated list of quoted ETags from earlier answers. None matching: "
    f"412 and nothing changes. Absent: unconditional, as in the contract. {_SEE}",
    "schema": {"type": "string"},
    EXTENSION: True,
}
_PRECONDITION_FAILED = (
    "412",
    {
        **_problem(
            "If-Match names none of the stored document's current versions; nothing was "
            f"written. Re-read, reapply the change, retry. {_SEE}"
        ),
        EXTENSION: True,
    },
)


def _memory_ok(etag: str) -> dict[str, Any]:
    """The 200 MemoryResponse, with the ETag header described by `etag`."""
    return {
        "200": {
            **_json("The document.", {"$ref": "#/components/schemas/MemoryResponse"}),
            "headers": {
                "ETag": {**_ETAG_HEADER, "description": f"{etag} {_ETAG_HEADER['description']}"}
            },
        }
    }


def _write_body(schema: str) -> dict[str, Any]:
    return {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
    }


def _write_operation(summary: str, schema: str, conditional: bool) -> dict[str, Any]:
    """A write; `conditional` ones honour If-Match (and may answer 412)."""
    extra = [_PRECONDITION_FAILED] if conditional else []
    return {
        "post": {
            "summary": summary,
            "parameters": [_INSTANCE, _IDENTITY_HEADER, *([_IF_MATCH] if conditional else [])],
            "requestBody": _write_body(schema),
            "responses": {
                **_memory_ok("The new version of the document written."),
                **_errors(
                    _BAD_REQUEST,
                    _AGENT_UNKNOWN,
                    *extra,
                    ("413", _problem("Body larger than 2 MiB.")),
                    ("415", _problem("Body is not UTF-8 application/json.")),
                ),
            },
        }
    }


def _object(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": required, "properties": properties}


_STRING = {"type": "string"}
_MARKDOWN = {"type": "string", "pattern": r"\S"}
# Where every write (append, clear, import) goes: the user's document or one agent's.
_WRITE_TARGET = {
    "scope": {"type": "string", "enum": ["user", "agent"]},
    "agent_object_id": _NULLABLE_STRING,
}

_SCHEMAS: dict[str, Any] = {
    "MemoryResponse": _object(
        ["scope", "upn", "content_markdown"],
        {
            "scope": {"type": "string", "enum": _SCOPES},
            "upn": _STRING,
            "user_name": _NULLABLE_STRING,
            "name": _NULLABLE_STRING,
            "agent_object_id": _NULLABLE_STRING,
            "agent_name": _NULLABLE_STRING,
            "content_markdown": _STRING,
            "created_on": _NULLABLE_DATETIME,
            "updated_on": _NULLABLE_DATETIME,
        },
    ),
    "AppendMemoryRequest": _object(
        ["scope", "content_markdown"],
        {
            **_WRITE_TARGET,
            "agent_name": _NULLABLE_STRING,
            "content_markdown": _MARKDOWN,
            "reason": _NULLABLE_STRING,
            "operation_id": _NULLABLE_STRING,
            "session_id": _NULLABLE_STRING,
        },
    ),
    "ClearMemoryRequest": _object(
        ["scope", "confirm"], {**_WRITE_TARGET, "confirm": {"const": True}}
    ),
    "ImportMemoryRequest": _object(
        ["scope", "content_markdown"],
        {
            **_WRITE_TARGET,
            "content_markdown": _MARKDOWN,
            "mode": {"type": "string", "enum": ["append", "replace"], "default": "append"},
        },
    ),
    "ProblemDetails": _object(
        ["type", "title", "status", "traceId"],
        {
            "type": _STRING,
            "title": _STRING,
            "status": {"type": "integer"},
            "detail": _STRING,
            "traceId": _STRING,
        },
    ),
    "ValidationProblemDetails": {
        "allOf": [
            _PROBLEM,
            _object(
                ["errors"],
                {
                    "errors": {
                        "type": "object",
                        "additionalProperties": {"type": "array", "items": _STRING},
                    }
                },
            ),
        ]
    },
    "Quota": _object(
        ["quota_name", "quota_context", "quota_exceeded", "time_until_retry_seconds"],
        {
            "quota_name": _STRING,
            "quota_context": _STRING,
            "quota_exceeded": {"type": "boolean"},
            "time_until_retry_seconds": {"type": "integer"},
        },
    ),
    "AgentResult": _object(
        ["resource", "roles", "actions", "properties"],
        {
            "resource": _object(
                ["type", "name", "object_id", "display_name", "description"],
                {
                    "type": {"const": "generic-agent"},
                    "name": {"type": "string", "pattern": "^[a-zA-Z]([a-zA-Z0-9_-]?)+$"},
                    "object_id": _STRING,
                    "display_name": _STRING,
                    "description": _STRING,
                },
            ),
            "roles": {
                "type": "array",
                "items": {"type": "string", "enum": ["Owner", "Contributor", "Reader"]},
            },
            "actions": {"type": "array", "items": _STRING},
            "properties": {"type": "object", "properties": {"enabled": {"type": "boolean"}}},
        },
    ),
}


def _paths() -> dict[str, Any]:
    memory = "/instances/{instanceId}/memory"
    read_errors = _errors(_BAD_REQUEST, _AGENT_UNKNOWN)
    return {
        memory: {
            "get": {
                "summary": "Read memory (empty memory is 200 with an empty string)",
                "parameters": [_INSTANCE, _SCOPE_QUERY, _AGENT_QUERY, _IDENTITY_HEADER],
                "responses": {
                    **_memory_ok("Sent for scope user and agent only, never for combined."),
                    **read_errors,
                },
            }
        },
        f"{memory}/append": _write_operation(
            "Append markdown under a '## Added {timestamp}' heading",
            "AppendMemoryRequest",
            conditional=False,
        ),
        f"{memory}/clear": _write_operation(
            "Clear user or agent memory (confirm must be true)",
            "ClearMemoryRequest",
            conditional=True,
        ),
        f"{memory}/export": {
            "get": {
                "summary": "Export raw markdown",
                "parameters": [
                    _INSTANCE,
                    {**_SCOPE_QUERY, "required": True, "schema": {"enum": _SCOPES}},
                    _AGENT_QUERY,
                    _IDENTITY_HEADER,
                ],
                "responses": {
                    "200": {
                        "description": "The markdown body, not JSON.",
                        "content": {"text/markdown": {"schema": {"type": "string"}}},
                    },
                    **read_errors,
                },
            }
        },
        f"{memory}/import": _write_operation(
            "Import markdown (append under '## Imported {timestamp}', or replace)",
            "ImportMemoryRequest",
            conditional=True,
        ),
        "/instances/{instanceId}/completions/agents": {
            "get": {
                "summary": "Agents the caller may read, sorted by name",
                "parameters": [_INSTANCE, _IDENTITY_HEADER],
                "responses": {
                    "200": _json(
                        "Agents.",
                        {"type": "array", "items": {"$ref": "#/components/schemas/AgentResult"}},
                    ),
                    **_COMMON_ERRORS,
                },
            }
        },
        "/openapi.json": {
            "get": {
                "summary": "This document",
                "security": [],
                "responses": {"200": _json("OpenAPI 3.1", {"type": "object"})},
            }
        },
    }


def openapi_document(server_url: str) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "FoundationaLLM CoreAPI memory (devstack emulator)",
            "version": "1.0.0",
            "description": "Seed 000 personalized memory contract plus the agents listing, "
            "and one Memory Portal extension, conditional writes (ETag, If-Match, 412), marked "
            f"{EXTENSION}: true (docs/conditional-writes.md).",
        },
        "servers": [{"url": server_url}],
        "security": [{"bearer": []}],
        "paths": _paths(),
        "components": {
            "schemas": _SCHEMAS,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "JWT (RS256, aud api://FoundationaLLM-Core, scp Data.Read)",
                }
            },
        },
    }
