"""The background review against the loopback fake model: when it fires, what it may do,
how its writes land, cancellation and notifications."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from conftest import chat_turn

from hermes_core.host import MemoryHost
from hermes_core.layers.memory.approval import PendingStore
from hermes_core.layers.review import attach_review
from hermes_core.layers.review.plugin import find_review_layer
from hermes_core.layers.review.review import ReviewWrite, format_notices
from hermes_core.testing.fake_llm import FakeLLMServer


def call(tool: str, /, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def review_steps(*steps: dict[str, Any] | str) -> Callable[[Mapping[str, Any]], Any]:
    """A responder playing ``steps`` in order within each review (by tool messages seen)."""

    def respond(body: Mapping[str, Any]) -> Any:
        messages = body["messages"]
        if not str(messages[-1].get("content", "")).startswith("[Background review") and (
            messages[-1]["role"] != "tool"
        ):
            return "(not a review)"
        done = sum(1 for m in messages if m["role"] == "assistant" and m.get("tool_calls"))
        return steps[done] if done < len(steps) else "Nothing to save."

    return respond


def user_md(home: Path) -> str:
    path = home / "memories" / "USER.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_review_fires_at_the_interval_and_its_add_lands(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer, hermes_home: Path
) -> None:
    fake_llm.responder = review_steps(
        call("memory", action="add", target="user", content="User 喜欢 green tea.")
    )
    host = review_host(memory={"nudge_interval": 2})
    session = host.session()
    lines: list[str] = []
    runner = attach_review(session, notify=lines.append)
    assert runner is not None
    chat_turn(session, "I drink green tea, 绿茶, every day")
    assert fake_llm.chat_requests == [] and not runner.reports
    chat_turn(session, "what should I drink later?")
    assert runner.wait_idle(10)
    assert "User 喜欢 green tea." in user_md(hermes_home)
    report = runner.reports[-1]
    assert report.kind == "memory" and report.origin == "background_review"
    assert lines == ["💾 Memory updated"] and runner.drain_notifications() == lines
    request = fake_llm.chat_requests[0]
    assert request["messages"][0] == {"role": "system", "content": session.system_prompt()}
    assert "green tea, 绿茶" in json.dumps(request["messages"], ensure_ascii=False)
    offered = {t["function"]["name"] for t in request["tools"]}
    assert "memory" in offered and "session_search" in offered
    assert "skill_manage" not in offered and "skill_feedback" not in offered


def test_unattended_removal_is_staged_as_a_proposal(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer, hermes_home: Path
) -> None:
    host = review_host(memory={"nudge_interval": 1})
    session = host.session()
    session.call_tool("memory", {"action": "add", "target": "user", "content": "User uses vim."})
    fake_llm.responder = review_steps(
        call("memory", action="remove", target="user", old_text="vim")
    )
    runner = attach_review(session)
    assert runner is not None
    chat_turn(session, "I switched editors, I use helix now")
    assert runner.wait_idle(10)
    assert "User uses vim." in user_md(hermes_home)
    (record,) = PendingStore(hermes_home).list()
    assert record.origin == "background_review" and record.proposal
    assert runner.drain_notifications() == [
        "💾 Memory change proposed — review with /memory pending"
    ]


def test_attended_refine_applies_a_removal_directly(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer, hermes_home: Path
) -> None:
    host = review_host(memory={"nudge_interval": 0}, review={"notifications": "verbose"})
    session = host.session()
    session.call_tool("memory", {"action": "add", "target": "user", "content": "User uses vim."})
    chat_turn(session, "I use helix now, forget vim")
    fake_llm.responder = review_steps(
        call("memory", action="remove", target="user", old_text="vim")
    )
    runner = attach_review(session)
    assert runner is not None
    report = runner.run_attended("memory")
    assert report.origin == "attended_review" and not report.error
    assert "vim" not in user_md(hermes_home)
    assert PendingStore(hermes_home).list() == []
    assert runner.drain_notifications() == ["💾 Memory ➖ vim"]


def test_deeply_nested_tool_arguments_do_not_abort_the_review(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer, hermes_home: Path
) -> None:
    host = review_host(memory={"nudge_interval": 0})
    session = host.session()
    chat_turn(session, "我叫小明，喜欢龙井茶")
    fake_llm.responder = review_steps(
        {"tool_calls": [{"name": "memory", "arguments": "[" * 100_000}]},
        call("memory", action="add", target="user", content="用户喜欢龙井茶"),
    )
    runner = attach_review(session)
    assert runner is not None
    report = runner.run_attended("memory")
    assert report.error is None
    assert "用户喜欢龙井茶" in user_md(hermes_home)


def test_disabled_review_and_a_fresh_memory_write_start_nothing(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer
) -> None:
    host = review_host(memory={"nudge_interval": 1}, review={"enabled": False})
    session = host.session()
    runner = attach_review(session)
    assert runner is not None
    chat_turn(session, "remember I like tea")
    assert runner.reports == [] and fake_llm.chat_requests == []
    host2 = review_host(memory={"nudge_interval": 1})
    session2 = host2.session()
    runner2 = attach_review(session2)
    assert runner2 is not None
    session2.before_turn("remember I like tea")
    result = session2.call_tool(
        "memory", {"action": "add", "target": "user", "content": "Likes tea."}
    )
    call_msg = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "memory", "arguments": "{}"}}
        ],
    }
    session2.after_turn(
        "remember I like tea",
        "Saved.",
        [
            {"role": "user", "content": "remember I like tea"},
            call_msg,
            {"role": "tool", "tool_call_id": "c1", "content": result},
            {"role": "assistant", "content": "Saved."},
        ],
        tool_iterations=1,
    )
    assert runner2.reports == []


def test_new_turn_cancels_an_in_flight_review_before_it_writes(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer, hermes_home: Path
) -> None:
    release = threading.Event()
    asked = threading.Event()

    def slow(body: Mapping[str, Any]) -> Any:
        asked.set()
        release.wait(10)
        return call("memory", action="add", target="user", content="User is slow.")

    fake_llm.responder = slow
    host = review_host(memory={"nudge_interval": 1})
    session = host.session()
    runner = attach_review(session)
    assert runner is not None
    chat_turn(session, "first turn")
    assert asked.wait(10) and runner.busy
    session.before_turn("second turn")  # on_turn_start cancels; returns without waiting
    assert not runner.busy
    release.set()
    assert runner.wait_idle(10)
    assert runner.reports[-1].cancelled
    assert "User is slow." not in user_md(hermes_home)
    assert runner.drain_notifications() == []


def test_skill_changes_need_a_skill_view_first(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer, hermes_home: Path
) -> None:
    host = review_host(memory={"nudge_interval": 0}, skills={"creation_nudge_interval": 1})
    session = host.session()
    created = json.loads(
        session.call_tool(
            "skill_manage",
            {
                "action": "create",
                "name": "brew-tea",
                "content": "---\nname: brew-tea\ndescription: Brew tea.\n---\nBoil water.\n",
            },
        )
    )
    assert created["success"], created
    patch = call(
        "skill_manage",
        action="patch",
        name="brew-tea",
        old_string="Boil water.",
        new_string="Boil water to 80°C.",
    )
    fake_llm.responder = review_steps(patch, call("skill_view", name="brew-tea"), patch)
    runner = attach_review(session)
    assert runner is not None
    report = runner.run_attended("skills")
    tools = [m for m in fake_llm.chat_requests[-1]["messages"] if m["role"] == "tool"]
    assert "Read the skill first" in tools[0]["content"]
    assert json.loads(tools[2]["content"])["success"] is True
    assert [w.action for w in report.writes] == ["patch"]
    skill_md = next((hermes_home / "skills").rglob("SKILL.md")).read_text(encoding="utf-8")
    assert "80°C" in skill_md


def test_routed_review_replays_a_digest(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer
) -> None:
    host = review_host(
        memory={"nudge_interval": 0},
        llm={"auxiliary": {"review": {"model": "small-review-model"}}},
    )
    session = host.session()
    for n in range(20):
        chat_turn(session, f"turn {n}: 第{n}个问题 about gardening", f"answer {n}")
    fake_llm.responder = review_steps()
    runner = attach_review(session)
    assert runner is not None and runner.routed
    runner.run_attended("memory")
    request = fake_llm.chat_requests[-1]
    assert request["model"] == "small-review-model"
    replay = request["messages"][1:-1]
    assert replay[0]["content"].startswith("[Digest of the earlier conversation")
    assert "turn 0: 第0个问题" in replay[0]["content"]
    assert len(replay) == 25 and replay[-1]["content"] == "answer 19"


def test_layer_registry_and_notification_levels(
    review_host: Callable[..., MemoryHost],
) -> None:
    host = review_host()
    session = host.session()
    layer = find_review_layer(host.pm)
    assert layer is not None and layer.runner(session.id) is None
    runner = attach_review(session)
    assert layer.runner(session.id) is runner
    session.close()
    assert layer.runner(session.id) is None
    writes = [
        ReviewWrite("memory", "add", "User likes 茶"),
        ReviewWrite("skill", "create", "brew-tea"),
    ]
    assert format_notices(writes, "off") == []
    assert format_notices(writes, "on") == ["💾 Memory updated", "💾 Skill updated"]
    assert format_notices(writes, "verbose") == [
        "💾 Memory ➕ User likes 茶",
        "💾 Skill ➕ brew-tea",
    ]


def test_health_check_without_a_model_is_idle_not_failed(memory_host: MemoryHost) -> None:
    """No model is a supported setup (deterministic fallbacks): say how to enable, don't fail."""
    checks = [c for c in memory_host.facade.health_check() if c.name.startswith("review")]
    assert len(checks) == 1 and checks[0].ok
    assert "idle" in checks[0].detail and "llm.base_url" in checks[0].detail


def test_a_review_without_write_tools_does_not_call_the_model(
    review_host: Callable[..., MemoryHost], fake_llm: FakeLLMServer
) -> None:
    host = review_host(memory={"nudge_interval": 1}, agent={"disabled_toolsets": ["memory"]})
    session = host.session()
    runner = attach_review(session)
    assert runner is not None and "memory" not in session.tool_names
    report = runner.run_attended("memory")
    assert report.error is not None and "no memory or skill_manage tool" in report.error
    assert fake_llm.chat_requests == []
