"""A skill review fires after enough tool-calling iterations and its skill lands in the next
session's index."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scripted import ScriptedModel, call, calls_since_user, is_review

from hermes_core.agent.loop import Agent
from hermes_core.testing.fake_llm import FakeLLMServer

SKILL = (
    "---\nname: csv-cleanup\ndescription: Clean a messy CSV export (编码 and delimiters).\n"
    "---\n1. Detect the encoding.\n2. Normalise delimiters.\n"
)


def test_skill_review_after_tool_iterations(
    make_agent: Any, model: ScriptedModel, fake_llm: FakeLLMServer
) -> None:
    def respond(body: Mapping[str, Any]) -> Any:
        if is_review(body) or body["messages"][-1]["role"] != "tool":
            return model(body)
        if any("[Background review" in str(m.get("content")) for m in body["messages"]):
            return "Saved the procedure."
        return call("skills_list") if len(calls_since_user(body)) < 3 else "Cleaned the CSV."

    fake_llm.responder = respond
    model.when("clean this CSV", call("skills_list"))
    model.review = lambda body: call(
        "skill_manage", action="create", name="csv-cleanup", content=SKILL
    )
    agent: Agent = make_agent(memory={"nudge_interval": 0}, skills={"creation_nudge_interval": 3})
    assert agent.review is not None
    result = agent.run_turn("please clean this CSV export")
    assert result.iterations == 3 and result.completed and result.reply == "Cleaned the CSV."
    assert agent.review.wait_idle(10)
    report = agent.review.reports[-1]
    assert report.kind == "skills" and [w.action for w in report.writes] == ["create"]
    assert agent.drain_notifications() == ["💾 Skill updated"]
    assert "csv-cleanup" not in agent.system_prompt
    agent.new_session()
    assert "csv-cleanup" in agent.system_prompt
