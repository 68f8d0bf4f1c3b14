"""Cut a service's OpenAPI document down to the operations a provider calls.

A loopback double validates every request against the service's document; building an
openapi-core validator for a full document takes seconds per test (and some servers list
non-OpenAPI methods such as WebDAV's that fail validation), so a provider keeps a trimmed
copy. Its ``tests/.../trim.py`` names the operations and calls :func:`main`::

    USED = {"/v1/search": ["post"], "/v1/items/{id}": ["get", "delete"]}

    if __name__ == "__main__":
        main(USED)  # python trim.py FULL.json TRIMMED.json

:func:`trim_openapi` keeps ``openapi``, ``info`` and the named operations verbatim, plus
every component schema they reference, transitively (sorted by name); nothing inside a
kept object is changed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

SCHEMA_REF = "#/components/schemas/"


def schema_refs(node: Any) -> set[str]:
    """Names of the component schemas ``node`` references (``$ref``), at any depth."""
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(SCHEMA_REF):
            found.add(ref[len(SCHEMA_REF) :])
        for value in node.values():
            found |= schema_refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= schema_refs(value)
    return found


def trim_openapi(full: Mapping[str, Any], used: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """``full`` with only the ``used`` operations (``{path: [method, ...]}``) and the schemas
    they need. A path or method missing from ``full`` raises ``KeyError`` naming it."""
    paths = {path: {m: full["paths"][path][m] for m in methods} for path, methods in used.items()}
    schemas = full.get("components", {}).get("schemas", {})
    keep: set[str] = set()
    todo = schema_refs(paths)
    while todo:
        name = todo.pop()
        if name not in keep:
            keep.add(name)
            todo |= schema_refs(schemas[name]) - keep
    return {
        "openapi": full["openapi"],
        "info": full["info"],
        "paths": paths,
        "components": {"schemas": {name: schemas[name] for name in sorted(keep)}},
    }


def main(used: Mapping[str, Sequence[str]], argv: Sequence[str] | None = None) -> None:
    """``python trim.py FULL.json OUT.json``: write the trimmed document (UTF-8, indent 1)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        raise SystemExit("usage: python trim.py FULL.json OUT.json")
    full = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    text = json.dumps(trim_openapi(full, used), ensure_ascii=False, indent=1)
    Path(args[1]).write_text(text + "\n", encoding="utf-8")


__all__ = ["main", "schema_refs", "trim_openapi"]
