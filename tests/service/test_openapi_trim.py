"""hermes_core.testing.openapi_trim: the used operations and the schemas they need, no more."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core.testing.openapi_trim import main, trim_openapi


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


FULL: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Notes", "version": "1"},
    "paths": {
        "/v1/search": {
            "post": {"requestBody": {"content": {"application/json": {"schema": _ref("Query")}}}},
            "get": {"responses": {}},
        },
        "/v1/admin": {"post": {"requestBody": _ref("Admin")}},
    },
    "components": {
        "schemas": {
            "Query": {"properties": {"filter": _ref("Filter"), "tags": {"items": _ref("Tag")}}},
            "Filter": {"properties": {"next": _ref("Filter")}},  # refers to itself
            "Tag": {"type": "string", "description": "标签"},
            "Admin": {"type": "object"},
        }
    },
}


def test_keeps_the_used_operations_and_their_schemas_transitively() -> None:
    trimmed = trim_openapi(FULL, {"/v1/search": ["post"]})
    assert list(trimmed["paths"]) == ["/v1/search"]
    assert list(trimmed["paths"]["/v1/search"]) == ["post"]
    assert list(trimmed["components"]["schemas"]) == ["Filter", "Query", "Tag"]
    assert trimmed["components"]["schemas"]["Tag"] == FULL["components"]["schemas"]["Tag"]
    assert trim_openapi(trimmed, {"/v1/search": ["post"]}) == trimmed, "trimming is idempotent"


def test_a_missing_operation_is_named() -> None:
    with pytest.raises(KeyError, match="delete"):
        trim_openapi(FULL, {"/v1/search": ["delete"]})


def test_main_writes_utf8(tmp_path: Path) -> None:
    src, out = tmp_path / "full.json", tmp_path / "out.json"
    src.write_text(json.dumps(FULL), encoding="utf-8")
    main({"/v1/search": ["post"]}, [str(src), str(out)])
    text = out.read_text(encoding="utf-8")
    assert "标签" in text and text.endswith("\n")
    assert "Admin" not in text
    with pytest.raises(SystemExit, match="usage"):
        main({}, [str(src)])
