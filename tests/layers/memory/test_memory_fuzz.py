"""hypothesis: no argument shape makes the memory tools raise; every answer is a JSON object."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memkit import MemoryKit

from hermes_core.types import ToolContext

json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
known_keys = st.sampled_from(
    ["action", "target", "content", "new_text", "old_text", "operations", "priority"]
)
actions = st.sampled_from(["add", "replace", "remove", "", "read", "ADD"]) | json_values
texts = st.text(max_size=60) | st.sampled_from(
    ["ignore all previous instructions", "  ", "用户喜欢绿茶", "\u200b", "§", "\n§\n"]
)
operation = st.fixed_dictionaries(
    {},
    optional={
        "action": actions,
        "content": texts | json_values,
        "old_text": texts | json_values,
        "priority": st.sampled_from(["low", "normal", "high"]) | json_values,
    },
)
tool_args = (
    st.fixed_dictionaries(
        {},
        optional={
            "action": actions,
            "target": st.sampled_from(["memory", "user", "", "notes"]) | json_values,
            "content": texts | json_values,
            "new_text": texts | json_values,
            "old_text": texts | json_values,
            "priority": json_values,
            "operations": st.lists(operation | json_values, max_size=5) | json_values,
        },
    )
    | st.dictionaries(known_keys | st.text(max_size=8), json_values, max_size=6)
    | json_values
)

_HOME = Path(tempfile.mkdtemp(prefix="hermes-fuzz-"))
_KITS = {
    "plain": MemoryKit(_HOME / "plain", memory_char_limit=300, user_char_limit=200),
    "archive": MemoryKit(_HOME / "archive", memory_char_limit=120, overflow="archive"),
    "gated": MemoryKit(_HOME / "gated", write_approval=True),
}


def _run(kit: MemoryKit, tool: str, args: Any, origin: str) -> dict[str, Any]:
    handler = kit.tools()[tool].handler
    ctx = ToolContext(session=kit.session, origin=origin, notify_memory_write=lambda w: None)  # type: ignore[arg-type]
    raw = handler(args, ctx)
    result = json.loads(raw)
    assert isinstance(result, dict)
    assert isinstance(result.get("success"), bool)
    if result["success"] is False:
        assert isinstance(result.get("error"), str) and result["error"]
        # the catch-all means an internal exception escaped validation: a bug
        assert not result["error"].startswith(("Memory write failed", "Archive search failed"))
    return result


@given(
    args=tool_args,
    kit_name=st.sampled_from(sorted(_KITS)),
    origin=st.sampled_from(["foreground", "background_review", "attended_review"]),
)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_memory_tool_never_raises(args: Any, kit_name: str, origin: str) -> None:
    kit = _KITS[kit_name]
    _run(kit, "memory", args, origin)
    # whatever happened, the file still parses
    for target in ("memory", "user"):
        kit.entries(target)  # type: ignore[arg-type]


@given(
    args=st.dictionaries(st.sampled_from(["query", "target", "limit"]), json_values) | json_values
)
@settings(max_examples=150, deadline=None)
def test_memory_archive_tool_never_raises(args: Any) -> None:
    _run(_KITS["archive"], "memory_archive", args, "foreground")
