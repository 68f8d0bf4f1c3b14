"""The review prompts and the digest of a long conversation.

The review prompt is sent as one extra *user* message after the conversation, so the
parent's frozen system prompt stays the cached prefix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.types import ChatMessage

from .nudges import ReviewKind

NOTHING_TO_SAVE = "Nothing to save."

MEMORY_REVIEW = (
    "[Background review — memory] Look back over the conversation above and decide whether "
    "anything belongs in persistent memory. Pay attention to:\n"
    "1. what the user revealed about themselves: who they are, what they want, their "
    "preferences and personal details worth remembering;\n"
    "2. what they expect from you: how you should behave, their work style, corrections "
    "they gave you.\n"
    "Save such facts with the memory tool as short declarative statements ('User prefers "
    "concise answers'), target 'user' for the user profile and 'memory' for your own notes. "
    "Do not save task progress, one-off details or things already in memory. If there is "
    f'nothing worth keeping, reply exactly "{NOTHING_TO_SAVE}" and stop.'
)

SKILL_REVIEW = (
    "[Background review — skills] Look back over the conversation above and decide whether "
    "a reusable procedure should be saved or improved as a skill. Good candidates: a "
    "non-trivial approach that needed trial and error or a change of course, or a case where "
    "the user wanted a different method or outcome than your first attempt. Prefer, in "
    "order: patching a skill that was used in this conversation, patching an existing skill "
    "that covers this class of task, adding a support file to one, and only then creating a "
    "new class-level skill (skill_manage create with a SKILL.md: YAML frontmatter with name "
    "and description, then the procedure). Read a skill with skill_view before changing it. "
    "Do not capture environment-specific failures, negative claims about tools, transient "
    "errors, one-off task narratives or unresolved problems. If there is nothing worth "
    f'keeping, reply exactly "{NOTHING_TO_SAVE}" and stop.'
)

COMBINED_REVIEW = (
    "[Background review — memory and skills] Look back over the conversation above and "
    "consider two kinds of durable knowledge.\n"
    "Memory (memory tool) is about WHO the user is: their persona, preferences, personal "
    "details and how they want you to work — saved as short declarative facts.\n"
    "Skills (skill_manage) are about HOW to do this class of task: a non-trivial procedure "
    "that needed trial and error or a change of course; patch an existing skill (after "
    "skill_view) before creating a new class-level one.\n"
    "Skip task progress, one-off narratives, transient errors and anything already saved. "
    f'If nothing is worth keeping, reply exactly "{NOTHING_TO_SAVE}" and stop.'
)

FLUSH_REVIEW = (
    "[Memory flush — context is about to be lost] The turns above are about to leave your "
    "context (the conversation is being compacted or closed). This is your one chance to "
    "save what they taught you that is worth keeping across sessions:\n"
    "- with the memory tool: facts about the user, their preferences and corrections, "
    "durable decisions and conventions of their projects (short declarative statements);\n"
    "- with skill_manage: a reusable procedure that needed trial and error (create only).\n"
    "Do not save task progress or anything already in memory, and do no other work. Be "
    f'quick. If nothing is worth keeping, reply exactly "{NOTHING_TO_SAVE}".'
)

PROMPTS: dict[ReviewKind, str] = {
    "memory": MEMORY_REVIEW,
    "skills": SKILL_REVIEW,
    "combined": COMBINED_REVIEW,
    "flush": FLUSH_REVIEW,
}

DIGEST_TAIL = 24
DIGEST_USER_CHARS = 300
DIGEST_ASSISTANT_CHARS = 200


def review_prompt(kind: ReviewKind) -> str:
    """The review instruction for ``kind``."""
    return PROMPTS[kind]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        ]
        return " ".join(parts)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def conversation(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The messages a review replays: system messages dropped (the review has its own), the
    rest copied."""
    return [dict(m) for m in messages if m.get("role") != "system"]


def tail_start(messages: Sequence[ChatMessage], keep: int) -> int:
    """Index where the verbatim tail of ``keep`` messages starts, moved back so it never
    starts on a tool result (its assistant call comes with it)."""
    start = max(len(messages) - keep, 0)
    while start > 0 and messages[start].get("role") == "tool":
        start -= 1
    return start


def digest(messages: Sequence[ChatMessage], keep: int = DIGEST_TAIL) -> list[ChatMessage]:
    """What a review routed to a *different* model replays: the last ``keep`` messages
    verbatim plus, when there is more, one synthetic user message summarising the older turns
    (user text ≤ 300 chars, assistant text ≤ 200, tool names)."""
    plain = conversation(messages)
    start = tail_start(plain, keep)
    if start == 0:
        return plain
    lines = ["[Digest of the earlier conversation, oldest first]"]
    for message in plain[:start]:
        role = message.get("role")
        text = _text(message.get("content"))
        if role == "user":
            lines.append(f"- user: {_clip(text, DIGEST_USER_CHARS)}")
        elif role == "assistant":
            tools = [
                str(call.get("function", {}).get("name", ""))
                for call in message.get("tool_calls") or []
                if isinstance(call, Mapping)
            ]
            if text.strip():
                lines.append(f"- assistant: {_clip(text, DIGEST_ASSISTANT_CHARS)}")
            if tools:
                lines.append(f"- assistant used tools: {', '.join(tools)}")
    return [{"role": "user", "content": "\n".join(lines)}, *plain[start:]]


__all__ = [
    "COMBINED_REVIEW",
    "DIGEST_TAIL",
    "FLUSH_REVIEW",
    "MEMORY_REVIEW",
    "NOTHING_TO_SAVE",
    "PROMPTS",
    "SKILL_REVIEW",
    "conversation",
    "digest",
    "review_prompt",
    "tail_start",
]
