"""End to end through the reference loop and the real layers, against the loopback model:
three sessions share one Hermes home (memory → next prompt, session_search, skills index,
compression in a long session, background review writes and proposals)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scripted import ScriptedModel, call

from hermes_core.agent.loop import Agent
from hermes_core.layers.memory.approval import PendingStore
from hermes_core.testing.fake_llm import FakeLLMServer

SKILL = (
    "---\nname: qinglong-rollout\ndescription: Roll out project 青龙 to Kubernetes with a "
    "canary.\n---\n1. Deploy the canary.\n2. Watch errors for 10 minutes.\n3. Promote.\n"
)
FILLER = (
    "Here is more background on the 青龙 cluster: node pools, ingress rules, the staging "
    "namespace, dashboards, alerts and the on-call rota. 这是关于集群的更多背景信息。 "
) * 6


def review_once(model: ScriptedModel) -> list[int]:
    """The first review adds a fact and proposes removing one; later ones save nothing."""
    reviews: list[int] = []

    def respond(body: Mapping[str, Any]) -> Any:
        messages = body["messages"]
        done = sum(1 for m in messages if m["role"] == "assistant" and m.get("tool_calls"))
        if done == 0:
            reviews.append(len(reviews) + 1)
        if len(reviews) > 1:
            return "Nothing to save."
        steps = [
            call("memory", action="add", target="user", content="User deploys on Fridays."),
            call("memory", action="remove", target="user", old_text="tabs over spaces"),
        ]
        return steps[done] if done < len(steps) else "Saved what matters."

    model.review = respond
    return reviews


def test_three_sessions_share_memory_archive_and_skills(
    make_agent: Any, model: ScriptedModel, fake_llm: FakeLLMServer, hermes_home: Path
) -> None:
    model.when(
        "prefer tabs",
        call("memory", action="add", target="user", content="User prefers tabs over spaces."),
    )
    model.when("rollout of project 青龙", "Plan: canary first, then promote on Friday.")
    model.when("What did we decide", call("session_search", query="青龙 rollout"))
    model.when(
        "Save this deployment procedure",
        call("skill_manage", action="create", name="qinglong-rollout", content=SKILL),
    )
    model.when("What is my project called", "Your project is 青龙.")

    # -- session 1: teach a preference
    one: Agent = make_agent(memory={"nudge_interval": 0})
    frozen_one = one.system_prompt
    assert one.run_turn("Please remember that I prefer tabs over spaces").tool_calls == ["memory"]
    one.run_turn("Let's plan the rollout of project 青龙 to Kubernetes for Friday")
    assert one.system_prompt == frozen_one and "tabs over spaces" not in frozen_one
    assert {r["messages"][0]["content"] for r in fake_llm.chat_requests} == {frozen_one}
    first_id = one.session.id
    one.close()

    # -- session 2: the preference is in the prompt; session 1 is found; a skill is made
    two: Agent = make_agent(memory={"nudge_interval": 0})
    assert "User prefers tabs over spaces." in two.system_prompt
    found = two.run_turn("What did we decide about the 青龙 rollout?")
    assert found.tool_calls == ["session_search"]
    search_result = json.loads(two.history[2]["content"])
    assert search_result["success"] and search_result["results"][0]["session_id"] == first_id
    assert two.run_turn("Save this deployment procedure as a skill").tool_calls == ["skill_manage"]
    assert "qinglong-rollout" not in two.system_prompt  # frozen for session 2
    two.close()

    # -- session 3: long; the skill is indexed; review at turn 3; compression later
    reviews = review_once(model)
    three: Agent = make_agent(memory={"nudge_interval": 3}, llm={"context_length": 4096})
    assert "qinglong-rollout" in three.system_prompt
    assert three.review is not None
    compressed_at = None
    for n in range(1, 16):
        result = three.run_turn(f"Turn {n}. {FILLER}")
        if n == 3:
            assert three.review.wait_idle(10) and reviews == [1]
            user_md = (hermes_home / "memories" / "USER.md").read_text(encoding="utf-8")
            assert "User deploys on Fridays." in user_md
            assert "User prefers tabs over spaces." in user_md  # removal only proposed
            (proposal,) = PendingStore(hermes_home).list()
            assert proposal.origin == "background_review" and proposal.summary().startswith(
                "remove"
            )
            assert three.drain_notifications() == [
                "💾 Memory updated",
                "💾 Memory change proposed — review with /memory pending",
            ]
        if result.compressed:
            compressed_at = n
            break
    assert compressed_at is not None and compressed_at > 3
    assert three.session.compression.count == 1
    # a review started by an earlier turn may still be talking to the model: let it finish,
    # so the next request recorded is this turn's own
    assert three.review.wait_idle(10)
    before = len(fake_llm.chat_requests)
    reply = three.run_turn("What is my project called?")
    assert reply.reply == "Your project is 青龙." and reply.completed
    sent = fake_llm.chat_requests[before]["messages"]
    assert sent[0] == {"role": "system", "content": three.system_prompt}
    assert sent[-1] == {"role": "user", "content": "What is my project called?"}
    assert len(sent) < 2 * compressed_at + 1
    assert "青龙" in json.dumps(sent[1:-1], ensure_ascii=False)
    three.close()
