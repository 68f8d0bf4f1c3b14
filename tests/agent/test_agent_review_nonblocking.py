"""The background review never blocks the conversation: with a review model that sleeps
5 s, the next turn runs and returns while the review is still waiting (checked by the order
of events, not by timing), and the new turn cancels the review before it can write."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from scripted import ScriptedModel

from hermes_core.agent.loop import Agent
from hermes_core.testing.fake_llm import FakeLLMServer


class Log:
    def __init__(self) -> None:
        self.items: list[str] = []
        self._lock = threading.Lock()

    def add(self, item: str) -> None:
        with self._lock:
            self.items.append(item)

    def index(self, item: str) -> int:
        with self._lock:
            return self.items.index(item)


@pytest.fixture
def sleepy_review() -> Iterator[tuple[FakeLLMServer, Log, threading.Event]]:
    log = Log()
    wake = threading.Event()
    asked = threading.Event()

    def respond(body: Mapping[str, Any]) -> Any:
        if asked.is_set():
            return "Nothing to save."  # later reviews (turn 2 is due too) save nothing
        log.add("review asked")
        asked.set()
        wake.wait(5)  # the slow review model: sleeps up to 5 s
        log.add("review answered")
        return {
            "tool_calls": [
                {
                    "name": "memory",
                    "arguments": {"action": "add", "target": "user", "content": "User is slow."},
                }
            ]
        }

    with FakeLLMServer(model="review-model", responder=respond) as server:
        server.asked = asked  # type: ignore[attr-defined]
        try:
            yield server, log, wake
        finally:
            wake.set()


def test_next_turn_is_served_while_the_review_sleeps(
    make_agent: Any,
    model: ScriptedModel,
    fake_llm: FakeLLMServer,
    sleepy_review: tuple[FakeLLMServer, Log, threading.Event],
    hermes_home: Path,
) -> None:
    review_server, log, wake = sleepy_review
    agent: Agent = make_agent(
        memory={"nudge_interval": 1},
        llm={
            "auxiliary": {"review": {"base_url": review_server.base_url, "model": "review-model"}}
        },
    )
    assert agent.review is not None
    agent.run_turn("first message")
    log.add("turn 1 returned")
    assert review_server.asked.wait(10)  # type: ignore[attr-defined]
    agent.run_turn("second message")  # on_turn_start cancels the sleeping review
    log.add("turn 2 returned")
    wake.set()
    assert agent.review.wait_idle(10)
    assert log.index("review asked") < log.index("turn 2 returned") < log.index("review answered")
    assert agent.review.reports[0].cancelled
    user_md = hermes_home / "memories" / "USER.md"
    assert not user_md.exists() or "User is slow." not in user_md.read_text(encoding="utf-8")
    assert [r["messages"][-1]["content"] for r in fake_llm.chat_requests] == [
        "first message",
        "second message",
    ]
