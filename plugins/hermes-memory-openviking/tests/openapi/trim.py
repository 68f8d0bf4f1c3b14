"""Cut the OpenViking server's /openapi.json down to the paths this provider uses.

Usage: python trim.py FULL.json openviking-0.5.2.openapi.json

The full document (139 paths) also lists WebDAV methods (MKCOL, MOVE, PROPFIND) that are not
OpenAPI and would fail validation; the trimmed one keeps the used paths verbatim and every
component schema they reference, transitively.
"""

from __future__ import annotations

import json
import sys
from typing import Any

USED = {
    "/health": ["get"],
    "/api/v1/system/status": ["get"],
    "/api/v1/search/find": ["post"],
    "/api/v1/search/search": ["post"],
    "/api/v1/content/read": ["get"],
    "/api/v1/content/abstract": ["get"],
    "/api/v1/content/overview": ["get"],
    "/api/v1/content/write": ["post"],
    "/api/v1/fs/ls": ["get"],
    "/api/v1/fs/tree": ["get"],
    "/api/v1/fs/stat": ["get"],
    "/api/v1/fs": ["delete"],
    "/api/v1/sessions/{session_id}": ["get"],
    "/api/v1/sessions/{session_id}/messages/batch": ["post"],
    "/api/v1/sessions/{session_id}/commit": ["post"],
    "/api/v1/resources": ["post"],
}


def refs(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            out.add(ref.rsplit("/", 1)[-1])
        for value in node.values():
            refs(value, out)
    elif isinstance(node, list):
        for value in node:
            refs(value, out)


def trim(full: dict[str, Any]) -> dict[str, Any]:
    paths = {p: {m: full["paths"][p][m] for m in methods} for p, methods in USED.items()}
    schemas = full["components"]["schemas"]
    wanted: set[str] = set()
    refs(paths, wanted)
    done: set[str] = set()
    while wanted - done:
        name = sorted(wanted - done)[0]
        done.add(name)
        refs(schemas[name], wanted)
    return {
        "openapi": full["openapi"],
        "info": full["info"],
        "paths": paths,
        "components": {"schemas": {name: schemas[name] for name in sorted(done)}},
    }


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        document = json.load(f)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(trim(document), f, indent=1, ensure_ascii=False)
        f.write("\n")
