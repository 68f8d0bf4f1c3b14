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
