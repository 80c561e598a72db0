"""The memory-api's route table (seed 001's three tables) and the OpenAPI document built
from it (GET /api/v1/openapi.yaml).

Each route says where it takes its workspace and its user, so the checks of app.py are
applied from this table and the contract the emulator publishes is the one it enforces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import yaml

BASE = "/api/v1"

# Where a route takes its workspace: a query parameter or the body's workspace_id, required
# or (omitted: this memory-api's own workspace) optional; "none": no workspace at all.
WorkspaceIn = Literal["query", "query?", "body", "body?", "none"]
# Where it names a user: the query's virtual_user_id, the write body's
# scope.virtual_user_id, retrieve's user_id and structured_lookups[].user_id, or a body's
# virtual_user_id (consent events).
UserIn = Literal["query", "scope", "retrieve", "body", "none"]


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # as the seed writes it; under BASE unless it starts with /admin
    endpoint: str
    purpose: str
    workspace: WorkspaceIn
    user: UserIn = "none"
    enterprise: bool = False
    status: int = 200
    query: tuple[str, ...] = ()  # further query parameters, for the contract

    @property
    def url(self) -> str:
        full = self.path if self.path.startswith("/admin") else BASE + self.path
        return full.replace("{", "<").replace("}", ">")


_PAGE = ("limit", "cursor")
# A route addressing a memory by id takes its workspace as a query parameter, PATCH too
# (M23).
ROUTES: tuple[Route, ...] = (
    # Memory operations
    Route("POST", "/memories", "save", "Create or update a memory", "body", "scope", status=201),
    Route(
        "GET",
        "/memories",
        "list_memories",
        "List memories in scope",
        "query",
        "query",
        query=("agent", "include_shared", *_PAGE),
    ),
    Route(
        "GET",
        "/memories/search",
        "search",
        "Search memories",
        "query",
        "query",
        query=("agent", "q", "limit"),
    ),
    Route(
        "POST", "/memories/retrieve", "retrieve", "Multi-tier hybrid retrieval", "body", "retrieve"
    ),
    Route(
        "POST",
        "/memories/retrieve/semantic",
        "semantic",
        "Workspace retrieval with an optional CEL deny filter",
        "body",
    ),
    Route("GET", "/memories/{id}", "read", "Read one complete memory", "query", "query"),
    Route(
        "PATCH",
        "/memories/{id}",
        "supersede",
        "Supersede the memory's active observation with new content",
        "query",
        "query",
    ),
    Route("DELETE", "/memories/{id}", "delete", "Soft-delete a memory", "query", "query"),
    Route(
        "DELETE",
        "/memories",
        "erase",
        "Delete all memories for a subject (DSAR)",
        "query",
        "query",
        query=("agent",),
    ),
    Route(
        "DELETE",
        "/memories/batch",
        "erase_batch",
        "Delete up to limit memories for a subject (paginated DSAR)",
        "query",
        "query",
        query=("agent", "limit"),
    ),
    Route(
        "GET",
        "/memories/export",
        "export",
        "Export memories for a subject",
        "query",
        "query",
        query=("agent",),
    ),
    Route(
        "GET",
        "/memories/aggregate",
        "aggregate",
        "Workspace memory aggregates (Enterprise)",
        "query",
        enterprise=True,
    ),
    Route(
        "GET",
        "/memories/conflicts",
        "conflicts",
        "List entities with more than one active observation",
        "query",
        "query",
        query=("agent",),
    ),
    Route(
        "GET",
        "/memories/{id}/lineage",
        "lineage",
        "Read consolidation lineage (Enterprise)",
        "query",
        "query",
        enterprise=True,
    ),
    Route("POST", "/relations", "relate", "Add a relation between memories", "body", status=201),
    Route(
        "GET",
        "/memory/schema",
        "schema",
        "Discover configured memory types and relation definitions",
        "none",
    ),
    Route(
        "GET",
        "/memory/tool-guidance",
        "tool_guidance",
        "The LLM memory tools' descriptions and extra input-schema properties, rendered "
        "from the effective MemoryPolicy",
        "none",
    ),
    # Institutional and agent-scoped operations
    Route(
        "POST",
        "/institutional/memories",
        "institutional_save",
        "Create curated institutional memory",
        "body",
        enterprise=True,
        status=201,
    ),
    Route(
        "GET",
        "/institutional/memories",
        "institutional_list",
        "List institutional memory",
        "query",
        enterprise=True,
        query=_PAGE,
    ),
    Route(
        "DELETE",
        "/institutional/memories/{id}",
        "institutional_delete",
        "Delete institutional memory",
        "query",
        enterprise=True,
    ),
    Route(
        "POST",
        "/institutional/ingest",
        "ingest",
        "Ingest one document",
        "body?",
        enterprise=True,
        status=202,
    ),
    Route(
        "POST",
        "/institutional/ingest/batch",
        "ingest_batch",
        "Ingest documents or structured items and edges",
        "body?",
        enterprise=True,
        status=202,
    ),
    Route(
        "GET",
        "/institutional/documents",
        "documents",
        "List ingested documents and counts",
        "query?",
        enterprise=True,
    ),
    Route(
        "GET",
        "/institutional/documents/{id}/tree",
        "document_tree",
        "Get a document with sections and chunks",
        "query?",
        enterprise=True,
    ),
    Route(
        "DELETE",
        "/institutional/sources/{source}",
        "forget_source",
        "Forget one populator source",
        "query?",
        enterprise=True,
    ),
    Route(
        "POST",
        "/agent-memories",
        "agent_save",
        "Create agent-scoped curated memory",
        "body",
        status=201,
    ),
    Route(
        "GET",
        "/agent-memories",
        "agent_list",
        "List agent-scoped memory",
        "query",
        query=("agent", *_PAGE),
    ),
    Route("DELETE", "/agent-memories/{id}", "agent_delete", "Delete agent-scoped memory", "query"),
    # Operations and administration
    Route(
        "POST",
        "/admin/embedding-dimension-change",
        "dimension_change",
        "Record one-shot consent for a dimension change",
        "none",
    ),
    Route(
        "GET",
        "/admin/embedding-status",
        "embedding_status",
        "Read current/configured embedding and backlog state",
        "none",
    ),
    Route("POST", "/admin/reembed", "reembed", "Embed one or more pending batches", "none"),
    Route(
        "POST",
        "/admin/reembed/calibrate",
        "calibrate",
        "Measure a re-embed concurrency to set on the Workspace",
        "none",
    ),
    Route(
        "GET",
        "/memories/projection",
        "projection",
        "Read the Memory Galaxy projection (Enterprise)",
        "query",
        "query",
        enterprise=True,
    ),
    Route(
        "POST",
        "/memories/consent-events",
        "consent",
        "Apply a user's consent revocation per the MemoryPolicy consentRevocation.action "
        "(Enterprise; called by privacy-api)",
        "body",
        "body",
        enterprise=True,
    ),
    Route(
        "GET",
        "/audit/memories",
        "audit",
        "Query the Enterprise memory audit log",
        "query",
        "query",
        enterprise=True,
        query=_PAGE,
    ),
)

_ERROR = {"$ref": "#/components/schemas/Error"}


def _parameter(name: str, required: bool = False, where: str = "query") -> dict[str, Any]:
    return {"name": name, "in": where, "required": required, "schema": {"type": "string"}}


def _operation(route: Route) -> dict[str, Any]:
    parameters = [
        _parameter(name, where="path") for name in ("id", "source") if f"{{{name}}}" in route.path
    ]
    if route.workspace in ("query", "query?"):
        parameters.append(_parameter("workspace", required=route.workspace == "query"))
    if route.user == "query":
        parameters.append(_parameter("virtual_user_id"))
    parameters += [_parameter(name) for name in route.query]
    responses: dict[str, Any] = {
        str(route.status): {"description": "Success.", "content": {"application/json": {}}},
        "400": {"description": "Invalid request, or user_id instead of virtual_user_id."},
        "401": {"description": "No valid ServiceAccount token (TokenReview)."},
        "403": {
            "description": "Not allow-listed, another workspace, a user not proven"
            + (", or enterprise_required on Core" if route.enterprise else ""),
            "content": {"application/json": {"schema": _ERROR}},
        },
    }
    if route.workspace != "none":
        responses["500"] = {"description": "A workspace name where rows are matched by UID."}
    operation: dict[str, Any] = {
        "operationId": route.endpoint,
        "summary": route.purpose,
        "parameters": parameters,
        "responses": responses,
    }
    if route.method in ("POST", "PATCH"):
        operation["requestBody"] = {"content": {"application/json": {"schema": {"type": "object"}}}}
    if route.enterprise:
        operation["x-edition"] = "enterprise"
    return operation


def openapi(server_url: str) -> str:
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        path = route.path if route.path.startswith("/admin") else BASE + route.path
        paths.setdefault(path, {})[route.method.lower()] = _operation(route)
    document = {
        "openapi": "3.1.0",
        "info": {"title": "memory-api (devstack emulator of seed 001)", "version": "1"},
        "servers": [{"url": server_url}],
        "components": {
            "securitySchemes": {
                "serviceAccount": {"type": "http", "scheme": "bearer"},
                "subjectProof": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-Omnia-Subject-Proof",
                },
            },
            "schemas": {
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {"error": {"type": "string"}},
                }
            },
        },
        "security": [{"serviceAccount": []}],
        "paths": paths,
    }
    return yaml.safe_dump(document, sort_keys=False)
