"""Nudge counters, derived from Turn objects alone."""

from __future__ import annotations

import json
from typing import Any

from hermes_core.layers.review.nudges import (
    NudgeCounters,
    iterations_after_last_call,
    successful_calls,
    update_counters,
)
from hermes_core.types import Turn

TOOLS = frozenset({"memory", "skill_manage", "session_search"})


def tool_round(call_id: str, name: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)},
    ]


def turn(*rounds: list[dict[str, Any]], completed: bool = True, number: int = 1) -> Turn:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "你好, do the thing"}]
    for r in rounds:
        messages.extend(r)
    messages.append({"role": "assistant", "content": "done"})
    names = tuple(c["function"]["name"] for m in messages for c in m.get("tool_calls") or [])
    return Turn(
        session_id="s",
        number=number,
        user_text="do the thing",
        reply="done",
        messages=tuple(messages),
        completed=completed,
        tool_names=names,
    )


def advance(counters: NudgeCounters, t: Turn, memory: int = 3, skills: int = 3) -> Any:
    return update_counters(
        counters, t, memory_interval=memory, skill_interval=skills, tool_names=TOOLS
    )


def test_memory_review_due_every_interval_user_turns() -> None:
    counters = NudgeCounters()
    due = [advance(counters, turn(), skills=0).memory for _ in range(7)]
    assert due == [False, False, True, False, False, True, False]


def test_successful_memory_call_resets_but_a_blocked_one_does_not() -> None:
    counters = NudgeCounters()
    advance(counters, turn(), skills=0)
    advance(counters, turn(), skills=0)
    assert counters.turns_since_memory == 2
    blocked = tool_round("c1", "memory", {"success": False, "error": "Blocked: ..."})
    assert advance(counters, turn(blocked), skills=0).memory  # 3rd turn: due
    advance(counters, turn(), skills=0)
    ok = tool_round("c2", "memory", {"success": True, "done": True})
    assert not advance(counters, turn(ok), skills=0).memory
    assert counters.turns_since_memory == 0


def test_zero_interval_disables_and_missing_tool_disables() -> None:
    counters = NudgeCounters()
    for _ in range(20):
        assert advance(counters, turn(), memory=0, skills=0).kind is None
    for _ in range(20):
        due = update_counters(
            counters, turn(), memory_interval=1, skill_interval=1, tool_names=frozenset()
        )
        assert due.kind is None


def test_skill_counter_counts_tool_iterations_and_skill_manage_resets_it() -> None:
    counters = NudgeCounters()
    search = tool_round("a", "session_search", {"success": True})
    assert not advance(counters, turn(search, search), memory=0).skills
    assert counters.iters_since_skill == 2
    assert advance(counters, turn(search), memory=0).skills  # 3 iterations
    assert counters.iters_since_skill == 0
    manage = tool_round("m", "skill_manage", {"success": True})
    advance(counters, turn(search, search), memory=0)
    assert not advance(counters, turn(search, manage), memory=0).skills
    assert counters.iters_since_skill == 0  # reset at the skill_manage iteration
    assert iterations_after_last_call(turn(manage, search, search), "skill_manage") == (2, True)


def test_both_due_is_combined_and_interrupted_turns_defer() -> None:
    counters = NudgeCounters()
    search = tool_round("a", "session_search", {"success": True})
    advance(counters, turn(search), memory=2, skills=2)
    deferred = advance(counters, turn(search, completed=False), memory=2, skills=2)
    assert deferred.kind is None
    assert advance(counters, turn(), memory=2, skills=2).kind == "combined"


def test_successful_calls_matches_results_by_call_id() -> None:
    messages = [
        *tool_round("x", "memory", {"success": True}),
        *tool_round("y", "memory", {"success": False}),
        *tool_round("z", "skill_manage", {"success": True}),
    ]
    assert successful_calls(messages, "memory") == 1
    assert (
        successful_calls([{"role": "tool", "tool_call_id": "x", "content": "not json"}], "memory")
        == 0
    )
