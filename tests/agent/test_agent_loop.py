"""The tool loop against the loopback fake model: fencing, scrubbing, caps, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted import ScriptedModel, call

from hermes_core import MemoryContext, hookimpl
from hermes_core.agent.loop import Agent, AgentEvent, LLMNotConfiguredError
from hermes_core.host import MemoryHost
from hermes_core.layers.sessions.db import DB_FILE, SessionDB
from hermes_core.llm.errors import LLMError
from hermes_core.scope import ALL_USERS
from hermes_core.testing.fake_llm import FakeLLMServer


class Recall:
    """Recalls one fixed memory for every non-trivial prompt."""

    @hookimpl
    def prefetch(self, query: str) -> MemoryContext:
        return MemoryContext("- The user drinks 龙井 tea every morning.", count=1, label="recall")


def stored_messages(home: Path, session_id: str) -> list[dict[str, Any]]:
    db = SessionDB(home / DB_FILE)
    try:
        return db.get_messages_as_conversation(session_id)
    finally:
        db.close()


def test_recall_goes_to_the_api_copy_only(
    make_agent: Any, model: ScriptedModel, fake_llm: FakeLLMServer, hermes_home: Path
) -> None:
    events: list[AgentEvent] = []
    agent: Agent = make_agent(events)
    agent.host.facade.register(Recall(), name="recall")
    model.when("tea", "You like 龙井.")
    result = agent.run_turn("What tea do I like in the morning?")
    assert result.reply == "You like 龙井." and result.completed
    sent = fake_llm.chat_requests[-1]["messages"]
    assert "<memory-context>" in sent[-1]["content"]
    assert sent[-1]["content"].startswith("What tea do I like in the morning?")
    assert result.recall_line == "🧠 recall — recalled 1 memory"
    assert ("recall", "🧠 recall — recalled 1 memory") in [(e.kind, e.text) for e in events]
    assert all("<memory-context>" not in str(m.get("content")) for m in agent.history)
    agent.close()
    stored = stored_messages(hermes_home, agent.session.id)
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[0]["content"] == "What tea do I like in the morning?"
    # the next turn's history carries the plain user message, not the fenced copy
    # (checked on the request of a second agent turn)


def test_history_never_resends_a_recall_block(
    make_agent: Any, model: ScriptedModel, fake_llm: FakeLLMServer
) -> None:
    agent: Agent = make_agent()
    agent.host.facade.register(Recall(), name="recall")
    agent.run_turn("first question about tea")
    agent.run_turn("second question about tea")
    sent = fake_llm.chat_requests[-1]["messages"]
    fenced = [m for m in sent if "<memory-context>" in str(m.get("content"))]
    assert fenced == [sent[-1]]


def test_echoed_memory_context_is_scrubbed_from_stream_and_history(
    make_agent: Any, model: ScriptedModel
) -> None:
    events: list[AgentEvent] = []
    agent: Agent = make_agent(events)
    model.when(
        "echo",
        "Before <memory-context>\n[System note: secret recall]\nUser drinks tea\n"
        "</memory-context>after.",
    )
    result = agent.run_turn("please echo your context")
    shown = "".join(e.text for e in events if e.kind == "text")
    assert shown == "Before after." == result.reply
    assert agent.history[-1]["content"] == "Before after."


def test_tool_calls_run_through_the_session_and_usage_is_reported(
    make_agent: Any, model: ScriptedModel, hermes_home: Path
) -> None:
    events: list[AgentEvent] = []
    agent: Agent = make_agent(events)
    model.when("remember", call("memory", action="add", target="user", content="User is Lin 林."))
    result = agent.run_turn("remember that my name is Lin 林")
    assert result.tool_calls == ["memory"] and result.iterations == 1
    assert result.reply == "Done (memory: success=True)."
    assert "User is Lin 林." in (hermes_home / "memories" / "USER.md").read_text(encoding="utf-8")
    kinds = [e.kind for e in events]
    assert kinds.index("tool_call") < kinds.index("tool_result") < kinds.index("usage")
    assert result.prompt_tokens and result.prompt_tokens > 0
    roles = [m["role"] for m in agent.history]
    assert roles == ["user", "assistant", "tool", "assistant"]


def test_system_prompt_is_identical_in_every_request_of_a_session(
    make_agent: Any, model: ScriptedModel, fake_llm: FakeLLMServer
) -> None:
    agent: Agent = make_agent()
    model.when("save", call("memory", action="add", target="memory", content="Repo uses uv."))
    agent.run_turn("save a note about the repo")
    agent.run_turn("and now something else")
    systems = {r["messages"][0]["content"] for r in fake_llm.chat_requests}
    assert systems == {agent.system_prompt}
    assert "Repo uses uv." not in agent.system_prompt


def test_iteration_cap_ends_a_runaway_tool_loop(make_agent: Any, fake_llm: FakeLLMServer) -> None:
    fake_llm.responder = lambda body: call("skills_list")
    agent: Agent = make_agent(agent={"max_iterations": 2})
    result = agent.run_turn("loop forever please")
    assert result.iterations == 2 and not result.completed
    assert "agent.max_iterations" in result.reply
    requests = fake_llm.chat_requests
    assert len(requests) == 3 and "tools" not in requests[-1]


def test_unknown_tool_is_answered_with_an_error(
    make_agent: Any, model: ScriptedModel, fake_llm: FakeLLMServer
) -> None:
    model.when("terminal", call("terminal", command="ls"))
    agent: Agent = make_agent()
    agent.run_turn("run terminal ls")
    tool_message = fake_llm.chat_requests[-1]["messages"][-1]
    assert tool_message["role"] == "tool" and "not available" in tool_message["content"]


def test_pathologically_nested_tool_arguments_are_a_json_error_not_a_crash(
    make_agent: Any, model: ScriptedModel, fake_llm: FakeLLMServer
) -> None:
    # json.loads raises RecursionError (not a ValueError) on deep nesting: it must not escape
    # the tool path and take the turn down.
    model.when("nest", {"tool_calls": [{"name": "memory", "arguments": "[" * 100_000}]})
    agent: Agent = make_agent()
    result = agent.run_turn("nest deeply 深层嵌套")
    assert result.completed
    tool_message = fake_llm.chat_requests[-1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert json.loads(tool_message["content"])["success"] is False


def test_model_failure_raises_and_records_nothing(
    make_agent: Any, fake_llm: FakeLLMServer, hermes_home: Path
) -> None:
    agent: Agent = make_agent()
    fake_llm.script_error(401, "bad key")
    with pytest.raises(LLMError, match="api_key"):
        agent.run_turn("hello there")
    assert agent.history == []
    agent.close()
    assert stored_messages(hermes_home, agent.session.id) == []


def test_without_a_model_the_turn_says_how_to_configure(hermes_home: Path) -> None:
    host = MemoryHost.open(hermes_home, load_entrypoints=False, activate_provider=False)
    try:
        agent = Agent(host, cwd=hermes_home)
        with pytest.raises(LLMNotConfiguredError, match="HERMES_LLM__BASE_URL"):
            agent.run_turn("hi")
    finally:
        host.close()


def test_new_session_keeps_lineage_and_reset_does_not(
    make_agent: Any, model: ScriptedModel, hermes_home: Path
) -> None:
    agent: Agent = make_agent()
    agent.run_turn("hello one")
    first = agent.session.id
    agent.new_session()
    second = agent.session.id
    agent.new_session(reason="reset", keep_lineage=False)
    third = agent.session.id
    agent.close()
    db = SessionDB(hermes_home / DB_FILE)
    try:
        one, two, three = (db.get_session(s, user_id=ALL_USERS) for s in (first, second, third))
    finally:
        db.close()
    assert one is not None and one.ended_at is not None
    assert two is not None and two.parent_session_id == first
    assert three is not None and three.parent_session_id is None


def test_session_end_reason_reaches_the_archive(
    make_agent: Any, model: ScriptedModel, hermes_home: Path
) -> None:
    """/new records reason new_session, /reset records reset."""
    agent: Agent = make_agent()
    agent.run_turn("hello one")
    first = agent.session.id
    agent.new_session()
    second = agent.session.id
    agent.new_session(reason="reset", keep_lineage=False)
    agent.close()
    db = SessionDB(hermes_home / DB_FILE)
    try:
        reasons = [db.get_session(s, user_id=ALL_USERS).end_reason for s in (first, second)]  # type: ignore[union-attr]
    finally:
        db.close()
    assert reasons == ["new_session", "reset"]


def test_model_failure_after_tools_records_the_turn_as_not_completed(
    make_agent: Any, fake_llm: FakeLLMServer, hermes_home: Path
) -> None:
    agent: Agent = make_agent()
    fake_llm.script_chat(tool_calls=[{"name": "skills_list", "arguments": {}}])
    fake_llm.script_error(403, "no access")
    with pytest.raises(LLMError):
        agent.run_turn("list my skills")
    assert [m["role"] for m in agent.history] == ["user", "assistant", "tool"]
    agent.close()
    stored = stored_messages(hermes_home, agent.session.id)
    assert [m["role"] for m in stored] == ["user", "assistant", "tool"]
