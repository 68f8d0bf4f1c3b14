"""One tool-result shape (``hermes_core.tool_results``): every failure of every built-in
layer tool says ``"success": false`` with an ``error``, so the MCP server reports it to its
client as an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.host import MemoryHost
from hermes_core.testing.contract import check_tool_failures, failing_arguments
from hermes_core.tool_results import (
    check_result_shape,
    error_payload,
    reports_failure,
    tool_error,
    tool_ok,
)
from hermes_core.types import ToolContext, ToolSpec


def test_ok_and_error_shapes_keep_chinese() -> None:
    assert json.loads(tool_ok(result="已保存")) == {"success": True, "result": "已保存"}
    text = tool_error("找不到记忆 42", id="42")
    assert "找不到记忆" in text  # not \\u-escaped
    assert json.loads(text) == {"success": False, "error": "找不到记忆 42", "id": "42"}
    assert reports_failure(text) and not reports_failure(tool_ok())
    assert error_payload("x") == {"success": False, "error": "x"}


@pytest.mark.parametrize(
    "bad",
    [
        '{"error": "boom"}',  # what honcho and supermemory used to return
        '{"success": true, "error": "boom"}',
        '{"success": false}',
        '{"success": false, "error": 3}',
        "[1, 2]",
        "not json",
    ],
)
def test_the_shape_check_refuses_what_mcp_would_misread(bad: str) -> None:
    with pytest.raises(AssertionError):
        check_result_shape(bad, tool="t")


def test_the_failure_check_catches_a_tool_that_accepts_anything() -> None:
    lenient = ToolSpec(
        "lenient",
        "Answers success to anything.",
        {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        lambda args, ctx: tool_ok(),
    )
    ctx = ToolContext(session=None)  # type: ignore[arg-type]
    assert failing_arguments(lenient)
    with pytest.raises(AssertionError, match="did not fail"):
        check_tool_failures([lenient], ctx)


def test_every_layer_tool_fails_in_the_one_shape(hermes_home: Path) -> None:
    with MemoryHost.open(hermes_home, load_entrypoints=False) as host:
        session = host.session(source="test", user_id="王芳")
        specs = session.tool_specs()
        assert {"memory", "session_search", "skill_view"} <= {s.name for s in specs}
        checked = check_tool_failures(specs, ToolContext(session=session.info))
        assert checked >= len([s for s in specs if s.parameters.get("required")])
        assert checked > 0
        # the facade's own failures (unknown tool, arguments that are not an object)
        for name, args in (("no_such_tool", {}), ("memory", "[1]"), ("memory", "{not json")):
            result = session.call_tool(name, args)
            check_result_shape(result, tool=name)
            assert reports_failure(result)
        session.close()
