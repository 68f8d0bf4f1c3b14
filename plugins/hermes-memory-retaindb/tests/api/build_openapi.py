"""Writes retaindb-memory-v1.openapi.json: an OpenAPI 3.1 description of the six RetainDB
Memory API routes the provider calls, derived by hand from the published reference (RetainDB
publishes no OpenAPI document).

Sources (read 2026-12):
* RetainDB API reference, "Memory API" (API v1): https://www.retaindb.com/docs/api/memory
  and "Memory Search": https://www.retaindb.com/docs/api/memory-search (routes, bodies,
  typical responses, Bearer auth);
* the request validators (zod schemas) and response bodies of the open-source RetainDB server,
  https://github.com/Ubsefor/RetainDB, packages/server/src/api/memory.ts (Apache-2.0), for the
  exact field names, types, enums and limits.

Only fields the provider may send are described in full; responses list the fields the
provider reads as required and allow the rest (``additionalProperties`` stays open).
Run ``python build_openapi.py`` to regenerate after editing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MEMORY_TYPES = [
    "factual",
    "episodic",
    "semantic",
    "procedural",
    "preference",
    "event",
    "relationship",
    "opinion",
    "goal",
    "instruction",
    "decision",
    "constraint",
    "solution",
    "project_state",
    "correction",
    "workflow",
]
WRITE_MODE = {"type": "string", "enum": ["async", "sync"]}
STR = {"type": "string"}
NULLABLE_STR = {"type": ["string", "null"]}


def obj(props: dict[str, Any], required: list[str], closed: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    if closed:
        out["additionalProperties"] = False
    return out


def body(ref: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": {"$ref": ref}}}}


def ok(ref: str, status: str = "200", extra: tuple[str, ...] = ()) -> dict[str, Any]:
    out = {
        status: {"description": "OK", "content": {"application/json": {"schema": {"$ref": ref}}}}
    }
    for code in extra:
        out[code] = {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": ref}}},
        }
    for code, what in (
        ("400", "Validation error"),
        ("401", "Unauthorized"),
        ("404", "Not found"),
        ("429", "Rate limited"),
        ("500", "Server error"),
    ):
        out[code] = {
            "description": what,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
    return out


def path_param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": STR}


IDEMPOTENCY = {"name": "Idempotency-Key", "in": "header", "required": False, "schema": STR}

schemas: dict[str, Any] = {
    "WriteMemoryRequest": obj(
        {
            "project": STR,
            "content": {"type": "string", "minLength": 1, "maxLength": 10000},
            "memory_type": {"type": "string", "enum": MEMORY_TYPES},
            "auto_detect": {"type": "boolean"},
            "user_id": STR,
            "session_id": STR,
            "agent_id": STR,
            "task_id": {"type": "string", "minLength": 1, "maxLength": 128},
            "importance": {"type": "number", "minimum": 0, "maximum": 1},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "metadata": {"type": "object"},
            "entity_mentions": {"type": "array", "items": STR},
            "namespace": STR,
            "tags": {"type": "array", "items": STR},
            "write_mode": WRITE_MODE,
        },
        ["content"],
    ),
    "WriteMemoryResponse": obj(
        {
            "success": {"type": "boolean"},
            "mode": WRITE_MODE,
            "trace_id": STR,
            "memory_id": STR,
            "job_id": STR,
        },
        ["success"],
        closed=False,
    ),
    "SearchRequest": obj(
        {
            "query": {"type": "string", "minLength": 1, "maxLength": 5000},
            "project": STR,
            "user_id": STR,
            "session_id": STR,
            "agent_id": STR,
            "top_k": {"type": "integer", "minimum": 1, "maximum": 50},
            "memory_types": {"type": "array", "items": {"type": "string", "enum": MEMORY_TYPES}},
            "include_inactive": {"type": "boolean"},
            "include_chunks": {"type": "boolean"},
            "include_relations": {"type": "boolean"},
            "namespace": STR,
            "tags": {"type": "array", "items": STR},
            "profile": {"type": "string", "enum": ["fast", "balanced", "quality"]},
            "include_pending": {"type": "boolean"},
        },
        ["query"],
    ),
    "SearchMemory": obj(
        {
            "id": STR,
            "content": STR,
            "type": STR,
            "user_id": NULLABLE_STR,
            "session_id": NULLABLE_STR,
            "scope": STR,
        },
        ["id", "content"],
        closed=False,
    ),
    "SearchResult": obj(
        {"memory": {"$ref": "#/components/schemas/SearchMemory"}, "similarity": {"type": "number"}},
        ["memory"],
        closed=False,
    ),
    "SearchResponse": obj(
        {
            "results": {"type": "array", "items": {"$ref": "#/components/schemas/SearchResult"}},
            "count": {"type": "integer"},
            "trace_id": STR,
        },
        ["results"],
        closed=False,
    ),
    "IngestMessage": obj(
        {"role": STR, "content": STR, "timestamp": {"type": "string", "format": "date-time"}},
        ["role", "content", "timestamp"],
    ),
    "IngestRequest": obj(
        {
            "project": STR,
            "session_id": STR,
            "user_id": STR,
            "agent_id": STR,
            "messages": {"type": "array", "items": {"$ref": "#/components/schemas/IngestMessage"}},
            "namespace": STR,
            "tags": {"type": "array", "items": STR},
            "write_mode": WRITE_MODE,
        },
        ["session_id", "messages"],
    ),
    "IngestResponse": obj(
        {"success": {"type": "boolean"}, "mode": WRITE_MODE, "session_id": STR},
        ["success"],
        closed=False,
    ),
    "ProfileMemory": obj(
        {"id": STR, "content": STR, "type": STR, "user_id": NULLABLE_STR},
        ["content"],
        closed=False,
    ),
    "ProfileResponse": obj(
        {
            "user_id": STR,
            "memories": {"type": "array", "items": {"$ref": "#/components/schemas/ProfileMemory"}},
        },
        ["memories"],
        closed=False,
    ),
    "GetMemoryResponse": obj(
        {
            "success": {"type": "boolean"},
            "memory_id": STR,
            "memory": obj(
                {
                    "id": STR,
                    "content": STR,
                    "type": STR,
                    "user_id": NULLABLE_STR,
                    "project_id": STR,
                },
                ["id", "content"],
                closed=False,
            ),
        },
        ["memory"],
        closed=False,
    ),
    "DeleteMemoryResponse": obj(
        {"success": {"type": "boolean"}, "message": STR, "memory_id": STR},
        ["success"],
        closed=False,
    ),
    "Error": {"type": "object"},
}

S = "#/components/schemas/"
document = {
    "openapi": "3.1.0",
    "info": {
        "title": "RetainDB Memory API (subset used by hermes-memory-retaindb)",
        "version": "v1",
        "description": "Derived by hand from https://www.retaindb.com/docs/api/memory and the "
        "zod validators of https://github.com/Ubsefor/RetainDB "
        "(packages/server/src/api/memory.ts, Apache-2.0); see build_openapi.py.",
    },
    "servers": [{"url": "https://api.retaindb.com"}],
    "security": [{"bearer": []}],
    "paths": {
        "/v1/memory": {
            "post": {
                "parameters": [IDEMPOTENCY],
                "requestBody": body(S + "WriteMemoryRequest"),
                "responses": ok(S + "WriteMemoryResponse", "201", ("200", "202")),
            }
        },
        "/v1/memory/search": {
            "post": {
                "requestBody": body(S + "SearchRequest"),
                "responses": ok(S + "SearchResponse"),
            }
        },
        "/v1/memory/ingest/session": {
            "post": {
                "parameters": [IDEMPOTENCY],
                "requestBody": body(S + "IngestRequest"),
                "responses": ok(S + "IngestResponse", "200", ("202",)),
            }
        },
        "/v1/memory/profile/{userId}": {
            "get": {
                "parameters": [
                    path_param("userId"),
                    {"name": "project", "in": "query", "required": False, "schema": STR},
                    {"name": "memory_types", "in": "query", "required": False, "schema": STR},
                    {
                        "name": "include_pending",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string", "enum": ["true", "false"]},
                    },
                ],
                "responses": ok(S + "ProfileResponse"),
            }
        },
        "/v1/memory/{memoryId}": {
            "get": {
                "parameters": [path_param("memoryId")],
                "responses": ok(S + "GetMemoryResponse"),
            },
            "delete": {
                "parameters": [path_param("memoryId")],
                "responses": ok(S + "DeleteMemoryResponse"),
            },
        },
    },
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": schemas,
    },
}

if __name__ == "__main__":
    out = Path(__file__).with_name("retaindb-memory-v1.openapi.json")
    out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(out)
