"""The no-LLM pre-prune."""

from __future__ import annotations

import json

from compkit import tool_exchange

from hermes_core.layers.compression.prune import (
    DUPLICATE_NOTE,
    IMAGE_NOTE,
    SCREENSHOT_NOTE,
    TRUNCATED,
    dedupe_tool_outputs,
    one_line_summary,
    prune,
    shrink_tool_arguments,
    strip_images,
    summarize_old_tool_outputs,
)


def test_dedupe_keeps_newest_copy_only() -> None:
    big = "same output\n" * 30
    msgs = [*tool_exchange(1, output=big), *tool_exchange(2, output=big), *tool_exchange(3)]
    out = dedupe_tool_outputs(msgs)
    assert out[1]["content"] == DUPLICATE_NOTE
    assert out[3]["content"] == big
    assert msgs[1]["content"] == big  # input untouched


def test_short_duplicates_are_kept() -> None:
    msgs = [*tool_exchange(1, output="ok"), *tool_exchange(2, output="ok")]
    assert [m.get("content") for m in dedupe_tool_outputs(msgs)] == [None, "ok", None, "ok"]


def test_old_outputs_become_one_line_summaries_with_error_line() -> None:
    out_text = "collected 5 items\n" + "....\n" * 50 + "E   AssertionError: 3 != 4\nexit code 1\n"
    msgs = [*tool_exchange(1, output=out_text), *tool_exchange(2)]
    out = summarize_old_tool_outputs(msgs, protect_from=2)
    line = out[1]["content"]
    assert line.startswith("[terminal] ran `pytest -q tests/test_1.py` -> exit 1,")
    assert "AssertionError: 3 != 4" in line
    assert "\n" not in line
    assert out[3]["content"] == msgs[3]["content"]  # protected


def test_one_line_summary_shapes() -> None:
    assert one_line_summary("read_file", {"path": "/a/b.py"}, "x" * 3400) == (
        "[read_file] read /a/b.py from line 1 (3,400 chars)"
    )
    assert one_line_summary("memory", {"action": "add", "target": "user"}, "y" * 300) == (
        "[memory] add on user"
    )
    generic = one_line_summary("web_search", {"query": "部署 失败"}, "z" * 500)
    assert generic == "[web_search] query=部署 失败 (500 chars result)"
    assert "exit 0" in one_line_summary(
        "terminal", {"command": "ls"}, json.dumps({"exit_code": 0, "out": "a" * 300})
    )


def test_shrink_arguments_keeps_valid_json() -> None:
    args = {"path": "/x", "content": "长" * 900, "nested": {"s": "a" * 600, "n": 3}}
    msg = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c",
                "type": "function",
                "function": {"name": "write", "arguments": json.dumps(args)},
            },
            {
                "id": "d",
                "type": "function",
                "function": {"name": "w", "arguments": "{bad json" + "x" * 600},
            },
        ],
    }
    out = shrink_tool_arguments([msg])[0]["tool_calls"]
    parsed = json.loads(out[0]["function"]["arguments"])
    assert parsed["path"] == "/x" and parsed["nested"]["n"] == 3
    assert parsed["content"] == "长" * 200 + TRUNCATED
    assert parsed["nested"]["s"].endswith(TRUNCATED)
    assert out[1]["function"]["arguments"].startswith("{bad json")
    assert len(out[1]["function"]["arguments"]) == len("{bad json") + 600
    assert json.loads(msg["tool_calls"][0]["function"]["arguments"]) == args


def test_strip_images() -> None:
    img = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": "old"}, img]},
        {"role": "assistant", "content": "seen"},
        {"role": "tool", "tool_call_id": "x", "content": [img]},
        {"role": "user", "content": [{"type": "text", "text": "new"}, img]},
    ]
    out = strip_images(msgs)
    assert out[0]["content"][1] == {"type": "text", "text": IMAGE_NOTE}
    assert out[2]["content"][0] == {"type": "text", "text": SCREENSHOT_NOTE}
    assert out[3]["content"][1] == img


def test_prune_protects_tail_outputs() -> None:
    msgs = [*tool_exchange(1, output="a\n" * 200), *tool_exchange(2, output="b\n" * 200)]
    out = prune(msgs, protect_from=2)
    assert out[1]["content"].startswith("[terminal]")
    assert out[3]["content"] == "b\n" * 200
