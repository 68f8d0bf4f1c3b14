"""Where the head ends and the tail starts, and tool-pair repair after assembly.

A *tool-call group* is an assistant message with ``tool_calls`` followed by its ``tool``
results. Boundaries never split a group: the head is extended forward over trailing tool
results, and the tail start is moved back to the group's assistant message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_core.layers.compression.messages import (
    copy_messages,
    is_real_user,
    role,
    tool_call_ids,
)
from hermes_core.llm.tokens import estimate_message_tokens
from hermes_core.types import ChatMessage

STUB_RESULT = "[Result from earlier conversation — see context summary above]"
HARD_TAIL_FLOOR = 8
"""When the tail budget is exhausted, ``protect_last_n`` is capped at this many messages."""


@dataclass(frozen=True, slots=True)
class Boundaries:
    """``messages[:head_end]`` is kept, ``messages[head_end:tail_start]`` is summarised,
    ``messages[tail_start:]`` is kept. ``empty`` when there is nothing to summarise."""

    head_end: int
    tail_start: int

    @property
    def empty(self) -> bool:
        return self.tail_start <= self.head_end


def _group_start(messages: Sequence[Mapping[str, Any]], index: int, floor: int) -> int:
    """Move ``index`` back so it does not point into the middle of a tool-call group."""
    while index > floor and role(messages[index]) == "tool":
        index -= 1
    return index


def find_boundaries(
    messages: Sequence[Mapping[str, Any]],
    *,
    protect_first_n: int,
    protect_last_n: int,
    tail_budget_tokens: int,
    min_tail_user_messages: int = 1,
) -> Boundaries:
    """Head and tail boundaries of ``messages``.

    Head: the first ``protect_first_n`` messages (a leading system message always counts),
    extended over tool results that belong to it. Tail: walking backwards, messages are
    taken while they fit in ``tail_budget_tokens``; beyond the budget, still until
    ``min(protect_last_n, 8)`` messages are taken; between the two floors, up to
    ``protect_last_n`` messages while within 1.5 × the budget. The newest
    ``min_tail_user_messages`` real user messages are always in the tail. Finally the tail
    start moves back to the start of its tool-call group.
    """
    n = len(messages)
    head_end = min(max(protect_first_n, 1 if n and role(messages[0]) == "system" else 0), n)
    while head_end < n and role(messages[head_end]) == "tool":
        head_end += 1

    hard_floor = min(protect_last_n, HARD_TAIL_FLOOR)
    tokens = 0
    count = 0
    tail_start = n
    for index in range(n - 1, head_end - 1, -1):
        cost = estimate_message_tokens(messages[index])
        fits = tokens + cost <= tail_budget_tokens
        soft = count < protect_last_n and tokens + cost <= 1.5 * tail_budget_tokens
        if not (fits or count < hard_floor or soft):
            break
        tokens += cost
        count += 1  # noqa: SIM113 (the loop breaks on a budget, not on the count)
        tail_start = index

    users_seen = 0
    for index in range(n - 1, head_end - 1, -1):
        if is_real_user(messages[index]):
            users_seen += 1
            if index < tail_start:
                tail_start = index
            if users_seen >= min_tail_user_messages:
                break

    tail_start = _group_start(messages, tail_start, head_end)
    if tail_start < n and role(messages[tail_start]) == "tool":
        tail_start = head_end  # a group straddles the head: nothing can be summarised
    return Boundaries(head_end, max(tail_start, head_end))


def sanitize_tool_pairs(messages: Sequence[Mapping[str, Any]]) -> list[ChatMessage]:
    """Make tool messages valid for the OpenAI API.

    A ``tool`` result is kept only if it directly follows (within its group) an assistant
    message that made the call and has not been answered yet; otherwise it is dropped. Every
    call left without a result gets a stub result (:data:`STUB_RESULT`) right after its group.
    """
    out: list[ChatMessage] = []
    pending: list[str] = []  # unanswered call ids of the current group, in order

    def close_group() -> None:
        for call_id in pending:
            out.append({"role": "tool", "tool_call_id": call_id, "content": STUB_RESULT})
        pending.clear()

    for message in copy_messages(messages):
        if role(message) == "tool":
            call_id = str(message.get("tool_call_id", ""))
            if call_id in pending:
                pending.remove(call_id)
                out.append(message)
            continue  # orphan or duplicate: dropped
        close_group()
        out.append(message)
        if role(message) == "assistant":
            pending.extend(tool_call_ids(message))
    close_group()
    return out


__all__ = ["HARD_TAIL_FLOOR", "STUB_RESULT", "Boundaries", "find_boundaries", "sanitize_tool_pairs"]
