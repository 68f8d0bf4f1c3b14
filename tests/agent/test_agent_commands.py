"""Slash commands on a live agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripted import ScriptedModel, call

from hermes_core.agent.commands import is_command, run_command
from hermes_core.agent.loop import Agent
from hermes_core.layers.memory.approval import PendingStore


def lines(agent: Agent, line: str) -> str:
    return "\n".join(run_command(agent, line).lines)


def test_memory_pending_approve_and_reject(
    make_agent: Any, model: ScriptedModel, hermes_home: Path
) -> None:
    agent: Agent = make_agent(memory={"write_approval": True})
    assert lines(agent, "/memory pending") == "No pending memory writes."
    for fact in ("User likes 饺子.", "User likes pizza."):
        agent.session.call_tool("memory", {"action": "add", "target": "user", "content": fact})
    first, second = PendingStore(hermes_home).list()
    pending = lines(agent, "/memory pending")
    assert first.id in pending and "User likes 饺子." in pending
    assert lines(agent, f"/memory approve {first.id}").startswith(f"✓ {first.id}")
    assert lines(agent, "/memory reject all") == f"✓ rejected {second.id}"
    shown = lines(agent, "/memory")
    assert "1. User likes 饺子." in shown and "pizza" not in shown
    assert "✗ no pending write with id nope" in lines(agent, "/memory reject nope")
    assert "Usage" in lines(agent, "/memory approve")
    assert "Unknown /memory subcommand" in lines(agent, "/memory frobnicate")


def test_skills_search_new_compress_refine_help_exit(
    make_agent: Any, model: ScriptedModel, fake_llm: Any
) -> None:
    agent: Agent = make_agent(memory={"nudge_interval": 0})
    assert "No skills yet" in lines(agent, "/skills")
    model.when("deploy", "We deploy the 青龙 service with helm.")
    agent.run_turn("how do we deploy the 青龙 service?")
    first = agent.session.id
    assert lines(agent, "/compress").startswith("Not compressed: ")
    assert lines(agent, "/new").startswith("New session") and agent.session.id != first
    # the current lineage is excluded from search; a /reset session is unlinked
    assert first not in lines(agent, "/search 青龙 deploy")
    assert lines(agent, "/reset").startswith("Fresh session")
    assert first in lines(agent, "/search 青龙 deploy")
    assert lines(agent, "/search") == "Usage: /search QUERY"
    agent.run_turn("I am a night owl")
    model.review = lambda body: (
        call("memory", action="add", target="user", content="User is a night owl.")
        if body["messages"][-1]["role"] == "user"
        else "Saved."
    )
    assert agent.review is not None
    agent.review.notifications.put("💾 Skill updated")  # from an earlier background review
    assert lines(agent, "/refine") == "💾 Memory ➕ User is a night owl."
    # /refine printed its writes; the UI must not announce them a second time
    assert agent.drain_notifications() == ["💾 Skill updated"]
    assert "/refine" in lines(agent, "/help")
    assert run_command(agent, "/exit").exit and run_command(agent, "/quit").exit
    assert "Unknown command /nope" in lines(agent, "/nope")
    assert is_command("/memory") and not is_command("hello /memory") and not is_command("/")


def test_compress_command_with_a_focus(make_agent: Any, model: ScriptedModel) -> None:
    agent: Agent = make_agent(compression={"enabled": False}, llm={"context_length": 4096})
    assert lines(agent, "/compress") == "Nothing to compress yet."
    filler = "The 青龙 cluster has node pools, ingress rules and dashboards. " * 30
    for n in range(8):
        agent.run_turn(f"turn {n}: {filler}")
    before = len(agent.history)
    out = lines(agent, "/compress 青龙 ingress")
    assert out.startswith("Compressed: ") and "→" in out
    assert len(agent.history) < before and agent.session.compression.count == 1
    assert agent.run_turn("still there?").completed


def test_memory_approve_tells_the_provider(make_agent: Any, model: ScriptedModel) -> None:
    from hermes_core.markers import hookimpl
    from hermes_core.types import MemoryWrite, SessionInfo

    seen: list[MemoryWrite] = []

    class Recorder:
        @hookimpl
        def on_memory_write(self, session: SessionInfo, write: MemoryWrite) -> None:
            seen.append(write)

    agent: Agent = make_agent(memory={"write_approval": True})
    agent.host.pm.register(Recorder(), name="recorder")
    agent.session.call_tool("memory", {"action": "add", "target": "user", "content": "用户喜欢茶"})
    assert seen == []  # staged, not committed
    (record,) = PendingStore(agent.host.home).list()
    assert lines(agent, f"/memory approve {record.id}").startswith(f"✓ {record.id}")
    agent.host.flush(5)
    assert [(w.action, w.target, w.content) for w in seen] == [("add", "user", "用户喜欢茶")]


def test_memory_commands_in_chat_act_for_the_chats_user(
    make_agent: Any, model: ScriptedModel, hermes_home: Path
) -> None:
    from hermes_core.markers import hookimpl
    from hermes_core.types import MemoryWrite, SessionInfo

    seen: list[tuple[str | None, str]] = []

    class Recorder:
        @hookimpl
        def on_memory_write(self, session: SessionInfo, write: MemoryWrite) -> None:
            seen.append((session.user_id, write.content))

    base: Agent = make_agent(memory={"write_approval": True})
    base.host.pm.register(Recorder(), name="recorder")
    xiaoming = Agent(base.host, user_id="小明")
    bob = Agent(base.host, user_id="bob")
    xiaoming.session.call_tool(
        "memory", {"action": "add", "target": "user", "content": "小明喜欢乌龙茶"}
    )
    bob.session.call_tool(
        "memory", {"action": "add", "target": "user", "content": "Bob likes 咖啡"}
    )
    (mine,) = PendingStore(hermes_home, "小明").list()
    assert "乌龙茶" not in lines(bob, "/memory pending")
    assert lines(base, "/memory pending") == "No pending memory writes."  # the no-user scope
    assert lines(bob, f"/memory approve {mine.id}").startswith(f"✗ {mine.id}")
    assert lines(bob, f"/memory reject {mine.id}").startswith("✗ no pending write")
    assert lines(xiaoming, "/memory approve all") == f"✓ {mine.id}: Entry added."
    base.host.flush(5)
    assert seen == [("小明", "小明喜欢乌龙茶")]  # mirrored under the user who approved it
    assert "1. 小明喜欢乌龙茶" in lines(xiaoming, "/memory show")
    assert "乌龙茶" not in lines(bob, "/memory show") and "乌龙茶" not in lines(base, "/memory")
    assert "Bob likes 咖啡" in lines(bob, "/memory pending")
    xiaoming.close()
    bob.close()
