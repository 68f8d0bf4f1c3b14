"""Messages summarised away by compression stay searchable, even from their own session."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_core import MemoryHost
from hermes_core.settings import load_settings


def test_compressed_rows_are_marked_and_found_from_the_same_session(hermes_home: Path) -> None:
    settings = load_settings(
        hermes_home, compression={"protect_last_n": 4}, llm={"context_length": 2048}
    )
    with MemoryHost.open(hermes_home, settings=settings, load_entrypoints=False) as host:
        session = host.session(user_id="u1")
        transcript = [{"role": "system", "content": session.system_prompt()}]
        topics = [
            "the blue-green deploy of billing",
            "缓存失效的问题",
            "rotating the TLS certificates",
        ]
        for number in range(12):
            topic = topics[number % 3]
            user = {"role": "user", "content": f"Turn {number}: let us talk about {topic}"}
            reply = {"role": "assistant", "content": f"Noted point {number} on {topic}."}
            session.before_turn(user["content"])
            session.after_turn(user["content"], reply["content"], [user, reply])
            transcript += [user, reply]
        before = json.loads(session.call_tool("session_search", {"query": "blue-green deploy"}))
        assert before["count"] == 0  # the live session is never returned
        session.maybe_compress(transcript, force=True)
        assert session.compression.count == 1
        after = json.loads(session.call_tool("session_search", {"query": "blue-green deploy"}))
        assert after["count"] >= 1, after
        assert after["results"][0]["session_id"] == session.id


def test_escaped_unicode_in_tool_arguments_is_searchable(hermes_home: Path) -> None:
    """Models often send tool arguments with \\uXXXX escapes; Chinese in them must be found."""
    arguments = json.dumps({"action": "add", "content": "用户喜欢喝茶"})  # ensure_ascii escapes
    assert "\\u" in arguments
    with MemoryHost.open(hermes_home, load_entrypoints=False) as host:
        first = host.session()
        call = {
            "id": "c1",
            "type": "function",
            "function": {"name": "memory", "arguments": arguments},
        }
        first.after_turn(
            "remember my drink",
            "Saved.",
            [
                {"role": "user", "content": "remember my drink"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": '{"success": true}'},
                {"role": "assistant", "content": "Saved."},
            ],
        )
        first.close()
        found = json.loads(host.session().call_tool("session_search", {"query": "茶"}))
        assert found["count"] == 1 and found["results"][0]["session_id"] == first.id
