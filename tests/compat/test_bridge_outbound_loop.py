"""Outbound bridge, issue 27 point 9: Hermes Agent passes its WHOLE conversation as
``sync_turn(messages=)``; our exported provider stores only each turn's new messages.

Hermes Agent 0.19.0's own agent loop (``run_agent.AIAgent.run_conversation``, three turns
carrying the history, against a scripted OpenAI-compatible server on 127.0.0.1) runs our
chroma provider, exported with ``hermes-memory memory export-to-hermes-agent``. At session
end chroma compacts the session's buffered messages into one summary: it must hold each turn
once (before the fix turn 1 appeared three times).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("run_agent", reason="needs hermes-agent (tox -e hermes-agent)")
pytest.importorskip("hatchling", reason="the offline export builds with the env's hatchling")

from test_bridge_outbound import export

from hermes_core.compat.bridge_outbound import new_turn_messages
from hermes_core.testing.fake_llm import FakeLLMServer

AGENT_LOOP = r"""
import json, sys
from run_agent import AIAgent
url, turns = sys.argv[1], json.loads(sys.argv[2])
agent = AIAgent(base_url=url, api_key="sk-test", model="fake-model", quiet_mode=True,
                skip_context_files=True, session_id="ha-loop-1", platform="cli",
                enabled_toolsets=["memory"])
history = []
for text in turns:
    history = agent.run_conversation(text, conversation_history=history)["messages"]
manager = agent._memory_manager
out = {"providers": [p.name for p in manager.providers], "history": len(history)}
out["flushed"] = manager.flush_pending(60)
manager.on_session_end(history)
manager.shutdown_all()
print("RESULT " + json.dumps(out, ensure_ascii=False))
"""

TURNS = [
    "Remember: my kumquat tree is on the balcony",
    "我每天晚上都练习书法",
    "Where should the persimmon seedlings go?",
]


def test_each_turn_is_stored_once_through_hermes_agents_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "hermes-agent-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    export(home, "chroma")
    (home / "config.yaml").write_text("memory:\n  provider: hermes-core-chroma\n", "utf-8")
    with FakeLLMServer() as llm:
        proc = subprocess.run(
            [sys.executable, "-c", AGENT_LOOP, llm.base_url, json.dumps(TURNS)],
            capture_output=True,
            text=True,
            env={**os.environ, "HERMES_HOME": str(home), "MEM0_TELEMETRY": "False"},
            cwd=home,
            timeout=600,
        )
        asked = [r["messages"] for r in llm.chat_requests]
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, proc.stderr[-3000:]
    out = json.loads(lines[-1][len("RESULT ") :])
    assert out == {"providers": ["hermes-core-chroma"], "history": 6, "flushed": True}
    # Hermes Agent really sent the growing conversation: the third request carries turn 1
    assert any(TURNS[0] in json.dumps(m, ensure_ascii=False) for m in asked[-1])

    fts = home / "hermes-core" / "chroma" / "fts.db"
    conn = sqlite3.connect(f"{fts.as_uri()}?mode=ro", uri=True)
    try:
        stored = [row[0] for row in conn.execute("SELECT content FROM memory_fts")]
    finally:
        conn.close()
    summary = " ".join(stored)
    assert summary.count("kumquat") == 2  # turn 1: the user's line and the scripted echo
    assert summary.count("persimmon") == 2
    assert summary.count("书") == 2  # 书法 (split for CJK search), once per message


def message(role: str, text: str) -> dict[str, str]:
    return {"role": role, "content": text}


def test_new_turn_messages_after_compression_and_tool_calls() -> None:
    system = message("system", "You are Hermes.")
    t1 = [message("user", "one"), message("assistant", "1")]
    turn, seen = new_turn_messages([system, *t1], None)
    assert turn == t1
    tool = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]}
    t2 = [message("user", "two"), tool, message("tool", "out"), message("assistant", "2")]
    turn, seen = new_turn_messages([system, *t1, *t2], seen)
    assert turn == t2  # the tool call and its result belong to the turn
    # Hermes Agent compressed its history: what was seen is gone, the turn starts at its user
    t3 = [message("user", "three"), message("assistant", "3")]
    turn, seen = new_turn_messages([message("user", "[summary of one, two]"), *t3], seen)
    assert turn == t3
    assert new_turn_messages([], seen) == ([], seen)
