"""Reduce Hindsight's OpenAPI document to the routes the provider calls.

Usage: python trim_openapi.py FULL.json OUT.json

Keeps ``openapi``, ``info`` and the listed paths verbatim, plus every component schema they
reference (transitively); nothing inside a kept object is changed. Building an openapi-core
validator for the full 380 KB document takes seconds per test; the trimmed one is instant.
"""

from __future__ import annotations

import json
import sys
from typing import Any

PATHS = {
    "/v1/default/banks/{bank_id}": ["put"],
    "/v1/default/banks/{bank_id}/memories": ["post"],
    "/v1/default/banks/{bank_id}/memories/recall": ["post"],
    "/v1/default/banks/{bank_id}/reflect": ["post"],
    "/v1/default/banks/{bank_id}/documents/{document_id}": ["delete"],
}


def refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            found.add(ref.rsplit("/", 1)[1])
        for value in node.values():
            found |= refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= refs(value)
    return found


def trim(doc: dict[str, Any]) -> dict[str, Any]:
    paths = {p: {m: doc["paths"][p][m] for m in methods} for p, methods in PATHS.items()}
    schemas = doc["components"]["schemas"]
    keep: set[str] = set()
    todo = refs(paths)
    while todo:
        name = todo.pop()
        if name not in keep:
            keep.add(name)
            todo |= refs(schemas[name]) - keep
    return {
        "openapi": doc["openapi"],
        "info": doc["info"],
        "paths": paths,
        "components": {"schemas": {n: schemas[n] for n in sorted(keep)}},
    }


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as fh:
        full = json.load(fh)
    with open(sys.argv[2], "w", encoding="utf-8") as fh:
        json.dump(trim(full), fh, ensure_ascii=False, indent=1)
        fh.write("\n")
