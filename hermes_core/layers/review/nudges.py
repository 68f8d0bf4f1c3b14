"""Nudge counters: when is a background review due?

Two counters per session, updated once per finished turn from the :class:`Turn` alone:

* **memory** — ``turns_since_memory`` counts user turns (only while ``memory.nudge_interval``
  > 0 and the ``memory`` tool is routed). A turn in which the ``memory`` tool *succeeded*
  (its tool result parses as ``{"success": true}``; blocked or failed calls do not count)
  resets it to 0 and makes no review due. Otherwise it grows by one; reaching the interval
  makes a memory review due and resets it.
* **skills** — ``iters_since_skill`` counts tool-calling iterations (assistant messages that
  carry ``tool_calls``; ``Turn.tool_iterations`` when the messages carry none) while
  ``skills.creation_nudge_interval`` > 0 and ``skill_manage`` is routed. A ``skill_manage``
  call resets it at that iteration; iterations after it count again. Checked at the end of
  the turn: reaching the interval makes a skill review due and resets it.

A due review is only *taken* for a turn that completed normally. For an interrupted turn the
counter stays at (or above) the interval, so the next completed turn takes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hermes_core.types import ChatMessage, Turn

MEMORY_TOOL = "memory"
SKILL_WRITE_TOOL = "skill_manage"

ReviewKind = Literal["memory", "skills", "combined", "flush"]
"""What a review looks for; ``flush`` is the one-shot save before context is lost (never
made due by the counters)."""


@dataclass
class NudgeCounters:
    """Per-session counters (kept in memory for the life of the session)."""

    turns_since_memory: int = 0
    iters_since_skill: int = 0


@dataclass(frozen=True)
class ReviewDue:
    """Which reviews a finished turn asks for."""

    memory: bool = False
    skills: bool = False

    @property
    def kind(self) -> ReviewKind | None:
        """``memory``, ``skills``, ``combined`` (both) or ``None``."""
        if self.memory and self.skills:
            return "combined"
        if self.memory:
            return "memory"
        if self.skills:
            return "skills"
        return None


def _calls(message: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(call_id, tool_name)`` of an assistant message's tool calls."""
    out: list[tuple[str, str]] = []
    for call in message.get("tool_calls") or []:
        if not isinstance(call, Mapping):
            continue
        function = call.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            out.append((str(call.get("id") or ""), function["name"]))
    return out


def tool_succeeded(content: Any) -> bool:
    """True when a tool result is a JSON object with ``success`` true (staged writes count:
    the model did act on memory)."""
    if not isinstance(content, str):
        return False
    try:
        payload = json.loads(content)
    except (json.JSONDecodeError, ValueError):
        return False
    return isinstance(payload, Mapping) and payload.get("success") is True


def successful_calls(messages: Sequence[ChatMessage], name: str) -> int:
    """How many calls of tool ``name`` in ``messages`` returned a successful JSON result."""
    wanted: set[str] = set()
    for message in messages:
        if message.get("role") == "assistant":
            wanted.update(call_id for call_id, tool in _calls(message) if tool == name)
    count = 0
    for message in messages:
        if message.get("role") == "tool" and message.get("tool_call_id") in wanted:
            count += tool_succeeded(message.get("content"))
    return count


def iterations_after_last_call(turn: Turn, name: str) -> tuple[int, bool]:
    """``(iterations counted, name was called)`` for the skill counter.

    Iterations are assistant messages with ``tool_calls``; when ``name`` is among an
    iteration's calls the count restarts after it.
    """
    iterations = [m for m in turn.messages if m.get("role") == "assistant" and _calls(m)]
    if not iterations:
        return max(turn.tool_iterations, 0), name in turn.tool_names
    count, called = 0, False
    for message in iterations:
        if any(tool == name for _, tool in _calls(message)):
            count, called = 0, True
            continue
        count += 1
    return count, called


def update_counters(
    counters: NudgeCounters,
    turn: Turn,
    *,
    memory_interval: int,
    skill_interval: int,
    tool_names: frozenset[str],
) -> ReviewDue:
    """Advance ``counters`` for ``turn`` and return what is due (see the module docstring)."""
    memory_due = False
    if memory_interval > 0 and MEMORY_TOOL in tool_names:
        if successful_calls(turn.messages, MEMORY_TOOL):
            counters.turns_since_memory = 0
        else:
            counters.turns_since_memory += 1
            if counters.turns_since_memory >= memory_interval and turn.completed:
                memory_due = True
                counters.turns_since_memory = 0
    skills_due = False
    if skill_interval > 0 and SKILL_WRITE_TOOL in tool_names:
        counted, called = iterations_after_last_call(turn, SKILL_WRITE_TOOL)
        counters.iters_since_skill = counted if called else counters.iters_since_skill + counted
        if counters.iters_since_skill >= skill_interval and turn.completed:
            skills_due = True
            counters.iters_since_skill = 0
    return ReviewDue(memory=memory_due, skills=skills_due)


__all__ = [
    "MEMORY_TOOL",
    "SKILL_WRITE_TOOL",
    "NudgeCounters",
    "ReviewDue",
    "ReviewKind",
    "iterations_after_last_call",
    "successful_calls",
    "tool_succeeded",
    "update_counters",
]
