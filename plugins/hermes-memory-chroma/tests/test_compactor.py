"""Compaction: robust JSON parsing, coercion, and the lossless fallbacks (no LLM, LLM error,
unparseable answer) — the LLM paths go over real loopback HTTP to the fake server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hermes_core.llm.client import LLMClient
from hermes_core.testing.fake_llm import FakeLLMServer

from hermes_memory_chroma.compactor import (
    RAW_CHUNK_CHARS,
    Compactor,
    items_from_object,
    parse_compaction,
    raw_items,
    render_dialogue,
)

OBJ = {
    "user_profile": {"location": "lives in Lisbon", "diet": "vegetarian"},
    "project_status": "The importer handles CSV; Excel is next.",
    "key_decisions": ["Use SQLite FTS5 for keyword search"],
    "todos": ["write the Excel importer"],
}

DIALOGUE = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "I moved to Lisbon last month. 我是素食者。"},
    {"role": "assistant", "content": "Noted!", "tool_calls": [{"id": "x"}]},
    {"role": "tool", "tool_call_id": "x", "content": "tool output that must be skipped"},
    {"role": "user", "content": [{"type": "text", "text": "Let's use FTS5."}]},
]


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(OBJ),
        "```json\n" + json.dumps(OBJ, indent=2) + "\n```",
        "Sure! Here is the memory update:\n" + json.dumps(OBJ) + "\nLet me know if you need more.",
        "```\n" + json.dumps(OBJ) + "\n```",
        json.dumps(OBJ)[:-1] + ",}",  # trailing comma
        'Note: {"not": "this one"} but ' + json.dumps(OBJ),
    ],
)
def test_parse_compaction_accepts_fenced_and_chatty_json(text: str) -> None:
    assert parse_compaction(text) == OBJ


def test_parse_compaction_handles_braces_inside_strings() -> None:
    obj = {"project_status": "the template uses {name} and } braces", "todos": []}
    assert parse_compaction("ok: " + json.dumps(obj) + " done") == obj


def test_parse_compaction_chinese() -> None:
    obj = {"user_profile": {"饮食": "用户是素食者"}, "todos": ["写导入器"]}
    text = "好的，结果如下：\n```json\n" + json.dumps(obj, ensure_ascii=False) + "\n```"
    assert parse_compaction(text) == obj


@pytest.mark.parametrize(
    "text", ["", "no json here", "[1, 2, 3]", '{"unrelated": 1}', "{broken json"]
)
def test_parse_compaction_rejects_garbage(text: str) -> None:
    with pytest.raises(ValueError):
        parse_compaction(text)


def test_items_from_object_coerces_shapes() -> None:
    items = items_from_object(
        {
            "user_profile": ["likes tea", {"editor": "helix"}],
            "project_status": ["half done", "tests green"],
            "key_decisions": "use chroma",
            "todos": None,
        }
    )
    assert [(i.type, i.content) for i in items] == [
        ("user_profile", "likes tea"),
        ("user_profile", "editor: helix"),
        ("project_status", "half done tests green"),
        ("key_decision", "use chroma"),
    ]
    subjects = items_from_object({"user_profile": {"Location": "lives in Lisbon"}})
    assert subjects[0].subject == "Location"
    assert subjects[0].content == "Location: lives in Lisbon"


def test_render_dialogue_keeps_only_user_and_assistant_text() -> None:
    text = render_dialogue(DIALOGUE)
    assert text.splitlines() == [
        "user: I moved to Lisbon last month. 我是素食者。",
        "assistant: Noted!",
        "user: Let's use FTS5.",
    ]


def test_raw_items_chunk_on_line_boundaries() -> None:
    lines = [f"user: line {i} " + "z" * 90 for i in range(60)]
    items = raw_items("\n".join(lines))
    assert len(items) > 1
    assert all(i.type == "project_status" for i in items)
    assert all(len(i.content) <= RAW_CHUNK_CHARS + 200 for i in items)
    assert "\n".join(i.content for i in items) == "\n".join(lines)  # nothing lost


def test_no_llm_keeps_raw_text() -> None:
    result = Compactor(lambda: None).compact(DIALOGUE)
    assert result.fallback and result.error == "no LLM configured"
    assert "Lisbon" in result.items[0].content and "素食" in result.items[0].content
    assert result.render() == ""


def test_empty_dialogue_produces_nothing() -> None:
    result = Compactor(lambda: None).compact([{"role": "tool", "content": "x"}])
    assert result.items == () and not result.fallback


def _client(llm: FakeLLMServer) -> LLMClient:
    return LLMClient(llm.base_url, None, llm.model, max_retries=0, timeout=5)


def test_llm_json_becomes_structured_items(fake_llm: FakeLLMServer) -> None:
    fake_llm.script_chat(content="```json\n" + json.dumps(OBJ) + "\n```")
    result = Compactor(lambda: _client(fake_llm)).compact(DIALOGUE)
    assert not result.fallback
    kinds = [(i.type, i.subject) for i in result.items]
    assert ("user_profile", "location") in kinds and ("todo", "") in kinds
    sent: dict[str, Any] = fake_llm.chat_requests[0]
    assert sent["response_format"] == {"type": "json_object"}
    assert "Lisbon" in sent["messages"][-1]["content"]
    assert "tool output" not in sent["messages"][-1]["content"]
    assert "Key decision: Use SQLite FTS5" in result.render()


def test_llm_error_falls_back_to_raw(fake_llm: FakeLLMServer) -> None:
    fake_llm.script_error(500)
    result = Compactor(lambda: _client(fake_llm)).compact(DIALOGUE)
    assert result.fallback and result.error
    assert "Lisbon" in result.items[0].content


def test_unparseable_llm_answer_falls_back_to_raw(fake_llm: FakeLLMServer) -> None:
    fake_llm.script_chat(content="I'm sorry, I can't produce JSON today.")
    result = Compactor(lambda: _client(fake_llm)).compact(DIALOGUE)
    assert result.fallback and "no JSON object" in (result.error or "")


def test_the_client_is_closed_after_use() -> None:
    class Client:
        closed = False

        def chat(self, messages: Any, **kwargs: Any) -> Any:
            return json.dumps({"todos": ["water the plants"]})

        def close(self) -> None:
            Client.closed = True

    result = Compactor(lambda: Client()).compact(DIALOGUE)
    assert [i.content for i in result.items] == ["water the plants"] and Client.closed


def test_failing_client_factory_falls_back() -> None:
    def broken() -> Any:
        raise RuntimeError("bad route")

    result = Compactor(broken).compact(DIALOGUE)
    assert result.fallback and "bad route" in (result.error or "")
